/**
 * The on-chain send budget per organization (issue 24): `perHour` sends at once, then one every
 * 3600 / `perHour` seconds; a batch of several organizations takes one send from each, or none when
 * one has none left; Retry-After is when every payer has a send again. Time is the TestClock.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"
import * as ChainSendBudget from "../../../adapters/chain/ChainSendBudget.js"

describe("ChainSendBudget", () => {
  it.effect("allows perHour sends at once per payer, then one per 3600/perHour seconds", () =>
    Effect.gen(function* () {
      const budget = yield* ChainSendBudget.make(4)
      for (let i = 0; i < 4; i++) expect(yield* budget.take(["org:a"])).toEqual({ allowed: true })
      expect(yield* budget.take(["org:a"])).toEqual({ allowed: false, retryAfterSeconds: 900 })
      // Another organization has its own sends.
      expect(yield* budget.take(["org:b"])).toEqual({ allowed: true })
      yield* TestClock.adjust("899 seconds")
      expect(yield* budget.take(["org:a"])).toEqual({ allowed: false, retryAfterSeconds: 1 })
      yield* TestClock.adjust("1 second")
      expect(yield* budget.take(["org:a"])).toEqual({ allowed: true })
      expect((yield* budget.take(["org:a"])).allowed).toBe(false)
    })
  )

  it.effect("a batch of several payers takes from each, or from none when one is empty", () =>
    Effect.gen(function* () {
      const budget = yield* ChainSendBudget.make(2)
      expect(yield* budget.take(["org:a", "org:a", "user:u"])).toEqual({ allowed: true })
      expect(yield* budget.take(["org:a"])).toEqual({ allowed: true })
      // org:a is empty: user:u is not charged for the refused batch.
      expect(yield* budget.take(["user:u", "org:a"])).toEqual({ allowed: false, retryAfterSeconds: 1800 })
      expect(yield* budget.take(["user:u"])).toEqual({ allowed: true })
      expect(yield* budget.take(["user:u"])).toMatchObject({ allowed: false })
    })
  )

  it.effect("a payer idle for an hour is full again (and its bucket is forgotten)", () =>
    Effect.gen(function* () {
      const budget = yield* ChainSendBudget.make(1)
      expect((yield* budget.take(["org:a"])).allowed).toBe(true)
      expect((yield* budget.take(["org:a"])).allowed).toBe(false)
      yield* TestClock.adjust("1 hour")
      expect((yield* budget.take(["org:a"])).allowed).toBe(true)
    })
  )
})
