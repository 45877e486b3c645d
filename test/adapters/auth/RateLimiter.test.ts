/** The token bucket: burst of one second's worth, refill at the rate, Retry-After in whole seconds (TestClock). */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"
import { make, makeWith, planRates } from "../../../adapters/auth/RateLimiter.js"

describe("RateLimiter", () => {
  it.effect("allows a burst of `rate`, then refuses until tokens refill", () =>
    Effect.gen(function* () {
      const limiter = yield* make
      for (let i = 0; i < 10; i++) expect((yield* limiter.take("a", 10)).allowed).toBe(true)
      expect(yield* limiter.take("a", 10)).toStrictEqual({ allowed: false, retryAfterSeconds: 1 })
      // Another credential is untouched.
      expect((yield* limiter.take("b", 10)).allowed).toBe(true)
      yield* TestClock.adjust("100 millis")
      expect((yield* limiter.take("a", 10)).allowed).toBe(true)
      expect((yield* limiter.take("a", 10)).allowed).toBe(false)
      yield* TestClock.adjust("10 seconds")
      // Refill is capped at one second's worth.
      let allowed = 0
      for (let i = 0; i < 20; i++) if ((yield* limiter.take("a", 10)).allowed) allowed++
      expect(allowed).toBe(10)
    })
  )

  it.effect("a rate under one per second asks to wait several seconds", () =>
    Effect.gen(function* () {
      const limiter = yield* make
      expect((yield* limiter.take("slow", 0.25)).allowed).toBe(true)
      expect(yield* limiter.take("slow", 0.25)).toStrictEqual({ allowed: false, retryAfterSeconds: 4 })
      yield* TestClock.adjust("4 seconds")
      expect((yield* limiter.take("slow", 0.25)).allowed).toBe(true)
    })
  )

  it("ships the spec's plan rates", () => {
    expect(planRates(1234)).toStrictEqual({ free: 10, developer: 50, team: 200, enterprise: 1234 })
  })
})

describe("RateLimiter with a burst and bounded memory", () => {
  it.effect("a burst larger than one second's worth, refilled at the rate; peek takes nothing", () =>
    Effect.gen(function* () {
      const limiter = yield* make
      // 10 a minute, burst 10: the chain class.
      for (let i = 0; i < 10; i++) expect((yield* limiter.take("c", 10 / 60, 10)).allowed).toBe(true)
      expect(yield* limiter.peek("c", 10 / 60, 10)).toStrictEqual({ allowed: false, retryAfterSeconds: 6 })
      expect(yield* limiter.take("c", 10 / 60, 10)).toStrictEqual({ allowed: false, retryAfterSeconds: 6 })
      yield* TestClock.adjust("6 seconds")
      expect((yield* limiter.peek("c", 10 / 60, 10)).allowed).toBe(true)
      expect((yield* limiter.peek("c", 10 / 60, 10)).allowed).toBe(true)
      expect((yield* limiter.take("c", 10 / 60, 10)).allowed).toBe(true)
      expect((yield* limiter.take("c", 10 / 60, 10)).allowed).toBe(false)
    })
  )

  it.effect("a refund gives back one token, never beyond the capacity", () =>
    Effect.gen(function* () {
      const limiter = yield* make
      for (let i = 0; i < 3; i++) expect((yield* limiter.take("r", 1, 3)).allowed).toBe(true)
      expect((yield* limiter.take("r", 1, 3)).allowed).toBe(false)
      yield* limiter.refund("r", 1, 3)
      expect((yield* limiter.take("r", 1, 3)).allowed).toBe(true)
      yield* TestClock.adjust("10 seconds")
      yield* limiter.refund("r", 1, 3)
      let allowed = 0
      for (let i = 0; i < 5; i++) if ((yield* limiter.take("r", 1, 3)).allowed) allowed++
      expect(allowed).toBe(3)
    })
  )

  it.effect("a flood of distinct keys keeps at most maxBuckets, and newcomers then share one overflow bucket", () =>
    Effect.gen(function* () {
      const limiter = yield* makeWith({ maxBuckets: 1000 })
      // 100,000 distinct clients, each spending: memory stays bounded.
      for (let i = 0; i < 100_000; i++) yield* limiter.take(`flood-${i}`, 1, 5)
      expect(yield* limiter.size).toBeLessThanOrEqual(1001)
      // The overflow bucket (5 tokens) was spent by the flood: a newcomer is refused…
      expect((yield* limiter.take("newcomer", 1, 5)).allowed).toBe(false)
      // …while the clients the table holds keep their own buckets.
      expect((yield* limiter.take("flood-0", 1, 5)).allowed).toBe(true)
      // Once buckets refill they carry nothing and make room: the newcomer gets its own.
      yield* TestClock.adjust("10 seconds")
      for (let i = 0; i < 5; i++) expect((yield* limiter.take("newcomer", 1, 5)).allowed).toBe(true)
      expect((yield* limiter.take("newcomer", 1, 5)).allowed).toBe(false)
      expect(yield* limiter.size).toBeLessThanOrEqual(1001)
    })
  )
})
