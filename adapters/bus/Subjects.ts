/**
 * Subject, stream, consumer and KV bucket names, derived from CANDOR_NATS_PREFIX so deployments (and
 * test runs) can share one NATS server. The only module that knows the default prefix or how a name
 * is built from one: everything else asks here. An agent's events always land in the same partition, so one actor sees
 * them in order: partition = the first four bytes of SHA-256(agent_id), big-endian, mod P. Stable
 * across processes and versions (never `String.hashCode`-style or randomised hashing).
 *
 *   <prefix>.events.<partition>.<agent_id>        the gateway's events (stream <PREFIX>_EVENTS)
 *   <prefix>.alerts.…  <prefix>.containment.…     the actors' decisions (stream <PREFIX>_DECISIONS)
 *   <prefix>.dead.events.<partition>.<agent_id>   events given up after max-deliver (stream <PREFIX>_DEAD),
 *                                                 recorded by the workers through durable consumer `dead-letters`
 *   <prefix>-agent-state, <prefix>-partition-leases   KV buckets: agents' settings and nudges, partition leases
 *   <prefix>.feed.<org_id|_>.<agent_id|_>.<type>  catalogue events (stream <PREFIX>_FEED, docs/stream.md)
 *   <prefix>-feed-index                           KV bucket: event id → its sequence in <PREFIX>_FEED
 */
import { createHash } from "node:crypto"

/** CANDOR_NATS_PREFIX when unset. */
export const DEFAULT_PREFIX = "candor"

/** Fixed for the life of a deployment: changing it moves agents between partitions. */
export const PARTITIONS = 64

export const partitionOf = (agentId: string, partitions: number = PARTITIONS): number =>
  createHash("sha256").update(agentId, "utf8").digest().readUInt32BE(0) % partitions

/** `<prefix>.events.<partition>.<agent_id>`; the prefix is CANDOR_NATS_PREFIX (default `candor`). */
export const eventSubject = (
  agentId: string,
  prefix: string = DEFAULT_PREFIX,
  partitions: number = PARTITIONS
): string => `${prefix}.events.${partitionOf(agentId, partitions)}.${agentId}`

/** Every event of one partition: the filter of its consumer. */
export const partitionFilter = (prefix: string, partition: number): string => `${prefix}.events.${partition}.>`

/** The actors' decisions about an agent: `<prefix>.alerts.<agent_id>`, `<prefix>.containment.<agent_id>`. */
export const decisionSubject = (prefix: string, topic: "alerts" | "containment", agentId: string): string =>
  `${prefix}.${topic}.${agentId}`

/** The partition an event subject names, or undefined for any other subject. */
export const partitionOfSubject = (subject: string, prefix: string): number | undefined => {
  // Canonical decimal only: `07` would be stored but match no consumer's filter (`….events.7.>`).
  const match = /^(0|[1-9]\d*)\.[^.]+/.exec(
    subject.startsWith(`${prefix}.events.`) ? subject.slice(prefix.length + 8) : ""
  )
  return match === null ? undefined : Number(match[1])
}

/** `<prefix>.events.3.agt-x` → `<prefix>.dead.events.3.agt-x`. */
export const deadLetterSubject = (subject: string, prefix: string): string =>
  `${prefix}.dead.${subject.slice(prefix.length + 1)}`

/** The agent an event subject names (`<prefix>.events.<p>.<agent_id>`; an agent id may hold dots), else undefined. */
export const agentOfEventSubject = (subject: string, prefix: string): string | undefined => {
  const partition = partitionOfSubject(subject, prefix)
  if (partition === undefined) return undefined
  return subject.slice(`${prefix}.events.${partition}.`.length) || undefined
}

/** The durable consumer the workers share to record every dead letter (streams/DeadLetters.ts). */
export const DEAD_LETTER_CONSUMER = "dead-letters"

/** The durable consumer of a partition, zero-padded so names sort: `events-p07`. */
export const consumerName = (partition: number, partitions: number = PARTITIONS): string =>
  `events-p${String(partition).padStart(Math.max(2, String(partitions - 1).length), "0")}`

export interface StreamNames {
  readonly events: string
  readonly decisions: string
  readonly dead: string
}

/** `candor` → `CANDOR_EVENTS`, `CANDOR_DECISIONS`, `CANDOR_DEAD`. */
export const streamNames = (prefix: string): StreamNames => {
  const base = prefix.toUpperCase()
  return { events: `${base}_EVENTS`, decisions: `${base}_DECISIONS`, dead: `${base}_DEAD` }
}

/** The KV bucket of agents' settings and nudges, written by the workers and read by the gateways. */
export const agentStateBucket = (prefix: string): string => `${prefix}-agent-state`

/** Human approval's settled statuses (ApprovalSignalKv.ts): key = approval id, value = its final status. */
export const approvalBucket = (prefix: string): string => `${prefix}-approvals`

/** The KV bucket of the workers' partition leases. */
export const leaseBucket = (prefix: string): string => `${prefix}-partition-leases`

/** The subjects each stream stores. */
export const streamSubjects = (prefix: string): { readonly [K in keyof StreamNames]: ReadonlyArray<string> } => ({
  events: [`${prefix}.events.>`],
  decisions: [`${prefix}.alerts.>`, `${prefix}.containment.>`],
  dead: [`${prefix}.dead.>`]
})

/** Which stream stores a subject, or undefined when none does (such a publish cannot be durable). */
export const streamOf = (subject: string, prefix: string): keyof StreamNames | undefined => {
  if (!isSubject(subject) || !subject.startsWith(`${prefix}.`)) return undefined
  const [kind, ...rest] = subject.slice(prefix.length + 1).split(".")
  if (rest.length === 0) return undefined
  if (kind === "events") return partitionOfSubject(subject, prefix) === undefined ? undefined : "events"
  if (kind === "alerts" || kind === "containment") return "decisions"
  return kind === "dead" ? "dead" : undefined
}

/** Dot-separated non-empty tokens without wildcards or whitespace: a subject one can publish to. */
export const isSubject = (subject: string): boolean => /^[^.*>\s]+(\.[^.*>\s]+)*$/.test(subject)

/**
 * Subscriptions take a prefix. One ending in `.` means everything below it (`candor.alerts.`);
 * otherwise the subject itself and everything below it (`candor.alerts`). Both layers agree on this,
 * since NATS can only match whole tokens.
 */
export const matchesPrefix = (subject: string, subjectPrefix: string): boolean =>
  subjectPrefix.endsWith(".")
    ? subject.startsWith(subjectPrefix)
    : subject === subjectPrefix || subject.startsWith(`${subjectPrefix}.`)

/** The NATS subscriptions equivalent to `matchesPrefix`. */
export const wildcardsOf = (subjectPrefix: string): ReadonlyArray<string> =>
  subjectPrefix.endsWith(".") ? [`${subjectPrefix}>`] : [subjectPrefix, `${subjectPrefix}.>`]

/** The stream of catalogue events (adapters/bus/EventFeedJetStream.ts): `candor` → `CANDOR_FEED`. */
export const feedStreamName = (prefix: string): string => `${prefix.toUpperCase()}_FEED`

/** Every subject of the feed stream. */
export const feedFilter = (prefix: string): string => `${prefix}.feed.>`

/**
 * One subject token for an id: kept as is when it is made of `[A-Za-z0-9_-]` (and is not `_`, which
 * stands for "none"), else `=` and the base64url of its UTF-8 bytes (an agent id may hold dots).
 */
export const feedToken = (id: string | null | undefined): string =>
  id === null || id === undefined || id === ""
    ? "_"
    : /^[A-Za-z0-9_-]+$/.test(id) && id !== "_"
      ? id
      : `=${Buffer.from(id, "utf8").toString("base64url")}`

/**
 * `<prefix>.feed.<org_id or _>.<agent_id or _>.<type>`: the type last (it has dots of its own), so
 * `candor.feed.*.*.verdict.>` selects every verdict event and `candor.feed.<org>.>` one organization's.
 */
export const feedSubject = (
  prefix: string,
  event: { readonly org_id: string | null; readonly agent_id?: string | undefined; readonly type: string }
): string => `${prefix}.feed.${feedToken(event.org_id)}.${feedToken(event.agent_id)}.${event.type}`

/** The feed's durable consumers: `webhooks` → `feed-webhooks`. */
export const feedConsumerName = (durable: string): string => `feed-${durable}`

/** The KV bucket that finds an event's position in the feed stream by its id (`Last-Event-ID`). */
export const feedIndexBucket = (prefix: string): string => `${prefix}-feed-index`

/** Requests for human approval from gateways without a store (ApprovalDeskNats.ts), answered by one process with it. */
export const approvalDeskSubject = (prefix: string): string => `${prefix}.approvals.desk`
