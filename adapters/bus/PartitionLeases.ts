/**
 * Partition ownership by lease in NATS KV, with failover in seconds. Bucket `<prefix>-partition-leases`:
 *
 *   lease.<p>          = worker id, created with `kv.create` (fails while another holds it) and renewed
 *                        with `kv.update(key, id, revision)` (fails if anyone else wrote it since)
 *   worker.<worker_id> = heartbeat, rewritten every `heartbeatMs` (500 ms)
 *
 * Every worker watches the bucket (`kv.watch`): it learns who holds which lease and when it last saw
 * each worker's heartbeat, by its own clock (no clock skew between hosts). A worker not heard from
 * for `deadAfterMs` (2.5 s) is taken for dead: its leases are taken over by compare-and-set on the
 * revision that names it, so one live worker wins each, and the others' `create` or `update` fails.
 * A SIGKILLed worker's partitions are thus owned again 2–2.5 s after it died, not after the lease
 * TTL. Why these figures: five missed heartbeats, so that one slow tick (a GC pause, a big batch) does
 * not look like death (and if it does, the compare-and-sets keep it harmless); and the target of
 * committing again within 5 s leaves the new owner ~2 s for its first commit, which under load is
 * mostly rebuilding the actors of agents new to it (measured 1–1.5 s on a loaded 2-core machine).
 * A graceful stop deletes its leases and heartbeat, and a joining worker's first heartbeat appears:
 * the watch sees either at once and wakes the others, so rebalancing waits for no tick.
 *
 * Each tick (every heartbeat, sooner when the watch wakes it or a worker is about to be deemed dead)
 * writes the heartbeat, renews leases due (every ttl/3; the bucket's max_age, the TTL, only garbage-
 * collects keys nobody writes any more: server 2.9 has no per-key TTL), counts the live workers and
 * moves towards its fair share ceil(P / live): above it, it releases the extras; below it, it takes
 * free partitions and those of dead workers.
 *
 * A stalled worker (a zombie) cannot keep a partition it lost: it drops every lease when it finds it
 * was stalled `deadAfterMs` (others may have taken them), a lease another worker wrote is dropped as
 * soon as the watch shows it, and a renewal refused because someone else wrote the lease drops that
 * partition. Until it notices, whatever it commits meets the store's chain compare-and-set: a moved
 * chain head is a conflict, so a chain never forks (test/integration/ZombieOwner.test.ts).
 *
 * A bucket without a leader (on a NATS cluster, while the server that led it is replaced: seconds)
 * takes no writes from anyone and its watch shows nothing. Such silence is nobody's death:
 *
 * - a worker's silence only counts while this worker's own view of the bucket is live, that is while
 *   the watch keeps showing its own heartbeats (the watch delivers in stream order, so seeing our
 *   latest beat means we have seen everything written before it), and only from the moment that view
 *   came back after a gap; so after an election every worker gets `deadAfterMs` to be heard again,
 *   and none takes the others' partitions;
 * - a renewal or heartbeat that gets no answer keeps the leases (nobody else can write them either),
 *   tried again at the next tick; only a worker whose heartbeats have gone unanswered for
 *   `fenceAfterMs` drops them all.
 *
 * The trade-off: a worker cut off from NATS alone (the others' view live) is deemed dead by them after
 * `deadAfterMs` (2.5 s) and its partitions move, but it keeps consuming whatever it still receives
 * until `fenceAfterMs` (10 s by default, two thirds of the lease TTL, above the 4–9 s a JetStream
 * election takes), instead of stopping after 2.5 s. Two owners for those seconds cost conflicts and
 * duplicates that the store's chain compare-and-set and checkpoint-id dedupe absorb (no fork, nothing
 * twice); stopping at 2.5 s would instead make every worker drop every partition at each election and
 * then fight over them when the bucket is back, which stops all commits for longer.
 * A watch that stops showing our heartbeats while they are being stored is restarted.
 *
 * Mixed versions during an upgrade: workers of before this change heartbeat every ttl/3 (5 s), so
 * newer ones take them for dead between beats and take their leases; both stay correct (CAS) but
 * partitions move back and forth until every worker runs this version.
 */
import type { KvEntry } from "@nats-io/kv"
import * as Clock from "effect/Clock"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as SubscriptionRef from "effect/SubscriptionRef"
import { createHash } from "node:crypto"
import { BusError } from "./BusError.js"
import { atStart, isWrongLastSequence, liveKeys, openBucket, tryNats } from "./JetStreamSetup.js"
import { NatsConnection } from "./NatsConnection.js"
import { PartitionOwnership } from "./PartitionOwnership.js"
import { DEFAULT_PREFIX, leaseBucket } from "./Subjects.js"

/** The partition's lease carries a live worker's id: not ours to take. */
class LeaseHeldElsewhere extends Data.TaggedError("LeaseHeldElsewhere")<{ readonly partition: number }> {}

export interface LeaseOptions {
  readonly partitions: number
  /** Unique among live workers; letters, digits, `-` and `_`. */
  readonly workerId: string
  /** Keys nobody writes for this long are removed (bucket max_age); leases are renewed every ttl/3. */
  readonly ttlMs: number
  /** How often a worker writes its heartbeat (default 500 ms, at most ttl/3). */
  readonly heartbeatMs?: number
  /** A worker whose heartbeat nobody has seen for this long is dead and loses its leases (default 5 heartbeats). */
  readonly deadAfterMs?: number
  /**
   * A worker whose own heartbeats have gone unanswered for this long drops its leases (default two
   * thirds of the TTL, at least `deadAfterMs`): long enough to keep them through a bucket's election.
   */
  readonly fenceAfterMs?: number
  /** CANDOR_NATS_PREFIX (default `candor`). */
  readonly prefix?: string
  /** CANDOR_NATS_REPLICAS: copies of the bucket (default 1). */
  readonly replicas?: number
}

/** The most partitions one of `live` workers should hold. */
export const fairShare = (partitions: number, live: number): number => Math.ceil(partitions / Math.max(1, live))

interface Lease {
  readonly revision: number
  readonly renewedAt: number
}

/** A lease as the watch last showed it: `holder` undefined once deleted. */
interface Seen {
  readonly holder: string | undefined
  readonly revision: number
}

const LEASE = "lease."
const WORKER = "worker."

const watchRetry = Schedule.exponential("100 millis").pipe(Schedule.union(Schedule.spaced("2 seconds")))

export const make = (
  options: LeaseOptions
): Effect.Effect<PartitionOwnership["Type"], BusError, NatsConnection | Scope.Scope> =>
  Effect.gen(function* () {
    const { partitions, ttlMs, workerId } = options
    const heartbeatMs = Math.max(1, options.heartbeatMs ?? Math.min(500, Math.floor(ttlMs / 3)))
    const deadAfterMs = options.deadAfterMs ?? 5 * heartbeatMs
    const renewEveryMs = Math.max(heartbeatMs, Math.floor(ttlMs / 3))
    const fenceAfterMs = options.fenceAfterMs ?? Math.max(deadAfterMs, Math.floor((ttlMs * 2) / 3))
    /** Our own heartbeats unseen for this long: the view of the bucket is lost (leaderless, watch stalled). */
    const viewLostAfterMs = Math.max(2 * heartbeatMs, Math.floor(deadAfterMs / 2))
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
    const bucketName = leaseBucket(options.prefix ?? DEFAULT_PREFIX)
    const kv = yield* atStart(
      openBucket(nc, bucketName, {
        history: 1,
        ttlMs,
        replicas: options.replicas ?? 1,
        // A write or a watch that goes unanswered (an election) is given up in time for the next tick.
        timeoutMs: Math.min(2_000, deadAfterMs)
      })
    )
    yield* Effect.logDebug("partition leases: bucket open").pipe(Effect.annotateLogs({ worker: workerId }))
    const held = new Map<number, Lease>()
    const owned = yield* SubscriptionRef.make<ReadonlySet<number>>(new Set())
    const leaseKey = (p: number) => `${LEASE}${p}`
    const heartbeatKey = `${WORKER}${workerId}`
    // Workers try free partitions from different starting points, so they rarely contend.
    const start = createHash("sha256").update(workerId).digest().readUInt32BE(0) % partitions
    const order = Array.from({ length: partitions }, (_, i) => (start + i) % partitions)

    const startedAt = yield* Clock.currentTimeMillis
    /** Leases as the watch shows them, by partition. */
    const leases = new Map<number, Seen>()
    /** When each other worker's heartbeat was last seen (our clock); a deleted one is gone at once. */
    const heardFrom = new Map<string, number>()
    /** The revision of each worker's heartbeat last seen: a watch restarted replays it, which is no sign of life. */
    const beatRevision = new Map<string, number>()
    /** When our own last successful heartbeat was sent: unanswered for fenceAfterMs, our leases may be gone. */
    let beatAt = startedAt
    /** When the previous tick ended: a next one that starts deadAfterMs later means this process stalled. */
    let tickEndedAt = startedAt
    /** When the watch last showed one of our own heartbeats (undefined: not yet). */
    let ownSeenAt: number | undefined
    /** When our view of the bucket last came back (or first came): silence before it proves nothing. */
    let viewSince = startedAt
    /** When the running watch started (undefined: none running). */
    let watchStartedAt: number | undefined
    const viewLive = (now: number) => ownSeenAt !== undefined && now - ownSeenAt < viewLostAfterMs
    /** Since when a worker has been silent as far as we can tell. */
    const silentSince = (worker: string) => Math.max(heardFrom.get(worker) ?? startedAt, viewSince)
    // A worker never heard from (the watch not caught up yet) gets the benefit of the doubt from our start;
    // nobody is dead while we cannot see the bucket.
    const isLive = (worker: string, now: number) =>
      worker === workerId || !viewLive(now) || now - silentSince(worker) < deadAfterMs
    const liveWorkers = (now: number) => 1 + [...heardFrom.keys()].filter((w) => isLive(w, now)).length

    /** The watch shows a write after our last one, in another's name: the lease is no longer ours. */
    const takenFromUs = (p: number): boolean => {
      const lease = held.get(p)
      const seen = leases.get(p)
      return lease !== undefined && seen !== undefined && seen.revision > lease.revision && seen.holder !== workerId
    }

    /** Wakes the tick loop (a lease freed, a worker gone or arrived, a lease of ours taken). */
    const wake = yield* Queue.sliding<void>(1)
    /** Ends the current watch, which is then started again (it stopped showing our own heartbeats). */
    const restartWatch = yield* Queue.sliding<void>(1)

    /** Tells the consumers; only on a change, so `changes` carries real transitions. */
    const announce = SubscriptionRef.update(owned, (current) => {
      const next = new Set([...held.keys()].sort((x, y) => x - y))
      return next.size === current.size && [...next].every((p) => current.has(p)) ? current : next
    })

    /** What the watch brings: plain code, in the watch loop. */
    const learn = (entry: KvEntry, now: number): void => {
      const put = entry.operation === "PUT"
      if (entry.key.startsWith(WORKER)) {
        const worker = entry.key.slice(WORKER.length)
        if (worker === workerId) {
          // Our own beat, back through the watch: the view is live, and if it was not (a gap: the
          // bucket leaderless, the watch stalled, this process stalled), it is live again from now.
          if (!put) return
          if (ownSeenAt === undefined || now - ownSeenAt >= viewLostAfterMs) viewSince = now
          ownSeenAt = now
          return
        }
        if (!put) {
          heardFrom.delete(worker)
          beatRevision.delete(worker)
          wake.unsafeOffer(undefined)
        } else {
          const known = beatRevision.get(worker)
          if (known !== undefined && entry.revision <= known) return
          if (!heardFrom.has(worker)) wake.unsafeOffer(undefined)
          beatRevision.set(worker, entry.revision)
          heardFrom.set(worker, now)
        }
      } else if (entry.key.startsWith(LEASE)) {
        const p = Number(entry.key.slice(LEASE.length))
        if (!Number.isInteger(p)) return
        const known = leases.get(p)
        if (known !== undefined && known.revision > entry.revision) return
        const holder = put ? entry.string() : undefined
        leases.set(p, { holder, revision: entry.revision })
        // Freed, or ours taken by another (we were deemed dead): act now, not at the next tick.
        if (holder === undefined || takenFromUs(p)) wake.unsafeOffer(undefined)
      }
    }

    const watchOnce = Effect.acquireUseRelease(
      tryNats("watch partition leases", () => kv.watch()).pipe(
        // A restart asked for before this watch began is not about it.
        Effect.tap(() =>
          Effect.zipRight(
            Queue.takeAll(restartWatch),
            Effect.sync(() => (watchStartedAt = Date.now()))
          )
        )
      ),
      (entries) =>
        Effect.raceFirst(
          tryNats("watch partition leases", async () => {
            for await (const entry of entries) learn(entry, Date.now())
          }),
          Effect.zipRight(
            Queue.take(restartWatch),
            Effect.fail(new BusError({ operation: "watch partition leases", cause: "our heartbeats no longer shown" }))
          )
        ),
      (entries) =>
        Effect.sync(() => {
          watchStartedAt = undefined
          entries.stop()
        })
    )
    yield* watchOnce.pipe(
      Effect.zipRight(Effect.fail(new BusError({ operation: "watch partition leases", cause: "watch ended" }))),
      Effect.tapError((error) =>
        Effect.logWarning("partition lease watch ended; resuming").pipe(Effect.annotateLogs({ error: error.message }))
      ),
      Effect.retry({ schedule: watchRetry, while: () => !nc.isClosed() }),
      Effect.ignore,
      Effect.forkScoped
    )
    // The workers alive now, before the first tick: a newcomer must not take every partition first.
    // Plain requests, not `kv.keys()`, which can wait while the others' heartbeats are rewritten (liveKeys).
    const present = Array.from(yield* atStart(liveKeys(nc, kv, bucketName, WORKER)), (key) => key.slice(WORKER.length))
    for (const worker of present) if (worker !== workerId && !heardFrom.has(worker)) heardFrom.set(worker, startedAt)
    yield* Effect.logDebug("partition leases: workers counted").pipe(Effect.annotateLogs({ worker: workerId, present }))

    /**
     * Creates the lease, adopts one still carrying our id (a renewal lost in transit), or takes over
     * one held by a dead worker: each a compare-and-set on the revision read.
     */
    const acquire = (p: number, now: number) =>
      tryNats("acquire lease", () => kv.create(leaseKey(p), workerId)).pipe(
        Effect.orElse(() =>
          tryNats("acquire lease", () => kv.get(leaseKey(p))).pipe(
            Effect.filterOrFail(
              (entry) =>
                entry !== null &&
                (entry.operation !== "PUT" || entry.string() === workerId || !isLive(entry.string(), now)),
              () => new LeaseHeldElsewhere({ partition: p })
            ),
            Effect.flatMap((entry) =>
              tryNats("take over lease", () => kv.update(leaseKey(p), workerId, entry!.revision))
            )
          )
        ),
        Effect.option
      )

    /** Worth trying: free, ours, or its holder dead, as far as the watch knows. */
    const takeable = (p: number, now: number) => {
      const seen = leases.get(p)
      return seen?.holder === undefined || seen.holder === workerId || !isLive(seen.holder, now)
    }

    const release = (extras: ReadonlyArray<readonly [number, Lease]>) =>
      Effect.forEach(
        extras,
        ([p, lease]) =>
          tryNats("release lease", () => kv.delete(leaseKey(p), { previousSeq: lease.revision })).pipe(Effect.ignore),
        { concurrency: "unbounded", discard: true }
      )

    const tick = Effect.gen(function* () {
      let now = yield* Clock.currentTimeMillis
      // Stalled deadAfterMs (this process did not run: others may have deemed us dead and taken our
      // leases). Stop consuming before anything else; leases still ours are adopted below.
      if (now - tickEndedAt >= deadAfterMs && held.size > 0) {
        held.clear()
        yield* announce
      }
      // Leases the watch shows in another worker's name were taken from us.
      for (const p of [...held.keys()]) if (takenFromUs(p)) held.delete(p)
      // A worker silent for a whole TTL (while we could see) has no keys left (max_age): forget it.
      if (viewLive(now))
        for (const worker of heardFrom.keys())
          if (now - silentSince(worker) > ttlMs + deadAfterMs) {
            heardFrom.delete(worker)
            beatRevision.delete(worker)
          }
      yield* announce
      const sentAt = now
      yield* tryNats("heartbeat", () => kv.put(heartbeatKey, workerId)).pipe(
        Effect.tap(() => Effect.sync(() => void (beatAt = sentAt))),
        Effect.ignore
      )
      // Our heartbeats unanswered for fenceAfterMs, this one included: longer than an election, so we
      // may be cut off while the others are not. Judged after this tick's attempt, not before: the
      // first tick after a long election must not drop everything as the bucket answers again.
      if ((yield* Clock.currentTimeMillis) - beatAt >= fenceAfterMs && held.size > 0) {
        held.clear()
        yield* announce
      }
      // Our beats are stored but the running watch has shown none for deadAfterMs (since it began, at
      // least): it is stuck, its consumer lost with its server, say. Start it again.
      if (watchStartedAt !== undefined && beatAt - Math.max(ownSeenAt ?? 0, watchStartedAt) >= deadAfterMs)
        restartWatch.unsafeOffer(undefined)
      yield* Effect.forEach(
        [...held].filter(([, lease]) => now - lease.renewedAt >= renewEveryMs),
        ([p, lease]) =>
          tryNats("renew lease", () => kv.update(leaseKey(p), workerId, lease.revision)).pipe(
            Effect.flatMap((revision) => Effect.sync(() => void held.set(p, { revision, renewedAt: now }))),
            Effect.catchAll((error) =>
              isWrongLastSequence(error)
                ? // Written since our renewal: by us (a renewal whose answer was lost), or by another.
                  tryNats("read lease", () => kv.get(leaseKey(p))).pipe(
                    Effect.match({
                      onSuccess: (entry) =>
                        void (entry?.operation === "PUT" && entry.string() === workerId
                          ? held.set(p, { revision: entry.revision, renewedAt: lease.renewedAt })
                          : held.delete(p)),
                      onFailure: () => undefined
                    })
                  )
                : // No answer (an election, a reconnect): nobody else can write it either. Next tick.
                  Effect.void
            )
          ),
        { concurrency: "unbounded", discard: true }
      )
      yield* announce
      now = yield* Clock.currentTimeMillis
      const share = fairShare(partitions, liveWorkers(now))
      // Above the share (a worker joined): stop consuming the extras, then hand them back.
      const extras = [...held].sort(([x], [y]) => y - x).slice(0, Math.max(0, held.size - share))
      if (extras.length > 0) {
        for (const [p] of extras) held.delete(p)
        yield* announce
        yield* release(extras)
      }
      const wanted = order.filter((p) => !held.has(p) && takeable(p, now)).slice(0, Math.max(0, share - held.size))
      const holders = new Map(wanted.map((p) => [p, leases.get(p)?.holder]))
      const taken = yield* Effect.forEach(wanted, (p) => Effect.map(acquire(p, now), (r) => [p, r] as const), {
        concurrency: "unbounded"
      })
      const fromDead = new Map<string, Array<number>>()
      for (const [p, revision] of taken) {
        if (Option.isNone(revision)) continue
        held.set(p, { revision: revision.value, renewedAt: now })
        const before = holders.get(p)
        if (before !== undefined && before !== workerId) fromDead.set(before, [...(fromDead.get(before) ?? []), p])
      }
      yield* announce
      for (const [dead, partitions] of fromDead)
        yield* Effect.logInfo("partitions taken over from a worker deemed dead").pipe(
          Effect.annotateLogs({
            worker: workerId,
            dead,
            partitions,
            silentMs: now - silentSince(dead)
          })
        )
    })

    /** Until the next heartbeat, or sooner: when the first live worker would be deemed dead. */
    const untilNextTick = Effect.map(Clock.currentTimeMillis, (now) => {
      let next = heartbeatMs
      for (const worker of heardFrom.keys())
        if (isLive(worker, now)) next = Math.min(next, silentSince(worker) + deadAfterMs - now + 1)
      return Math.max(1, next)
    })

    const leave = Effect.gen(function* () {
      const ours = [...held]
      held.clear()
      yield* announce
      yield* release(ours)
      yield* tryNats("remove heartbeat", () => kv.delete(heartbeatKey)).pipe(Effect.ignore)
    })

    const safeTick = tick.pipe(
      // A hung NATS call must not hold the loop past the point where others deem us dead.
      Effect.timeoutFail({
        duration: deadAfterMs,
        onTimeout: () => new BusError({ operation: "lease tick", cause: "timed out" })
      }),
      Effect.catchAllCause((cause) =>
        Effect.logWarning("partition lease tick failed").pipe(
          Effect.annotateLogs({ worker: workerId, cause: String(cause) })
        )
      ),
      Effect.ensuring(Effect.map(Clock.currentTimeMillis, (now) => void (tickEndedAt = now)))
    )
    // Finalizers run in reverse: the loop below is interrupted before the leases are released.
    yield* Effect.addFinalizer(() => leave)
    yield* safeTick
    yield* untilNextTick.pipe(
      Effect.flatMap((ms) => Queue.take(wake).pipe(Effect.timeoutOption(ms))),
      Effect.zipRight(safeTick),
      Effect.forever,
      Effect.forkScoped
    )
    return { workerId, owned }
  })

/** Ownership leased in the KV bucket `<prefix>-partition-leases`; released when the layer closes. */
export const layer = (options: LeaseOptions): Layer.Layer<PartitionOwnership, BusError, NatsConnection> =>
  Layer.scoped(PartitionOwnership, make(options))
