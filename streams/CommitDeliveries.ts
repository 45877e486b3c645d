/**
 * One batch of a partition's deliveries, committed (docs/architecture.md, "How a response flows", step 4):
 * decode, drop what is already stored (redeliveries), attest every event with its agent's actor,
 * commit all in one transaction, and only then ack. Nothing is acked that is not committed, and
 * nothing committed is committed twice.
 *
 * The gateway's enforcement records (`GatewayEnforcement`: a 403, a nudge injected) travel among the
 * events: each attempt stores them first (once per record id: a redelivery stores nothing), so they
 * too are acked only once stored, and held or handed back with the batch.
 *
 * When the commit does not go through:
 * - a conflict (another worker moved an agent's chain head) forgets those actors and tries again
 *   from the store, up to `conflictRetries` times, then hands the batch back (nak);
 * - the database cannot be reached (an outage): the batch is held and tried again with backoff for
 *   as long as the outage lasts, its deliveries kept alive (`working`) so that they are neither
 *   redelivered nor counted towards the dead-letter subject: an outage loses and refuses nothing;
 * - the database answers but refuses the batch: tried again `conflictRetries` times, then handed
 *   back with a delay that grows with each delivery, so that only a batch that keeps failing
 *   reaches the bus's dead-letter subject.
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import { frontierRoot } from "../core/Merkle.js"
import { GatewayEnforcement, GatewayEvent } from "../core/schema/Event.js"
import type { SigningKey } from "../core/Signing.js"
import type { Delivery } from "../adapters/bus/Bus.js"
import { type CommitInput, type EnforcementDraft, Store, type StoreError } from "../adapters/store/Store.js"
import { type AgentActors, sessionKey } from "./AgentActors.js"
import { attestEvent, signedTreeHead } from "./AttestEvent.js"
import { undecodableReason } from "./DeadLetters.js"
import type { WorkerTracing } from "./CheckpointTraces.js"
import { parseTraceParent } from "../adapters/tracing/TraceParent.js"

export interface CommitOptions {
  readonly key: SigningKey
  readonly logOrigin: string
  readonly subjectPrefix: string
  /** Attempts after a conflict, or after a refusal by a reachable database, before the batch is handed back. */
  readonly conflictRetries: number
  /**
   * The first wait before a failed commit is tried again (it doubles up to 5 s); also the redelivery
   * delay of a batch handed back on its first delivery, growing fourfold with each further delivery.
   */
  readonly retryDelayMs: number
  /** How often the deliveries of a batch still in hand are kept alive: well within the bus's ack wait (30 s). */
  readonly keepAliveMs: number
  /** When the process exports traces: each event's consume, attest and commit spans (docs/tracing.md). */
  readonly tracing?: WorkerTracing | undefined
  /**
   * The deliveries may hold events committed already though delivered for the first time (a consumer
   * just rewound after a takeover): their ids are looked up before the first attempt, as a
   * redelivery's are.
   */
  readonly lookUpStored?: boolean | undefined
}

/** One event's attestation, as its span shows it. */
interface Attested {
  readonly start: bigint
  readonly end: bigint
  readonly verdict: string
  readonly position: number
}

const MAX_RETRY_WAIT_MS = 5_000
const MAX_REDELIVERY_DELAY_MS = 60_000

const redeliveryDelay = (delivery: Delivery, options: CommitOptions): number =>
  Math.min(options.retryDelayMs * 4 ** Math.max(0, delivery.deliveryCount - 1), MAX_REDELIVERY_DELAY_MS)

const decodeEvent = Schema.decodeUnknownEither(GatewayEvent)
const decodeEnforcement = Schema.decodeUnknownEither(GatewayEnforcement)

/** Whether a payload says it is an enforcement record (then decoded as one; anything else as an event). */
const isEnforcement = (payload: unknown): boolean =>
  typeof payload === "object" &&
  payload !== null &&
  (payload as { readonly type?: unknown }).type === "gateway.enforcement"

/** Signs the tree head of each agent's last input: one signature per agent and batch. */
const withTreeHeads = (inputs: Array<CommitInput>, env: Pick<CommitOptions, "key" | "logOrigin">): void => {
  const signed = new Set<string>()
  for (let i = inputs.length - 1; i >= 0; i--) {
    const { attestation } = inputs[i]!
    const agentId = attestation.link.entry.agent_id
    if (signed.has(agentId)) continue
    signed.add(agentId)
    const { frontier } = attestation.state
    inputs[i] = { ...inputs[i]!, treeHead: signedTreeHead(agentId, frontier.size, frontierRoot(frontier), env) }
  }
}

export interface BatchOutcome {
  readonly committed: number
  readonly duplicates: number
  readonly invalid: number
  /** Handed back (nak) for redelivery. */
  readonly retried: number
  /** The outbox kinds the commit wrote items of: only their relays need waking. */
  readonly outboxKinds: ReadonlySet<string>
  /**
   * The agents whose logs the commit extended, and those whose events were found stored already:
   * their reputations are due a recomputation. A stored event's committer may have died (or been
   * stopped) between its commit and marking its agent, and its redelivery is the last chance to mark
   * it before the periodic sweep; a recomputation of an agent already counted costs a few reads.
   */
  readonly agentIds: ReadonlySet<string>
}

/** A batch committed: what `attempt` found, before the acks. */
type Committed = Omit<BatchOutcome, "invalid" | "retried">

const NO_KINDS: ReadonlySet<string> = new Set()
const NO_AGENTS: ReadonlySet<string> = new Set()

const outboxKindsOf = (inputs: ReadonlyArray<CommitInput>): ReadonlySet<string> => {
  let kinds: Set<string> | undefined
  for (const input of inputs) for (const draft of input.outbox) (kinds ??= new Set()).add(draft.kind)
  return kinds ?? NO_KINDS
}

export const commitDeliveries = (
  actors: AgentActors,
  deliveries: ReadonlyArray<Delivery>,
  options: CommitOptions
): Effect.Effect<BatchOutcome, never, Store> =>
  Effect.gen(function* () {
    const store = yield* Store
    const events: Array<{ readonly delivery: Delivery; readonly event: GatewayEvent }> = []
    const records: Array<{ readonly delivery: Delivery; readonly draft: EnforcementDraft }> = []
    let invalid = 0
    for (const delivery of deliveries) {
      const decoded = isEnforcement(delivery.payload)
        ? Either.map(decodeEnforcement(delivery.payload), (enforcement) => {
            records.push({ delivery, draft: { record: enforcement.record, mode: enforcement.mode } })
          })
        : Either.map(decodeEvent(delivery.payload), (event) => {
            events.push({ delivery, event })
          })
      if (Either.isLeft(decoded)) {
        invalid++
        // Dead-lettered, never retried: no delivery of these bytes will decode. The reason names the
        // fields, never their values (the payload); the workers record it as an alarm (DeadLetters.ts).
        yield* delivery.deadLetter(undecodableReason(decoded.left)).pipe(
          Effect.catchAll(() => delivery.nak(options.retryDelayMs)),
          Effect.ignore
        )
      }
    }
    if (events.length === 0 && records.length === 0)
      return { committed: 0, duplicates: 0, invalid, retried: 0, outboxKinds: NO_KINDS, agentIds: NO_AGENTS }

    // First deliveries skip the lookup of already stored ids: the gateway publishes each checkpoint
    // once, and a duplicate that still gets through (a republish after an outage, which the bus does
    // not deduplicate when it travels in a batch) is caught by the commit (a taken checkpoint id is a
    // conflict), after which the retry looks it up.
    const firstDelivery = !options.lookUpStored && events.every(({ delivery }) => delivery.deliveryCount <= 1)
    // Tracing: when the batch arrived, each event's last attestation, the last commit's start and end.
    const tracing = options.tracing
    const receivedNs = tracing === undefined ? 0n : tracing.recorder.nowNs()
    const attested = tracing === undefined ? undefined : new Map<string, Attested>()
    let committed: readonly [bigint, bigint] | undefined
    const attempt = (lookUp: boolean): Effect.Effect<Committed | undefined, StoreError> =>
      Effect.gen(function* () {
        // Stored once per record id, whichever attempt or delivery stores them first.
        if (records.length > 0) yield* store.recordEnforcements(records.map(({ draft }) => draft))
        const stored = lookUp
          ? yield* store.existingCheckpoints(events.map(({ event }) => event.checkpoint.checkpoint_id))
          : new Set()
        const now = new Date()
        // One after the other: almost always both are found in memory, and a fork per batch costs more.
        const states = yield* actors.getAll(
          events.map(({ event }) => event.agent_id),
          now.getTime()
        )
        const sessions = yield* actors.sessionAll(
          events.map(({ event }) => event),
          now.getTime()
        )
        const env = { ...options, now }
        const seen = new Set<string>()
        const inputs: Array<CommitInput> = []
        for (const { event } of events) {
          const id = event.checkpoint.checkpoint_id
          if (stored.has(id) || seen.has(id)) continue
          seen.add(id)
          const session = sessionKey(event.agent_id, event.session_id)
          const start = attested === undefined ? 0n : tracing!.recorder.nowNs()
          const step = attestEvent(states.get(event.agent_id)!, sessions.get(session)!, event, env)
          if (attested !== undefined)
            attested.set(id, {
              start,
              end: tracing!.recorder.nowNs(),
              verdict: step.input.checkpoint.verdict,
              position: step.input.attestation.link.entry.position
            })
          states.set(event.agent_id, step.actor)
          sessions.set(session, step.session)
          inputs.push(step.input)
        }
        withTreeHeads(inputs, env)
        const commitStart = tracing === undefined ? 0n : tracing.recorder.nowNs()
        const result = yield* actors.commit(inputs)
        if (tracing !== undefined) committed = [commitStart, tracing.recorder.nowNs()]
        if (result._tag === "Conflict") {
          for (const agentId of result.agentIds) actors.forget(agentId)
          for (const { event } of events)
            if (result.agentIds.includes(event.agent_id)) actors.forgetSession(event.agent_id, event.session_id)
          return undefined
        }
        for (const state of states.values()) actors.put(state, now.getTime())
        for (const [key, state] of sessions) actors.putSession(key, state, now.getTime())
        return {
          committed: inputs.length,
          duplicates: events.length - inputs.length,
          outboxKinds: outboxKindsOf(inputs),
          agentIds: new Set(events.map(({ event }) => event.agent_id))
        }
      })

    /**
     * Each event's spans, once its batch is settled: consume (from the batch's arrival to its ack,
     * a child of the gateway's publish through the delivery's `traceparent`), attest and commit
     * (the transaction that stored it, shared with the batch). Handed back: consume only, failed.
     */
    const recordSpans = (failure: string | undefined) =>
      Effect.sync(() => {
        if (tracing === undefined) return
        const { checkpoints, recorder } = tracing
        const endNs = recorder.nowNs()
        for (const { delivery, event } of events) {
          const id = event.checkpoint.checkpoint_id
          const consume = recorder.start("candor.worker.consume", {
            parent: parseTraceParent(delivery.traceparent),
            kind: "consumer",
            startNs: receivedNs,
            attributes: {
              "candor.agent_id": event.agent_id,
              "candor.checkpoint_id": id,
              "messaging.operation.type": "process",
              "messaging.destination.name": delivery.subject,
              "messaging.batch.message_count": deliveries.length,
              "candor.delivery_count": delivery.deliveryCount
            }
          })
          const attest = attested?.get(id)
          if (attest !== undefined)
            recorder.record("candor.worker.attest", {
              parent: consume,
              startNs: attest.start,
              endNs: attest.end,
              attributes: { "candor.verdict": attest.verdict, "candor.chain_position": attest.position }
            })
          if (failure === undefined && committed !== undefined)
            recorder.record("candor.worker.commit", {
              parent: consume,
              kind: "client",
              startNs: committed[0],
              endNs: committed[1],
              attributes: { "candor.batch.events": events.length, "db.operation.name": "commit" }
            })
          recorder.end(consume, endNs, failure)
          if (failure === undefined) checkpoints.note(id, consume)
        }
      })

    /** Settles every delivery at once: acks and naks are plain publishes, no fiber each. */
    const settleAll = (settle: (delivery: Delivery) => Effect.Effect<void, unknown>) =>
      Effect.zipRight(
        Effect.forEach(events, ({ delivery }) => Effect.ignore(settle(delivery)), { discard: true }),
        Effect.forEach(records, ({ delivery }) => Effect.ignore(settle(delivery)), { discard: true })
      )

    const handBack = (reason: string) =>
      Effect.gen(function* () {
        for (const { event } of events) {
          actors.forget(event.agent_id)
          actors.forgetSession(event.agent_id, event.session_id)
        }
        yield* Effect.logWarning("batch not committed; handed back for redelivery").pipe(
          Effect.annotateLogs({ reason, events: events.length })
        )
        yield* settleAll((delivery) => delivery.nak(redeliveryDelay(delivery, options)))
        yield* recordSpans("handed_back")
        return {
          committed: 0,
          duplicates: 0,
          invalid,
          retried: events.length + records.length,
          outboxKinds: NO_KINDS,
          agentIds: NO_AGENTS
        }
      })

    /** After a first attempt that did not commit: again (after a failure, with backoff) until committed or handed back. */
    const retry = (first: Either.Either<Committed | undefined, StoreError>) =>
      Effect.gen(function* () {
        let done = first
        let conflicts = 0
        let refusals = 0
        let outage = false
        let wait = options.retryDelayMs
        for (;;) {
          if (Either.isRight(done) && done.right !== undefined) {
            if (outage)
              yield* Effect.logInfo("store reachable again; batch committed").pipe(
                Effect.annotateLogs({ events: events.length })
              )
            return done.right
          }
          if (Either.isRight(done)) {
            if (++conflicts > options.conflictRetries) return yield* handBack("conflict")
          } else {
            if (Either.isRight(yield* Effect.either(store.ping))) {
              if (++refusals > options.conflictRetries) return yield* handBack(`${done.left.operation} failed`)
            } else if (!outage) {
              outage = true
              yield* Effect.logWarning("store unreachable; holding the batch until it is back").pipe(
                Effect.annotateLogs({ events: events.length, operation: done.left.operation })
              )
            }
            yield* Effect.sleep(wait)
            wait = Math.min(wait * 2, MAX_RETRY_WAIT_MS)
          }
          done = yield* Effect.either(attempt(true))
        }
      })

    /** A commit is acked; an outcome with `retried` was handed back already. */
    const settled = (outcome: Committed | BatchOutcome) =>
      "retried" in outcome
        ? Effect.succeed(outcome)
        : // Acks after commit: a crash between the two only means a redelivery, which is a duplicate.
          Effect.as(
            Effect.zipRight(
              settleAll((delivery) => delivery.ack),
              recordSpans(undefined)
            ),
            { ...outcome, invalid, retried: 0 }
          )

    const first = yield* Effect.either(attempt(!firstDelivery))
    if (Either.isRight(first) && first.right !== undefined) return yield* settled(first.right)
    // Not committed at once: while the batch is held (an outage waited out), its deliveries are
    // kept from the ack wait.
    return yield* Effect.scoped(
      Effect.gen(function* () {
        yield* settleAll((delivery) => delivery.working).pipe(
          Effect.schedule(Schedule.spaced(options.keepAliveMs)),
          Effect.forkScoped
        )
        return yield* Effect.flatMap(retry(first), settled)
      })
    )
  })
