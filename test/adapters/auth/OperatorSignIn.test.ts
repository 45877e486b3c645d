/**
 * The local operator's sign-in store: a code is good once and for 15 minutes, a session for its
 * lifetime; failed exchanges are throttled for the process without burning the code.
 */
import { describe, expect, it } from "@effect/vitest"
import { makeOperatorSignIn } from "../../../adapters/auth/OperatorSignIn.js"

const clock = () => {
  let now = Date.parse("2026-11-24T12:00:00.000Z")
  return { now: () => now, advance: (ms: number) => void (now += ms) }
}

describe("operator sign-in", () => {
  it("exchanges a code once for a session that lasts its lifetime", () => {
    const time = clock()
    const store = makeOperatorSignIn({ now: time.now, sessionTtlMs: 60_000 })
    const { code, expiresAt } = store.issueCode()
    expect(code).toMatch(/^[A-Za-z0-9_-]{32}$/)
    expect(expiresAt - time.now()).toBe(15 * 60_000)
    const session = store.exchange(code)
    if (session._tag !== "Session") throw new Error(session._tag)
    expect(session.token).toMatch(/^cos_[A-Za-z0-9_-]{43}$/)
    expect(store.session(session.token)).toBe(session.expiresAt)
    expect(store.exchange(code)._tag).toBe("Refused")
    time.advance(59_999)
    expect(store.session(session.token)).toBe(session.expiresAt)
    time.advance(1)
    expect(store.session(session.token)).toBeUndefined()
    expect(store.session("cos_unknown")).toBeUndefined()
  })

  it("refuses an expired code, and an older code once a new one is issued", () => {
    const time = clock()
    const store = makeOperatorSignIn({ now: time.now })
    const first = store.issueCode().code
    const second = store.issueCode().code
    expect(store.exchange(first)._tag).toBe("Refused")
    time.advance(15 * 60_000)
    expect(store.exchange(second)._tag).toBe("Refused")
  })

  it("throttles failed exchanges for the process without burning the code", () => {
    const time = clock()
    const store = makeOperatorSignIn({ now: time.now, maxFailures: 3, failureWindowMs: 60_000 })
    const { code } = store.issueCode()
    for (const guess of ["a", "b", "x".repeat(500)]) expect(store.exchange(guess)._tag).toBe("Refused")
    // Even the right code waits: throttling must not tell a guesser anything.
    expect(store.exchange(code)).toEqual({ _tag: "Throttled", retryAfterSeconds: 60 })
    time.advance(30_500)
    expect(store.exchange(code)).toEqual({ _tag: "Throttled", retryAfterSeconds: 30 })
    time.advance(29_500)
    expect(store.exchange(code)._tag).toBe("Session")
  })
})
