/**
 * Requests per second per credential (docs/api.md, "Limits"): a token bucket per credential whose
 * rate is the plan's (Free 10/s, Developer 50/s, Team 200/s, Enterprise configured) and whose
 * capacity is one second of that rate (at least one request), so a client may burst up to its rate and then proceeds at it.
 *
 * Buckets live in this process: with several API processes behind a load balancer each enforces the
 * rate on its own share (documented in docs/api.md). Time comes from `Clock`, so tests use TestClock.
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
    /** Takes one token from `credential`'s bucket, refilled at `perSecond`. */
    readonly take: (credential: string, perSecond: number) => Effect.Effect<RateDecision>
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
}

/** Buckets idle this long are full again, so they are dropped to bound memory. */
const IDLE_MS = 60_000

export const make = Effect.sync(() => {
  const buckets = new Map<string, Bucket>()
  let sweptAt = 0
  const sweep = (now: number) => {
    if (now - sweptAt < IDLE_MS) return
    sweptAt = now
    for (const [key, bucket] of buckets) if (now - bucket.at > IDLE_MS) buckets.delete(key)
  }
  return RateLimiter.of({
    take: (credential, perSecond) =>
      Effect.map(Clock.currentTimeMillis, (now): RateDecision => {
        if (!Number.isFinite(perSecond) || perSecond <= 0) return { allowed: true }
        sweep(now)
        // One second's worth, and room for at least one request.
        const capacity = Math.max(1, perSecond)
        const bucket = buckets.get(credential) ?? { tokens: capacity, at: now, perSecond }
        // A plan change applies at once, with the bucket's fill kept within the new capacity.
        bucket.tokens = Math.min(capacity, bucket.tokens + ((now - bucket.at) / 1000) * perSecond)
        bucket.at = now
        bucket.perSecond = perSecond
        buckets.set(credential, bucket)
        if (bucket.tokens >= 1) {
          bucket.tokens -= 1
          return { allowed: true }
        }
        return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / perSecond)) }
      })
  })
})

export const layer: Layer.Layer<RateLimiter> = Layer.effect(RateLimiter, make)
