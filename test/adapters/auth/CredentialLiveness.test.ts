/**
 * What keeps a long-lived request's access honest (issue 24, "Access ends when the credential
 * does"): the re-check loop runs at least every interval and at the credential's own end, and stops
 * on the first end (or on a check that cannot be made); the organization-key rule; the checks that
 * need no store (a JWT's `exp`, an operator session's expiry). Time is the TestClock.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"
import { keyRefusal, liveness, type Liveness, untilEnded } from "../../../adapters/auth/CredentialLiveness.js"
import { CredentialRepo, type KeyWithCreator } from "../../../adapters/store/identity/CredentialRepo.js"

const key = (role: KeyWithCreator["role"], creator: KeyWithCreator["creator_role"], orgId: string | null = "org_1") =>
  ({
    key_id: "key_1",
    name: "k",
    prefix: "cnd_abcd",
    user_id: "u1",
    org_id: orgId,
    role,
    created_at: "2026-01-01T00:00:00.000Z",
    last_used_at: null,
    revoked_at: null,
    creator_role: creator
  }) satisfies KeyWithCreator

/** Not one store read is expected of the principals checked without it. */
const noStore = Layer.succeed(CredentialRepo, new Proxy({}, { get: () => () => Effect.die("no store") }) as never)

describe("untilEnded", () => {
  it.effect("checks at once, then every interval, and returns the first end's reason", () =>
    Effect.gen(function* () {
      const checked: Array<number> = []
      const check = (now: number) =>
        Effect.sync((): Liveness => {
          checked.push(now)
          return checked.length < 3 ? { _tag: "Live", until: undefined } : { _tag: "Ended", reason: "revoked" }
        })
      const fiber = yield* Effect.fork(untilEnded(check, 30_000))
      yield* TestClock.adjust(0)
      expect(checked).toEqual([0])
      yield* TestClock.adjust(29_999)
      expect(checked).toEqual([0])
      yield* TestClock.adjust(1)
      expect(checked).toEqual([0, 30_000])
      yield* TestClock.adjust(30_000)
      expect(yield* Fiber.join(fiber)).toBe("revoked")
      expect(checked).toEqual([0, 30_000, 60_000])
    })
  )

  it.effect("checks at a credential's own end when it comes before the interval", () =>
    Effect.gen(function* () {
      const expiresAt = 5_000
      const fiber = yield* Effect.fork(
        untilEnded(
          (now) =>
            Effect.succeed<Liveness>(
              now < expiresAt ? { _tag: "Live", until: expiresAt } : { _tag: "Ended", reason: "token expired" }
            ),
          30_000
        )
      )
      yield* TestClock.adjust(5_000)
      expect(fiber.unsafePoll()).toBeNull()
      yield* TestClock.adjust(1)
      expect(yield* Fiber.join(fiber)).toBe("token expired")
    })
  )

  it.effect("a check that fails ends access (it cannot be confirmed)", () =>
    Effect.gen(function* () {
      const reason = yield* untilEnded(() => Effect.fail("store down"), 30_000)
      expect(reason).toBe("the credential could not be checked again")
    })
  )
})

describe("liveness without the store", () => {
  it.effect("a JWT holds until its exp; an operator session until its expiry; the service-role key always", () =>
    Effect.gen(function* () {
      const user = {
        kind: "user",
        userId: "u",
        email: undefined,
        impersonation: undefined,
        expiresAt: 10_000
      } as const
      expect(yield* liveness(user, 9_999)).toEqual({ _tag: "Live", until: 10_000 })
      expect(yield* liveness(user, 10_000)).toEqual({ _tag: "Ended", reason: "token expired" })
      const operator = { kind: "service", operatorSession: { expires_at: new Date(20_000).toISOString() } } as const
      expect(yield* liveness(operator, 19_999)).toEqual({ _tag: "Live", until: 20_000 })
      expect((yield* liveness(operator, 20_000))._tag).toBe("Ended")
      expect(yield* liveness({ kind: "service" }, Number.MAX_SAFE_INTEGER)).toEqual({ _tag: "Live", until: undefined })
      const keyless = { kind: "api_key", keyId: "k", userId: "u", orgId: undefined, role: undefined } as const
      expect(yield* liveness(keyless, 0)).toEqual({ _tag: "Ended", reason: "invalid API key" })
    }).pipe(Effect.provide(noStore))
  )
})

describe("keyRefusal: an organization key acts only while its creator holds the role it was created under", () => {
  it("keeps personal keys and keys within the creator's role; stops the others, saying why", () => {
    expect(keyRefusal(key(null, null, null))).toBeUndefined()
    expect(keyRefusal(key("admin", "admin"))).toBeUndefined()
    expect(keyRefusal(key("member", "admin"))).toBeUndefined()
    expect(keyRefusal(key("admin", "owner"))).toBeUndefined()
    expect(keyRefusal(key("admin", null))).toBe(
      "API key stopped: its creator is no longer a member of its organization"
    )
    expect(keyRefusal(key("admin", "member"))).toBe(
      "API key stopped: its creator no longer holds the admin role it was created under"
    )
    expect(keyRefusal(key("owner", "admin"))).toContain("owner role")
  })
})
