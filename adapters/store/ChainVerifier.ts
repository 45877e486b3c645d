/**
 * Chain verification of an agent's stored log (`GET /v1/reputation/{id}/verify`, the reputation page)
 * as a bounded service rather than a full pass per request.
 *
 * - **Cached per tree size.** The audit (core/ChainAudit.ts) of an agent's log is kept with the
 *   signed tree size and key ring it was made at. A request for the same size and ring reads it
 *   back; a grown log is checked from where the audit stopped (only the new certificates); a new
 *   key in the ring, or a log that shrank, starts over. An audit older than `maxAgeMs` (an hour) is
 *   made again from genesis, so a certificate altered in the database after it was checked is
 *   reported within the hour.
 * - **One pass per agent at a time.** Requests arriving while an agent's pass runs wait for it and
 *   read its result, so 300 requests at once cost one pass, not 300.
 * - **Bounded.** At most `concurrentPasses` passes run at once in the process (others queue), and
 *   at most `maxAgents` audits are kept (least recently used dropped; each is a Merkle frontier and
 *   at most 200 error strings).
 *
 * A pass runs in its own fiber, in the verifier's scope: a client that hangs up does not waste the
 * work others wait for, and closing the verifier ends it.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import { type ChainAudit, auditCertificates, startAudit } from "../../core/ChainAudit.js"
import { chainCertificates, chainPasses } from "../metrics/VerificationMetrics.js"
import * as KeyRepo from "./KeyRepo.js"
import * as ProofRepo from "./ProofRepo.js"
import { Store, type StoreError, type TreeHead } from "./Store.js"

export interface RingKey {
  readonly keyId: string
  readonly publicKey: Uint8Array
}

export interface VerifiedLog {
  /** The newest signed tree head, undefined for an agent without one. */
  readonly head: TreeHead | undefined
  /** The key ring the audit was made with. */
  readonly keys: ReadonlyArray<RingKey>
  /** Over the certificates at positions below `head.tree_size`. */
  readonly audit: ChainAudit
}

export class ChainVerifier extends Context.Tag("candor/adapters/store/ChainVerifier")<
  ChainVerifier,
  {
    /** The agent's log audited up to its newest signed tree head. */
    readonly verify: (agentId: string) => Effect.Effect<VerifiedLog, StoreError>
    /** Whether `verify` would answer from the cache, without reading a certificate. */
    readonly isCurrent: (agentId: string) => Effect.Effect<boolean, StoreError>
  }
>() {}

export interface ChainVerifierOptions {
  /** Audits kept (default 4,096 agents). */
  readonly maxAgents: number
  /** Passes running at once in the process (default 2). */
  readonly concurrentPasses: number
  /** Certificates read per query (default 1,000). */
  readonly scanBatch: number
  /** An audit older than this is made again from genesis (default one hour). */
  readonly maxAgeMs: number
}

export const defaultChainVerifierOptions: ChainVerifierOptions = {
  maxAgents: 4096,
  concurrentPasses: 2,
  scanBatch: 1000,
  maxAgeMs: 3_600_000
}

interface Entry {
  readonly size: number
  readonly ring: string
  readonly audit: ChainAudit
  /** When the audit's first certificate was checked (Clock ms): the age of the whole audit. */
  readonly since: number
}

const ringIdOf = (keys: ReadonlyArray<RingKey>): string => keys.map((key) => key.keyId).join(",")

export const make = (options: ChainVerifierOptions = defaultChainVerifierOptions) =>
  Effect.gen(function* () {
    const store = yield* Store
    const proofs = yield* ProofRepo.ProofRepo
    const ring = yield* KeyRepo.KeyRepo
    const passes = yield* Effect.makeSemaphore(options.concurrentPasses)
    // Passes run in this scope (the layer's): they outlive the request that started them, not the verifier.
    const scope = yield* Effect.scope
    // Insertion order is recency: an entry read is moved to the end.
    const cache = new Map<string, Entry>()
    const running = new Map<string, Deferred.Deferred<Entry, StoreError>>()

    const remember = (agentId: string, entry: Entry) => {
      cache.delete(agentId)
      cache.set(agentId, entry)
      while (cache.size > options.maxAgents) cache.delete(cache.keys().next().value!)
    }

    const current = (agentId: string) =>
      Effect.all({
        head: store.treeHead(agentId),
        keys: Effect.map(ring.list, (records) =>
          records.map((record): RingKey => ({ keyId: record.key_id, publicKey: record.public_key }))
        )
      })

    const fresh = (entry: Entry | undefined, now: number): entry is Entry =>
      entry !== undefined && now - entry.since < options.maxAgeMs

    const hit = (agentId: string, size: number, ringId: string, now: number): Entry | undefined => {
      const entry = cache.get(agentId)
      if (!fresh(entry, now) || entry.size !== size || entry.ring !== ringId) return undefined
      remember(agentId, entry)
      return entry
    }

    /** One pass: from the cached audit when it is a prefix made with the same ring, else from genesis. */
    const pass = (agentId: string, size: number, keys: ReadonlyArray<RingKey>) =>
      Effect.gen(function* () {
        const ringId = ringIdOf(keys)
        const now = yield* Clock.currentTimeMillis
        const known = cache.get(agentId)
        const extend = fresh(known, now) && known.ring === ringId && known.size <= size
        const from = extend ? known.audit : startAudit(agentId)
        const keyMap = new Map(keys.map((key) => [key.keyId, key.publicKey]))
        let audit = from
        while (audit.position < size) {
          const batch = (yield* proofs.agentCertificates(agentId, audit.position, options.scanBatch)).filter(
            // Certificates committed after the newest signed head are not in that tree yet.
            (certificate) => certificate.chain.position < size
          )
          if (batch.length === 0) break
          audit = auditCertificates(audit, batch, keyMap)
          yield* Metric.update(chainCertificates, batch.length)
        }
        yield* Metric.update(chainPasses.pipe(Metric.tagged("kind", from.position === 0 ? "full" : "incremental")), 1)
        const entry: Entry = { size, ring: ringId, audit, since: extend ? known.since : now }
        remember(agentId, entry)
        return entry
      }).pipe(passes.withPermits(1))

    const verify = (agentId: string): Effect.Effect<VerifiedLog, StoreError> =>
      Effect.gen(function* () {
        const { head, keys } = yield* current(agentId)
        const size = head?.tree_size ?? 0
        // Nothing to check (an unknown id, an empty log): never cached, so made-up ids cannot evict real audits.
        if (size === 0) return { head, keys, audit: startAudit(agentId) }
        const ringId = ringIdOf(keys)
        for (;;) {
          const cached = hit(agentId, size, ringId, yield* Clock.currentTimeMillis)
          if (cached !== undefined) return { head, keys, audit: cached.audit }
          const inFlight = running.get(agentId)
          if (inFlight !== undefined) {
            // Another request's pass: its result, or the cache it leaves, may be ours.
            const done = yield* Effect.exit(Deferred.await(inFlight))
            if (Exit.isSuccess(done) && done.value.size === size && done.value.ring === ringId)
              return { head, keys, audit: done.value.audit }
            if (Exit.isFailure(done)) return yield* Effect.failCause(done.cause)
            continue
          }
          const deferred = yield* Deferred.make<Entry, StoreError>()
          running.set(agentId, deferred)
          yield* pass(agentId, size, keys).pipe(
            Effect.exit,
            Effect.flatMap((exit) =>
              Effect.sync(() => running.delete(agentId)).pipe(Effect.zipRight(Deferred.done(deferred, exit)))
            ),
            Effect.forkIn(scope)
          )
          const entry = yield* Deferred.await(deferred)
          return { head, keys, audit: entry.audit }
        }
      })

    const isCurrent = (agentId: string) =>
      Effect.gen(function* () {
        const { head, keys } = yield* current(agentId)
        const entry = cache.get(agentId)
        if ((head?.tree_size ?? 0) === 0) return true
        return (
          fresh(entry, yield* Clock.currentTimeMillis) &&
          entry.size === (head?.tree_size ?? 0) &&
          entry.ring === ringIdOf(keys)
        )
      })

    return ChainVerifier.of({ verify, isCurrent })
  })

/** One per API process (the verify route and the reputation page share it). */
export const layer = (
  options: Partial<ChainVerifierOptions> = {}
): Layer.Layer<ChainVerifier, never, Store | ProofRepo.ProofRepo | KeyRepo.KeyRepo> =>
  Layer.scoped(ChainVerifier, make({ ...defaultChainVerifierOptions, ...options }))
