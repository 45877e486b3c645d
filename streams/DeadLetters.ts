/**
 * Dead letters are an alarm, never silence (issue 24). Whatever the bus copies to its dead-letter
 * subject (an event its worker could not decode, one delivered the most times it may, bytes that are
 * not JSON) is announced on `Bus.consumeDeadLetters`; the workers share that durable consumption and
 * record each notice here, the one write path of a dead letter:
 *
 * - the row (`DeadLetterRepo`: subject, the agent the subject names, reason, deliveries, time) and its
 *   `pipeline.dead_lettered` catalogue event, for the agent's organization, in one transaction, so
 *   neither is ever without the other; the event relay then brings it to webhooks and the live stream;
 * - once stored, `candor_dead_letters_total{cause}` and one warning log line (no payload);
 * - then the notice is acked. A notice that cannot be recorded (the store is down) is handed back and
 *   comes again; its id makes the second recording a no-op, so a crash between commit and ack
 *   neither loses nor doubles it.
 *
 * Never the payload: a notice carries none (the bus reads only its headers), and the worker's reason
 * for an undecodable event names the fields that failed, never their values (`undecodableReason`).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as ParseResult from "effect/ParseResult"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { createHash } from "node:crypto"
import { deadLetteredEvent } from "../core/EventData.js"
import { newEnvelope } from "../core/Events.js"
import type { DeadLetter } from "../core/schema/DeadLetter.js"
import { AgentId, DateTimeString } from "../core/schema/Ids.js"
import { Bus, type DeadLetterNotice } from "../adapters/bus/Bus.js"
import { agentOfEventSubject } from "../adapters/bus/Subjects.js"
import { countDeadLetter, type DeadLetterCause } from "../adapters/metrics/PipelineMetrics.js"
import { DeadLetterRepo } from "../adapters/store/DeadLetterRepo.js"
import { Store, StoreError } from "../adapters/store/Store.js"
import { transaction } from "../adapters/store/Transaction.js"
import { eventDraft } from "../adapters/store/EventOutbox.js"

/** How a reason begins when the worker refused an event it could not decode. */
export const UNDECODABLE = "not a gateway event"

/** At most this many failed fields are named. */
const MAX_PATHS = 4
/** A path keeps at most this many segments: the schema's own fields (deeper ones may be a record's keys). */
const MAX_DEPTH = 3
/** A schema field name; anything else in a path (a key the payload chose) is shown as `*`. */
const FIELD = /^[a-z][a-z0-9_]{0,63}$/

/**
 * Why an event did not decode, without anything of it: the paths of the fields that failed (the
 * schema's field names and indices only, at most three deep) and the kind of each failure, e.g.
 * `not a gateway event: session_id (Type), checkpoint.session_id (Type)`. ParseResult's formatters
 * quote the values (`actual "a b"`), which are the payload: a header a caller chose.
 */
export const undecodableReason = (error: ParseResult.ParseError): string => {
  const issues = ParseResult.ArrayFormatter.formatErrorSync(error)
  const named = new Set<string>()
  for (const issue of issues) {
    const segments = issue.path
      .slice(0, MAX_DEPTH)
      .map((segment) =>
        typeof segment === "number" ? String(segment) : FIELD.test(String(segment)) ? String(segment) : "*"
      )
    named.add(`${segments.length === 0 ? "(event)" : segments.join(".")} (${issue._tag})`)
    if (named.size === MAX_PATHS) break
  }
  const more = issues.length > named.size ? ", …" : ""
  return `${UNDECODABLE}: ${[...named].join(", ")}${more}`
}

/** The metric's label for a reason: a fixed list, never the reason's text. */
export const deadLetterCause = (reason: string): DeadLetterCause =>
  reason.startsWith(UNDECODABLE)
    ? "undecodable"
    : /^delivered \d+ times$/.test(reason)
      ? "delivery_limit"
      : reason === "not JSON"
        ? "not_json"
        : reason === "not a batch"
          ? "not_a_batch"
          : "other"

/** `dl-` + 32 hex of SHA-256 of the notice's id: the same for every delivery of one notice. */
export const deadLetterId = (noticeId: string): string =>
  `dl-${createHash("sha256").update(`candor/v1/dead-letter\0${noticeId}`, "utf8").digest("hex").slice(0, 32)}`

const isAgentId = Schema.is(AgentId)
const isTime = Schema.is(DateTimeString)

/** The record of a notice, bounded (a subject and a reason are short; a notice could say otherwise). */
export const deadLetterOf = (
  notice: Omit<DeadLetterNotice, "ack" | "nak">,
  subjectPrefix: string,
  now: Date
): DeadLetter => {
  const agentId = agentOfEventSubject(notice.subject, subjectPrefix)
  return {
    dead_letter_id: deadLetterId(notice.id),
    subject: notice.subject.slice(0, 512),
    agent_id: agentId !== undefined && isAgentId(agentId) ? agentId : null,
    reason: notice.reason.slice(0, 512),
    deliveries: Number.isSafeInteger(notice.deliveries) && notice.deliveries >= 0 ? notice.deliveries : 0,
    dead_lettered_at: isTime(notice.at) ? notice.at : now.toISOString()
  }
}

/**
 * The one write path of a dead letter: its row and its event in one transaction; counted and logged
 * once, when new. Answers whether it was new (an event was written: the event relay has work).
 */
export const recordDeadLetter = (entry: DeadLetter) =>
  Effect.gen(function* () {
    const repo = yield* DeadLetterRepo
    const store = yield* Store
    const sql = yield* SqlClient.SqlClient
    const now = new Date(yield* Clock.currentTimeMillis)
    const orgId = entry.agent_id === null ? null : yield* repo.orgOfAgent(entry.agent_id)
    const created = yield* transaction(
      sql,
      Effect.flatMap(repo.insert(entry), (inserted) =>
        inserted
          ? Effect.as(store.enqueueOutbox([eventDraft(newEnvelope(deadLetteredEvent(entry, orgId, now)))]), true)
          : Effect.succeed(false)
      )
    ).pipe(
      Effect.catchTag("SqlError", (cause) => Effect.fail(new StoreError({ operation: "recordDeadLetter", cause })))
    )
    if (created) {
      yield* countDeadLetter(deadLetterCause(entry.reason))
      yield* Effect.logWarning("gateway event dead-lettered: no checkpoint will come of it").pipe(
        Effect.annotateLogs({
          dead_letter_id: entry.dead_letter_id,
          subject: entry.subject,
          agent_id: entry.agent_id,
          reason: entry.reason
        })
      )
    }
    return created
  })

export interface DeadLetterRecorderOptions {
  readonly subjectPrefix: string
  /** How long a notice that could not be recorded waits before it comes again. */
  readonly retryDelayMs: number
  /** Woken when an event was written, so the event relay sends it now rather than at its next poll. */
  readonly wakeEvents: Queue.Enqueue<void>
}

/** Records every dead letter the bus announces, until its scope closes; restarts itself after a failure. */
export const runDeadLetterRecorder = (options: DeadLetterRecorderOptions) =>
  Effect.gen(function* () {
    const bus = yield* Bus
    const record = (notice: DeadLetterNotice) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        recordDeadLetter(deadLetterOf(notice, options.subjectPrefix, new Date(now)))
      ).pipe(
        Effect.tap((created) => (created ? Queue.offer(options.wakeEvents, undefined) : Effect.void)),
        Effect.zipRight(Effect.ignore(notice.ack)),
        Effect.catchAll((error) =>
          Effect.logWarning("dead letter not recorded; handed back").pipe(
            Effect.annotateLogs({ subject: notice.subject, error: error._tag }),
            Effect.zipRight(Effect.ignore(notice.nak(options.retryDelayMs)))
          )
        )
      )
    return yield* bus.consumeDeadLetters.pipe(
      Stream.runForEach(record),
      Effect.catchAllCause((cause) =>
        Effect.logError("dead-letter recorder stopped; restarting").pipe(Effect.annotateLogs({ cause: cause._tag }))
      ),
      Effect.repeat(Schedule.spaced("1 second")),
      Effect.asVoid
    )
  })
