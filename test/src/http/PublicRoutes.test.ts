/** CANDOR_PUBLIC_RATE_LIMITS and CANDOR_TRUSTED_PROXIES as the configuration reads them. */
import { describe, expect, it } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { config } from "../../../src/Config.js"
import {
  DEFAULT_PUBLIC_RATE_LIMITS,
  formatPublicRateLimits,
  parsePublicRateLimits
} from "../../../src/http/PublicRoutes.js"

const decode = (env: Record<string, string>) =>
  Effect.withConfigProvider(config, ConfigProvider.fromMap(new Map(Object.entries(env))))

describe("public rate limits", () => {
  it("override the defaults class by class; 0 per minute turns a class off", () => {
    const limits = Either.getOrThrow(parsePublicRateLimits("chain=30/5, record=0/1"))
    expect(limits.chain).toStrictEqual({ perMinute: 30, burst: 5 })
    expect(limits.record).toStrictEqual({ perMinute: 0, burst: 1 })
    expect(limits.listing).toStrictEqual(DEFAULT_PUBLIC_RATE_LIMITS.listing)
    // The default column of docs/configuration.md is what the parser reads back.
    expect(Either.getOrThrow(parsePublicRateLimits(formatPublicRateLimits(DEFAULT_PUBLIC_RATE_LIMITS)))).toStrictEqual(
      DEFAULT_PUBLIC_RATE_LIMITS
    )
  })

  it("refuses unknown classes and malformed entries, naming them", () => {
    expect(Either.getLeft(parsePublicRateLimits("chian=1/1"))).toStrictEqual(
      Either.getLeft(
        Either.left('unknown class "chian" (classes: record, listing, chain, verify, static, health, sign_in, other)')
      )
    )
    expect(Either.isLeft(parsePublicRateLimits("chain=10"))).toBe(true)
    expect(Either.isLeft(parsePublicRateLimits("chain=10/0"))).toBe(true)
    expect(Either.isLeft(parsePublicRateLimits("chain=-1/2"))).toBe(true)
  })

  it.effect("are read from the environment with the trusted proxies; a bad value names its variable", () =>
    Effect.gen(function* () {
      const settings = yield* decode({
        CANDOR_PUBLIC_RATE_LIMITS: "chain=20/4",
        CANDOR_TRUSTED_PROXIES: "10.0.0.0/8,::1"
      })
      expect(settings.publicRateLimits.chain).toStrictEqual({ perMinute: 20, burst: 4 })
      expect(settings.trustedProxies.cidrs).toStrictEqual(["10.0.0.0/8", "::1/128"])
      const bad = String(yield* Effect.flip(decode({ CANDOR_TRUSTED_PROXIES: "10.0.0.0/40" })))
      expect(bad).toContain("CANDOR_TRUSTED_PROXIES")
      const badLimits = String(yield* Effect.flip(decode({ CANDOR_PUBLIC_RATE_LIMITS: "all=1/1" })))
      expect(badLimits).toContain("CANDOR_PUBLIC_RATE_LIMITS")
    })
  )
})
