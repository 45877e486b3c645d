/**
 * `ApprovalSignal` on NATS (split deployment): KV `<prefix>-approvals`, key = approval id, value =
 * its final status. A waiter watches its one key, so a status written before the wait began is
 * delivered first (the watch starts with the key's last value) and one written later wakes it at
 * once: no polling. Keys are removed after two hours (an approval waits at most one,
 * `APPROVAL_TIMEOUT_BOUNDS`), so the bucket holds only the approvals of the last two hours.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import { ApprovalStatus } from "../../core/schema/Approval.js"
import { ApprovalSignal, type FinalStatus } from "./ApprovalSignal.js"
import type { BusError } from "./BusError.js"
import { atStart, openBucket, tryNats } from "./JetStreamSetup.js"
import { NatsConnection } from "./NatsConnection.js"
import { approvalBucket, DEFAULT_PREFIX } from "./Subjects.js"

export interface ApprovalSignalKvOptions {
  /** CANDOR_NATS_PREFIX. */
  readonly prefix?: string
  /** CANDOR_NATS_REPLICAS. */
  readonly replicas?: number
}

const TTL_MS = 2 * 60 * 60 * 1000

const decodeStatus = Schema.decodeUnknownOption(ApprovalStatus)

export const make = (
  options: ApprovalSignalKvOptions = {}
): Effect.Effect<ApprovalSignal["Type"], BusError, NatsConnection | Scope.Scope> =>
  Effect.gen(function* () {
    const nc = yield* NatsConnection
    const kv = yield* atStart(
      openBucket(nc, approvalBucket(options.prefix ?? DEFAULT_PREFIX), {
        history: 1,
        ttlMs: TTL_MS,
        replicas: options.replicas ?? 1
      })
    )
    const watchOnce = (id: string) =>
      Effect.acquireUseRelease(
        tryNats("watch approval", () => kv.watch({ key: id })),
        (watcher) =>
          tryNats("watch approval", async (): Promise<FinalStatus | undefined> => {
            for await (const entry of watcher) {
              if (entry.operation !== "PUT") continue
              const status = decodeStatus(entry.string())
              // A value that is not a final status (only a bug writes one) is no decision: keep waiting.
              if (status._tag === "Some" && status.value !== "pending") return status.value
            }
            return undefined
          }),
        (watcher) => Effect.sync(() => watcher.stop())
      )
    return ApprovalSignal.of({
      publish: (id, status) =>
        tryNats("signal approval", () => kv.put(id, status)).pipe(
          Effect.asVoid,
          // The store holds the decision; a waiter that misses this reads it there.
          Effect.catchAll((error) =>
            Effect.logWarning("approval signal not written").pipe(Effect.annotateLogs({ error: error.message }))
          )
        ),
      // A watch that ends or fails (the connection lost) is made again after a pause; the waiter's
      // re-read of the store bounds what a long outage costs.
      wait: (id) =>
        watchOnce(id).pipe(
          Effect.flatMap((status) =>
            status === undefined ? Effect.fail("watch ended" as const) : Effect.succeed(status)
          ),
          Effect.retry({ schedule: Schedule.spaced("1 second"), while: () => !nc.isClosed() }),
          Effect.catchAll(() => Effect.never)
        )
    })
  })

export const layer = (options: ApprovalSignalKvOptions = {}): Layer.Layer<ApprovalSignal, BusError, NatsConnection> =>
  Layer.scoped(ApprovalSignal, make(options))
