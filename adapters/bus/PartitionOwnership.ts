/**
 * Which event partitions this process consumes. The set changes over time (workers join, leave or
 * stall), so it is a `Subscribable`: read it with `owned.get`, follow it with `owned.changes` (the
 * current set first, then every change). Consumers start a partition when it appears and stop it
 * when it goes; the chain compare-and-set in PostgreSQL keeps a brief overlap of two owners harmless.
 *
 * - `layerAll(P)`: one process owns every partition (the embedded default, tests).
 * - `PartitionLeases.layer({ partitions, workerId, ttlMs })`: leases in NATS KV, fair shares between
 *   live workers.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Subscribable from "effect/Subscribable"
import * as SubscriptionRef from "effect/SubscriptionRef"
import { hostname } from "node:os"

export class PartitionOwnership extends Context.Tag("candor/adapters/bus/PartitionOwnership")<
  PartitionOwnership,
  {
    /** Names this process in leases and logs. */
    readonly workerId: string
    readonly owned: Subscribable.Subscribable<ReadonlySet<number>>
  }
>() {
  /** Every partition, for good. */
  static readonly layerAll = (
    partitions: number,
    workerId: string = defaultWorkerId()
  ): Layer.Layer<PartitionOwnership> =>
    Layer.effect(
      PartitionOwnership,
      Effect.map(
        SubscriptionRef.make<ReadonlySet<number>>(new Set(Array.from({ length: partitions }, (_, p) => p))),
        (owned) => ({ workerId, owned })
      )
    )
}

/** `<host>-<pid>`: unique per process on a host, readable in the lease bucket. */
export const defaultWorkerId = (): string => `${hostname()}-${process.pid}`.replace(/[^-\w]/g, "_")
