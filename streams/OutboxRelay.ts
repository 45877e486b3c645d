/**
 * Sends what a commit wrote to the outbox (decisions for the bus, webhooks, prover jobs) after the
 * commit, so nothing is fire-and-forget: an item is completed only when its handler succeeded, and
 * a failed one is retried with backoff and finally kept as dead, never dropped. Relays wake when a
 * commit signals them and also poll, so items left by a crash are sent after a restart.
 *
 * Handlers decode their payload with `decodePayload` and the kind's schema. A payload that does not
 * decode (written by another version, or damaged) cannot be sent by any retry: it is logged and kept
 * as dead at once.
 *
 * A handler with a schedule of its own (webhook deliveries) says what a failure means with a tagged
 * error: `RetryIn` (try again after so long, whatever the relay's backoff and attempt limit) or
 * `FinalFailure` (no retry: kept as dead at once). Any other failure follows the relay's backoff.
 */
import * as Cause from "effect/Cause"
import * as Data from "effect/Data"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import * as Exit from "effect/Exit"
import { type OutboxItem, Store, type StoreError } from "../adapters/store/Store.js"
import type { WorkerTracing } from "./CheckpointTraces.js"

export interface RelayOptions {
  readonly kind: string
  readonly batch: number
  /** A claimed item is invisible to other relays this long. */
  readonly leaseMs: number
  readonly maxAttempts: number
  /** Delay after the n-th failed attempt (`attempts` counts the one that just failed, from 1). */
  readonly backoffMs: (attempts: number) => number
  readonly pollInterval: Duration.DurationInput
}

/** 1 s, 4 s, 16 s, … (Mnemom's webhook schedule), capped at 5 minutes. */
export const exponentialBackoff = (attempts: number): number => Math.min(1000 * 4 ** Math.max(0, attempts - 1), 300_000)

export const relayDefaults: Omit<RelayOptions, "kind"> = {
  batch: 100,
  leaseMs: 30_000,
  maxAttempts: 8,
  backoffMs: exponentialBackoff,
  pollInterval: "1 second"
}

/** An item whose payload is not of its kind's format; `paths` says where (never the content, which may quote a URL). */
export class MalformedPayload extends Data.TaggedError("MalformedPayload")<{ readonly paths: string }> {}

/** The item's payload as its kind's schema decodes it, or `MalformedPayload`. */
export const decodePayload = <A, I>(schema: Schema.Schema<A, I>) => {
  const decode = Schema.decodeUnknown(schema, { errors: "all" })
  return (item: OutboxItem): Effect.Effect<A, MalformedPayload> =>
    decode(item.payload).pipe(
      Effect.mapError(
        (error) =>
          new MalformedPayload({
            paths: ParseResult.ArrayFormatter.formatErrorSync(error)
              .map((issue) => issue.path.join(".") || "(payload)")
              .join(", ")
          })
      )
    )
}

/** The handler's own schedule: another attempt after `ms`, however many attempts came before. */
export class RetryIn extends Data.TaggedError("RetryIn")<{ readonly ms: number; readonly error: string }> {}

/** The handler's own verdict: no attempt can succeed; kept as dead at once. */
export class FinalFailure extends Data.TaggedError("FinalFailure")<{ readonly error: string }> {}

const malformedIn = (cause: Cause.Cause<unknown>): Option.Option<MalformedPayload> =>
  Option.filter(Cause.failureOption(cause), (error): error is MalformedPayload => error instanceof MalformedPayload)

const scheduledIn = (cause: Cause.Cause<unknown>): Option.Option<RetryIn | FinalFailure> =>
  Option.filter(
    Cause.failureOption(cause),
    (error): error is RetryIn | FinalFailure => error instanceof RetryIn || error instanceof FinalFailure
  )

/**
 * `handle` with a `candor.worker.relay` span around each item when the process exports traces: a
 * child of its checkpoint's consume span when this worker committed it (CheckpointTraces.ts). The
 * span says the item's kind and attempt, and only that a send failed, never why (a remote answer).
 */
export const tracedHandler = <R>(
  tracing: WorkerTracing | undefined,
  kind: string,
  handle: (item: OutboxItem) => Effect.Effect<void, unknown, R>
): ((item: OutboxItem) => Effect.Effect<void, unknown, R>) => {
  if (tracing === undefined) return handle
  const { checkpoints, recorder } = tracing
  return (item) =>
    Effect.suspend(() => {
      const span = recorder.start("candor.worker.relay", {
        parent: checkpoints.parentOf(item.payload),
        kind: "producer",
        startNs: recorder.nowNs(),
        attributes: { "candor.outbox.kind": kind, "candor.outbox.attempt": item.attempts + 1 }
      })
      return Effect.onExit(handle(item), (exit) =>
        Effect.sync(() => recorder.end(span, recorder.nowNs(), Exit.isFailure(exit) ? "send_failed" : undefined))
      )
    })
}

/** Attempts are counted by the handler: the relay never marks a `RetryIn` item dead. */
const UNLIMITED_ATTEMPTS = 2 ** 31 - 1

/** A wake-up signal: commits offer, relays take. Sliding with room for one, so offers never pile up. */
export const makeSignal = Queue.sliding<void>(1)

/**
 * One round of a relay: claims the due items of its kind and handles each; returns how many it
 * claimed. `runRelay` repeats it; tests call it directly, under a controlled clock.
 */
export const relayRound = <R>(
  options: RelayOptions,
  handle: (item: OutboxItem) => Effect.Effect<void, unknown, R>
): Effect.Effect<number, StoreError, Store | R> =>
  Effect.gen(function* () {
    const store = yield* Store
    const retry = (item: OutboxItem, cause: Cause.Cause<unknown>) =>
      Option.match(scheduledIn(cause), {
        onSome: (scheduled) =>
          scheduled._tag === "RetryIn"
            ? store.failOutbox(item.id, scheduled.error, scheduled.ms, UNLIMITED_ATTEMPTS)
            : store.failOutbox(item.id, scheduled.error, 0, 0),
        // The cause may quote a remote answer; keep only that it failed and how often.
        onNone: () =>
          store
            .failOutbox(item.id, "delivery failed", options.backoffMs(item.attempts), options.maxAttempts)
            .pipe(
              Effect.zipRight(
                Effect.logWarning("outbox delivery failed").pipe(
                  Effect.annotateLogs({ kind: options.kind, id: item.id, attempts: item.attempts })
                )
              )
            )
      })
    /** The items sent this round, removed together once the round's handlers are done. */
    const sent: Array<string> = []
    const sendOne = (item: OutboxItem) =>
      handle(item).pipe(
        Effect.matchCauseEffect({
          onSuccess: () => Effect.sync(() => sent.push(item.id)),
          onFailure: (cause) =>
            Option.match(malformedIn(cause), {
              // No retry can decode it: dead at once (kept, never dropped), for an operator to look at.
              onSome: ({ paths }) =>
                store
                  .failOutbox(item.id, `malformed payload: ${paths}`, 0, 0)
                  .pipe(
                    Effect.zipRight(
                      Effect.logError("outbox item with a malformed payload kept as dead").pipe(
                        Effect.annotateLogs({ kind: options.kind, id: item.id, paths })
                      )
                    )
                  ),
              onNone: () => retry(item, cause)
            })
        })
      )
    const items = yield* store.claimOutbox(options.kind, options.batch, options.leaseMs)
    yield* Effect.forEach(items, sendOne, { concurrency: 16, discard: true })
    // A crash before this statement sends the round's items again once their lease ends: at least
    // once, as a crash between a send and its own delete always did.
    yield* store.completeOutbox(sent)
    return items.length
  })

export const runRelay = <R>(
  options: RelayOptions,
  handle: (item: OutboxItem) => Effect.Effect<void, unknown, R>,
  wake: Queue.Dequeue<void>
): Effect.Effect<never, never, Store | R> =>
  relayRound(options, handle).pipe(
    Effect.catchAll((error) =>
      Effect.logWarning("outbox relay round failed").pipe(
        Effect.annotateLogs({ kind: options.kind, error: error._tag }),
        Effect.as(0)
      )
    ),
    // A full batch means more may be waiting: go again at once; otherwise wait for a commit or the poll.
    Effect.flatMap((sent) =>
      sent >= options.batch ? Effect.void : Effect.race(Queue.take(wake), Effect.sleep(options.pollInterval))
    ),
    Effect.forever
  )
