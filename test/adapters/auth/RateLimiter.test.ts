/** The token bucket: burst of one second's worth, refill at the rate, Retry-After in whole seconds (TestClock). */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"
import { make, planRates } from "../../../adapters/auth/RateLimiter.js"

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
