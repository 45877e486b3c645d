/**
 * Partition ownership by lease in NATS KV (server 2.9: no per-key TTL, so the bucket's max_age is the
 * lease TTL). Bucket `<prefix>-partition-leases`:
 *
 *   lease.<p>          = worker id, created with `kv.create` (fails while another holds it) and renewed
 *                        with `kv.update(key, id, revision)` (fails if anyone else wrote it since)
 *   worker.<worker_id> = heartbeat, rewritten every tick; the live ones give the worker count
 *
 * Every ttl/3 a worker renews its leases (a failed renewal drops that partition at once), counts live
 * workers, and moves towards its fair share ceil(P / live): above it, it releases the extras; below
 * it, it takes free partitions. Keys nobody renews expire after the TTL, so the partitions of a
 * stalled or crashed worker come free. A lease not renewed for a whole TTL is dropped locally too,
 * even if the renewal is merely slow, since by then another worker may hold it.
 */
import { Kvm } from "@nats-io/kv"
import * as Clock from "effect/Clock"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as SubscriptionRef from "effect/SubscriptionRef"
import { createHash } from "node:crypto"
import { BusError } from "./BusError.js"
import { tryNats } from "./JetStreamSetup.js"
import { NatsConnection } from "./NatsConnection.js"
import { PartitionOwnership } from "./PartitionOwnership.js"
import { DEFAULT_PREFIX, leaseBucket } from "./Subjects.js"

/** The partition's lease carries another worker's id: not ours to adopt. */
class LeaseHeldElsewhere extends Data.TaggedError("LeaseHeldElsewhere")<{ readonly partition: number }> {}

export interface LeaseOptions {
  readonly partitions: number
  /** Unique among live workers; letters, digits, `-` and `_`. */
  readonly workerId: string
  /** A lease lapses this long after its last renewal; renewals run every ttl/3. */
  readonly ttlMs: number
  /** CANDOR_NATS_PREFIX (default `candor`). */
  readonly prefix?: string
}

/** The most partitions one of `live` workers should hold. */
export const fairShare = (partitions: number, live: number): number => Math.ceil(partitions / Math.max(1, live))

interface Lease {
  readonly revision: number
  readonly renewedAt: number
}

export const make = (
  options: LeaseOptions
): Effect.Effect<PartitionOwnership["Type"], BusError, NatsConnection | Scope.Scope> =>
  Effect.gen(function* () {
    const { partitions, ttlMs, workerId } = options
    if (!Number.isInteger(partitions) || partitions < 1) {
      return yield* new BusError({ operation: "lease", cause: `partitions must be a positive integer: ${partitions}` })
    }
    if (!/^[-\w]+$/.test(workerId)) {
      return yield* new BusError({
        operation: "lease",
        cause: `worker id must be letters, digits, - or _: ${workerId}`
      })
    }
    const nc = yield* NatsConnection
    const kv = yield* tryNats("open partition leases", () =>
      new Kvm(nc).create(leaseBucket(options.prefix ?? DEFAULT_PREFIX), { history: 1, ttl: ttlMs })
    )
    const held = new Map<number, Lease>()
    const owned = yield* SubscriptionRef.make<ReadonlySet<number>>(new Set())
    const leaseKey = (p: number) => `lease.${p}`
    const heartbeatKey = `worker.${workerId}`
    // Workers try free partitions from different starting points, so they rarely contend.
    const start = createHash("sha256").update(workerId).digest().readUInt32BE(0) % partitions
    const order = Array.from({ length: partitions }, (_, i) => (start + i) % partitions)
    let live = 1

    /** Tells the consumers; only on a change, so `changes` carries real transitions. */
    const announce = SubscriptionRef.update(owned, (current) => {
      const next = new Set([...held.keys()].sort((x, y) => x - y))
      return next.size === current.size && [...next].every((p) => current.has(p)) ? current : next
    })

    const countWorkers = tryNats("count workers", async () => {
      let n = 0
      for await (const _ of await kv.keys("worker.>")) n++
      return n
    })

    /** Creates the lease, or adopts one still carrying our id (a renewal lost in transit). */
    const acquire = (p: number) =>
      tryNats("acquire lease", () => kv.create(leaseKey(p), workerId)).pipe(
        Effect.orElse(() =>
          tryNats("adopt lease", () => kv.get(leaseKey(p))).pipe(
            Effect.filterOrFail(
              (entry) => entry?.operation === "PUT" && entry.string() === workerId,
              () => new LeaseHeldElsewhere({ partition: p })
            ),
            Effect.flatMap((entry) => tryNats("adopt lease", () => kv.update(leaseKey(p), workerId, entry!.revision)))
          )
        ),
        Effect.option
      )

    const tick = Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      for (const [p, lease] of held) if (now - lease.renewedAt >= ttlMs) held.delete(p)
      yield* tryNats("heartbeat", () => kv.put(heartbeatKey, workerId)).pipe(Effect.ignore)
      yield* Effect.forEach(
        held,
        ([p, lease]) =>
          tryNats("renew lease", () => kv.update(leaseKey(p), workerId, lease.revision)).pipe(
            Effect.match({
              onFailure: () => void held.delete(p),
              onSuccess: (revision) => void held.set(p, { revision, renewedAt: now })
            })
          ),
        { concurrency: "unbounded", discard: true }
      )
      yield* announce
      live = Math.max(1, yield* countWorkers.pipe(Effect.orElseSucceed(() => live)))
      const share = fairShare(partitions, live)
      // Above the share (a worker joined): stop consuming the extras, then hand them back.
      const extras = [...held].sort(([x], [y]) => y - x).slice(0, Math.max(0, held.size - share))
      if (extras.length > 0) {
        for (const [p] of extras) held.delete(p)
        yield* announce
        yield* Effect.forEach(
          extras,
          ([p, lease]) =>
            tryNats("release lease", () => kv.delete(leaseKey(p), { previousSeq: lease.revision })).pipe(Effect.ignore),
          {
            concurrency: "unbounded",
            discard: true
          }
        )
      }
      for (const p of order) {
        if (held.size >= share) break
        if (held.has(p)) continue
        const revision = yield* acquire(p)
        if (Option.isSome(revision)) held.set(p, { revision: revision.value, renewedAt: now })
      }
      yield* announce
    })

    const release = Effect.gen(function* () {
      const leases = [...held]
      held.clear()
      yield* announce
      yield* Effect.forEach(
        leases,
        ([p, lease]) =>
          tryNats("release lease", () => kv.delete(leaseKey(p), { previousSeq: lease.revision })).pipe(Effect.ignore),
        {
          concurrency: "unbounded",
          discard: true
        }
      )
      yield* tryNats("remove heartbeat", () => kv.delete(heartbeatKey)).pipe(Effect.ignore)
    })

    const safeTick = tick.pipe(
      Effect.catchAllCause((cause) =>
        Effect.logWarning("partition lease tick failed").pipe(
          Effect.annotateLogs({ worker: workerId, cause: String(cause) })
        )
      )
    )
    // Finalizers run in reverse: the loop below is interrupted before the leases are released.
    yield* Effect.addFinalizer(() => release)
    yield* safeTick
    yield* Effect.sleep(Math.max(1, Math.floor(ttlMs / 3))).pipe(
      Effect.zipRight(safeTick),
      Effect.forever,
      Effect.forkScoped
    )
    return { workerId, owned }
  })

/** Ownership leased in the KV bucket `<prefix>-partition-leases`; released when the layer closes. */
export const layer = (options: LeaseOptions): Layer.Layer<PartitionOwnership, BusError, NatsConnection> =>
  Layer.scoped(PartitionOwnership, make(options))
