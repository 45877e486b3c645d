/**
 * The console's requests (console/src/Api.ts) under the API's rate limit: a request refused with 429
 * is sent again after the answer's Retry-After, a few times at most (every 429 of the API refuses
 * before anything is done, so a write too); a sign-in being checked is not repeated. Driven
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

  it("a write refused with 429 is sent again after Retry-After, with the same body", async () => {
    const bodies: Array<unknown> = []
    const answers = [() => answer(429, { error: "rate limited" }, { "retry-after": "1" }), () => answer(200, { ok: 1 })]
    vi.stubGlobal("fetch", (_path: string, init: RequestInit) => {
      bodies.push(`${init.method} ${String(init.body)} ${(init.headers as Record<string, string>)["content-type"]}`)
      return Promise.resolve(answers.shift()!())
    })
    const result = api("/v1/agents/agt-1/policy", {
      method: "PUT",
      text: { contentType: "application/yaml", body: "forbidden: []\n" }
    })
    await vi.advanceTimersByTimeAsync(999)
    expect(bodies).toHaveLength(1)
    await vi.advanceTimersByTimeAsync(1)
    expect(await result).toEqual({ ok: 1 })
    expect(bodies).toEqual(["PUT forbidden: []\n application/yaml", "PUT forbidden: []\n application/yaml"])
  })

  it("a sign-in refused with 429 is not repeated: the failed sign-ins' throttle, the person decides", async () => {
    for (const options of [
      { method: "POST" as const, body: { code: "x" }, anonymous: true },
      { method: "POST" as const, credential: { value: "t" } }
    ]) {
      const calls = fakeFetch([() => answer(429, { error: "too many failed sign-ins" }, { "retry-after": "1" })])
      const error = await api("/v1/console/sessions", options).catch((failure: unknown) => failure)
      expect((error as ApiError).status).toBe(429)
      expect(calls).toEqual(["POST /v1/console/sessions"])
    }
  })
})
