/**
 * Token buckets, one per key: the API's requests per second per credential (docs/api.md, "Limits":
 * a bucket whose rate is the plan's, Free 10/s, Developer 50/s, Team 200/s, Enterprise configured,
 * and whose capacity is one second of that rate) and the public routes' per-client limits
 * (src/http/PublicRateLimit.ts: a rate and a burst per class of route).
 *
 * Buckets live in this process: with several API processes behind a load balancer each enforces the
 * rate on its own share (documented in docs/api.md). Time comes from `Clock`, so tests use TestClock.
 *
 * Memory is bounded whatever the callers send: at most `maxBuckets` buckets. A bucket that has
 * refilled completely holds no information (a new one would be the same), so those are dropped
 * first, least recently used first. When every bucket still holds a debt (a flood of distinct keys,
 * each spending), a new key shares one overflow bucket of its rate with every other newcomer, so
 * the flood cannot buy fresh bursts by minting keys, and the keys already known keep their own.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

export type RateDecision =
  | { readonly allowed: true }
  /** Whole seconds until one request is allowed again (at least 1): the `Retry-After` header. */
  | { readonly allowed: false; readonly retryAfterSeconds: number }

export class RateLimiter extends Context.Tag("candor/adapters/auth/RateLimiter")<
  RateLimiter,
  {
    /**
     * Takes one token from `key`'s bucket, refilled at `perSecond` up to `capacity` (default: one
     * second's worth, at least one). A rate that is not a positive number allows everything.
     */
    readonly take: (key: string, perSecond: number, capacity?: number) => Effect.Effect<RateDecision>
    /** Whether `key`'s bucket holds a token, without taking it. */
    readonly peek: (key: string, perSecond: number, capacity?: number) => Effect.Effect<RateDecision>
    /** Gives back a token taken for a request that, after all, should not count (kept within the capacity). */
    readonly refund: (key: string, perSecond: number, capacity?: number) => Effect.Effect<void>
    /** How many buckets are kept (bounded by `maxBuckets`, plus one overflow bucket per rate). */
    readonly size: Effect.Effect<number>
  }
>() {}

/** The requests per second of each shipped plan; Enterprise's is configured (`ENTERPRISE_RATE_LIMIT`). */
export const planRates = (enterprisePerSecond: number): Readonly<Record<string, number>> => ({
  free: 10,
  developer: 50,
  team: 200,
  enterprise: enterprisePerSecond
})

interface Bucket {
  tokens: number
  at: number
  perSecond: number
  capacity: number
}

export interface RateLimiterOptions {
  /** Buckets kept at most (default 100,000: a few MB). */
  readonly maxBuckets: number
}

export const DEFAULT_MAX_BUCKETS = 100_000

/** Buckets idle this long are swept (when full again), at most once per this period. */
const SWEEP_MS = 60_000
/** Least recently used buckets looked at for a full one when the table is full. */
const EVICTION_PROBES = 8

const refilled = (bucket: Bucket, now: number): number =>
  Math.min(bucket.capacity, bucket.tokens + ((now - bucket.at) / 1000) * bucket.perSecond)

export const makeWith = (options: RateLimiterOptions) =>
  Effect.sync(() => {
    // A Map iterates in insertion order: re-inserting on use keeps the least recently used first.
    const buckets = new Map<string, Bucket>()
    let sweptAt = 0
    const sweep = (now: number) => {
      if (now - sweptAt < SWEEP_MS) return
      sweptAt = now
      for (const [key, bucket] of buckets) if (refilled(bucket, now) >= bucket.capacity) buckets.delete(key)
    }
    /** Room for one more bucket: a full one dropped, else false. */
    const makeRoom = (now: number): boolean => {
      if (buckets.size < options.maxBuckets) return true
      let probes = 0
      for (const [key, bucket] of buckets) {
        if (refilled(bucket, now) >= bucket.capacity) {
          buckets.delete(key)
          return true
        }
        if (++probes >= EVICTION_PROBES) break
      }
      return false
    }
    const bucketOf = (key: string, perSecond: number, capacity: number, now: number): Bucket => {
      const known = buckets.get(key)
      if (known !== undefined) {
        buckets.delete(key)
        buckets.set(key, known)
        return known
      }
      const fresh: Bucket = { tokens: capacity, at: now, perSecond, capacity }
      if (makeRoom(now)) {
        buckets.set(key, fresh)
        return fresh
      }
      const overflowKey = `\u0000overflow:${perSecond}:${capacity}`
      const overflow = buckets.get(overflowKey)
      if (overflow !== undefined) return overflow
      // The overflow bucket itself may exceed the bound by one per distinct rate (a handful).
      buckets.set(overflowKey, fresh)
      return fresh
    }
    const decide =
      (spend: boolean) =>
      (key: string, perSecond: number, capacity?: number): Effect.Effect<RateDecision> =>
        Effect.map(Clock.currentTimeMillis, (now): RateDecision => {
          if (!Number.isFinite(perSecond) || perSecond <= 0) return { allowed: true }
          sweep(now)
          const size = Math.max(1, capacity ?? perSecond)
          const bucket = bucketOf(key, perSecond, size, now)
          // A rate change (a plan upgrade) applies at once, with the bucket's fill kept within the new capacity.
          bucket.tokens = Math.min(size, refilled(bucket, now))
          bucket.at = now
          bucket.perSecond = perSecond
          bucket.capacity = size
          if (bucket.tokens >= 1) {
            if (spend) bucket.tokens -= 1
            return { allowed: true }
          }
          return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / perSecond)) }
        })
    const refund = (key: string, perSecond: number, capacity?: number): Effect.Effect<void> =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        const bucket = buckets.get(key)
        if (bucket === undefined || !Number.isFinite(perSecond) || perSecond <= 0) return
        bucket.tokens = Math.min(Math.max(1, capacity ?? perSecond), refilled(bucket, now) + 1)
        bucket.at = now
      })
    return RateLimiter.of({ take: decide(true), peek: decide(false), refund, size: Effect.sync(() => buckets.size) })
  })

export const make = makeWith({ maxBuckets: DEFAULT_MAX_BUCKETS })

export const layer: Layer.Layer<RateLimiter> = Layer.effect(RateLimiter, make)
