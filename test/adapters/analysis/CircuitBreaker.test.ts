import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Either, Fiber, TestClock } from "effect"
import { makeCircuitBreaker } from "../../../adapters/analysis/CircuitBreaker.js"

const fail = Effect.fail("boom" as const)

describe("circuit breaker", () => {
  it.effect("opens after the threshold, rejects, half-opens after resetAfter, failed trial reopens", () =>
    Effect.gen(function* () {
      const breaker = yield* makeCircuitBreaker({ threshold: 5, resetAfter: "60 seconds" })
      for (let i = 0; i < 4; i++) yield* Effect.either(breaker.protect(fail))
      expect(yield* breaker.state).toEqual({ _tag: "Closed", failures: 4 })
      yield* Effect.either(breaker.protect(fail))
      expect((yield* breaker.state)._tag).toBe("Open")
      const rejected = yield* Effect.either(breaker.protect(Effect.succeed(1)))
      expect(Either.isLeft(rejected) && rejected.left).toMatchObject({ _tag: "CircuitOpen", retryAt: 60_000 })
      yield* TestClock.adjust("60 seconds")
      yield* Effect.either(breaker.protect(fail))
      expect(yield* breaker.state).toEqual({ _tag: "Open", until: 120_000 })
      yield* TestClock.adjust("60 seconds")
      expect(yield* breaker.protect(Effect.succeed(7))).toBe(7)
      expect(yield* breaker.state).toEqual({ _tag: "Closed", failures: 0 })
    })
  )

  it.effect("half-open lets exactly one trial through", () =>
    Effect.gen(function* () {
      const breaker = yield* makeCircuitBreaker({ threshold: 1, resetAfter: "1 second" })
      yield* Effect.either(breaker.protect(fail))
      yield* TestClock.adjust("1 second")
      const gate = yield* Deferred.make<void>()
      const trial = yield* Effect.fork(breaker.protect(Deferred.await(gate)))
      yield* Effect.yieldNow()
      const second = yield* Effect.either(breaker.protect(Effect.succeed(1)))
      expect(Either.isLeft(second)).toBe(true)
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(trial)
      expect((yield* breaker.state)._tag).toBe("Closed")
    })
  )

  it.effect("errors the caller does not count leave it closed", () =>
    Effect.gen(function* () {
      const breaker = yield* makeCircuitBreaker({ threshold: 2 })
      for (let i = 0; i < 5; i++) yield* Effect.either(breaker.protect(fail, () => false))
      expect(yield* breaker.state).toEqual({ _tag: "Closed", failures: 0 })
    })
  )

  it.effect("an interrupted trial counts as a failure", () =>
    Effect.gen(function* () {
      const breaker = yield* makeCircuitBreaker({ threshold: 1, resetAfter: "1 second" })
      yield* Effect.either(breaker.protect(fail))
      yield* TestClock.adjust("1 second")
      const trial = yield* Effect.fork(breaker.protect(Effect.never))
      yield* Effect.yieldNow()
      yield* Fiber.interrupt(trial)
      expect((yield* breaker.state)._tag).toBe("Open")
    })
  )
})
