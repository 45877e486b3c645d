/**
 * The console's requests (console/src/Api.ts) under the API's rate limit: a read refused with 429 is
 * sent again after the answer's Retry-After, a few times at most; a write is never repeated. Driven
 * by a fake `fetch` and vitest's fake timers (restored after each test: the fast lane shares globals
 * between files).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest"
import { api, ApiError } from "../../console/src/Api.js"

const answer = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } })

const fakeFetch = (answers: Array<() => Response>) => {
  const calls: Array<string> = []
  vi.stubGlobal("fetch", (path: string, init: RequestInit) => {
    calls.push(`${init.method} ${path}`)
    const next = answers.shift()
    if (next === undefined) throw new Error("no answer left")
    return Promise.resolve(next())
  })
  return calls
}

beforeEach(() => {
  vi.useFakeTimers()
  vi.stubGlobal("sessionStorage", { getItem: () => null, setItem: () => {}, removeItem: () => {} })
})
afterEach(() => {
  vi.useRealTimers()
  vi.unstubAllGlobals()
})

describe("console requests under the rate limit", () => {
  it("a read refused with 429 is sent again after Retry-After", async () => {
    const calls = fakeFetch([
      () => answer(429, { error: "rate limited" }, { "retry-after": "2" }),
      () => answer(200, { ok: true })
    ])
    const result = api<{ ok: boolean }>("/v1/agents")
    await vi.advanceTimersByTimeAsync(1_999)
    expect(calls).toHaveLength(1)
    await vi.advanceTimersByTimeAsync(1)
    expect(await result).toEqual({ ok: true })
    expect(calls).toEqual(["GET /v1/agents", "GET /v1/agents"])
  })

  it("gives up after three retries with the API's error", async () => {
    const calls = fakeFetch(Array.from({ length: 4 }, () => () => answer(429, { error: "rate limited" })))
    const result = api("/v1/agents").catch((error: unknown) => error)
    await vi.advanceTimersByTimeAsync(3_000)
    const error = await result
    expect(error).toBeInstanceOf(ApiError)
    expect((error as ApiError).status).toBe(429)
    expect((error as ApiError).message).toBe("rate limited")
    expect(calls).toHaveLength(4)
  })

  it("a write refused with 429 is not repeated", async () => {
    const calls = fakeFetch([() => answer(429, { error: "rate limited" }, { "retry-after": "1" })])
    const error = await api("/v1/agents/agt-1", { method: "PATCH", body: { display_name: "x" } }).catch(
      (failure: unknown) => failure
    )
    expect((error as ApiError).status).toBe(429)
    expect(calls).toEqual(["PATCH /v1/agents/agt-1"])
  })
})
