/**
 * Request bytes in flight at the gateway (issue 24: up to 32 MiB was buffered per request with no
 * budget). Per credential (the key's hash: a new `x-candor-agent` label buys nothing), per
 * organization and per process, over real HTTP with the real Inspector: past a cap the answer is 429
 * (credential, organization) or 503 (process) `{error}` with `Retry-After`, before the rest of the
 * body is read and without calling the provider; the budget comes back when the exchange ends.
 * Upstream answers are held open by the test, so "in flight" is a fact, not a race.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import { request as httpRequest, type ServerResponse } from "node:http"
import { AgentState } from "../../../adapters/bus/AgentState.js"
import { agentIdOf } from "../../../adapters/gateway/AgentIdentity.js"
import { InFlightBytes } from "../../../adapters/gateway/InFlightBytes.js"
import { Inspector } from "../../../adapters/gateway/Inspector.js"
import { sha256Hex } from "../../../adapters/providers/Identity.js"
import { inspectorWithFakes } from "./Fakes.js"
import {
  call,
  deferred,
  type FakeUpstream,
  type RawResponse,
  startGateway,
  startUpstream,
  type TestGateway
} from "./Harness.js"

const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(effect)
const KIB = 1024

describe("InFlightBytes", () => {
  const limits = { perCredential: 100, perOrg: 150, total: 200 }
  const a = { credential: "a", org: "o" }
  const b = { credential: "b", org: "o" }
  const c = { credential: "c", org: undefined }

  it("takes per credential, organization and process, refusing the first cap a take would pass", () => {
    const budget = new InFlightBytes(limits)
    expect(budget.take(a, 80)).toBeUndefined()
    expect(budget.take(a, 30)).toBe("credential")
    expect(budget.take(b, 80)).toBe("organization")
    expect(budget.take(b, 70)).toBeUndefined()
    expect(budget.take(c, 51)).toBe("process")
    expect(budget.take(c, 50)).toBeUndefined()
    expect(budget.held(a)).toEqual({ total: 200, credential: 80, org: 150 })
  })

  it("gives back what it took, and forgets holders at zero", () => {
    const budget = new InFlightBytes(limits)
    budget.take(a, 100)
    budget.release(a, 100)
    expect(budget.held(a)).toEqual({ total: 0, credential: 0, org: 0 })
    expect(budget.take(a, 100)).toBeUndefined()
  })

  it("requests without a key share one credential's budget", () => {
    const budget = new InFlightBytes(limits)
    expect(budget.take({ credential: undefined, org: undefined }, 100)).toBeUndefined()
    expect(budget.wouldPass({ credential: undefined, org: undefined }, 1)).toBe("credential")
    expect(budget.wouldPass(c, 100)).toBeUndefined()
  })
})

let scope: Scope.CloseableScope
let upstream: FakeUpstream
let gateway: TestGateway
let state: AgentState["Type"]
/** Upstream answers not yet given, oldest first; `arrived` resolves on each request. */
const pending: Array<ServerResponse> = []
let arrived = deferred()

beforeAll(async () => {
  scope = await run(Scope.make())
  const context = await run(Layer.buildWithScope(inspectorWithFakes, scope))
  state = Context.get(context, AgentState)
  upstream = await startUpstream((_r, res) => {
    pending.push(res)
    const signal = arrived
    arrived = deferred()
    signal.resolve()
  })
  gateway = await startGateway(upstream.url, Context.get(context, Inspector), {
    inFlight: { perCredential: 1024 * KIB, perOrg: 1536 * KIB, total: 2048 * KIB }
  })
})
afterAll(async () => {
  for (const res of pending.splice(0)) res.end("{}")
  await gateway.close()
  await upstream.close()
  await run(Scope.close(scope, Exit.void))
})

const headers = (key: string, label?: string) => ({
  "content-type": "application/json",
  "x-api-key": key,
  ...(label === undefined ? {} : { "x-candor-agent": label })
})
const body = (bytes: number) =>
  JSON.stringify({ model: "m", messages: [{ role: "user", content: "x".repeat(bytes - 60) }] })

/** Sends a request and waits until the upstream holds it (its bytes are in flight until `release`). */
const hold = async (key: string, bytes: number, label?: string) => {
  const signal = arrived.promise
  const answer = call(`${gateway.url}/anthropic/v1/messages`, {
    method: "POST",
    headers: headers(key, label),
    body: body(bytes)
  })
  await signal
  const res = pending.at(-1)!
  return {
    release: async () => {
      res.end(JSON.stringify({ model: "m", content: [] }))
      pending.splice(pending.indexOf(res), 1)
      expect((await answer).status).toBe(200)
    }
  }
}

const send = (key: string, bytes: number, label?: string) =>
  call(`${gateway.url}/anthropic/v1/messages`, { method: "POST", headers: headers(key, label), body: body(bytes) })

const refused = (res: RawResponse, status: number, cap: string) => {
  expect(res.status).toBe(status)
  expect(res.headers["retry-after"]).toBe("1")
  expect(res.headers["connection"]).toBe("close")
  const answer = JSON.parse(res.body.toString()) as { error: string }
  expect(Object.keys(answer)).toEqual(["error"])
  expect(answer.error).toContain(cap)
}

/** Answers the request that reaches the upstream next, at once. */
const answerNext = () =>
  arrived.promise.then(() => {
    const res = pending.pop()!
    res.end(JSON.stringify({ model: "m", content: [] }))
  })

describe("bytes in flight at the gateway", () => {
  it("per credential: 429 with Retry-After before the body is read, whatever the agent label; another key is not held back", async () => {
    const held = await hold("sk-inflight-a", 700 * KIB)
    const before = upstream.requests.length
    refused(await send("sk-inflight-a", 400 * KIB), 429, "GATEWAY_INFLIGHT_BYTES_PER_CREDENTIAL")
    refused(await send("sk-inflight-a", 400 * KIB, "a-fresh-label"), 429, "GATEWAY_INFLIGHT_BYTES_PER_CREDENTIAL")
    expect(upstream.requests.length).toBe(before)
    const other = answerNext()
    expect((await send("sk-inflight-b", 400 * KIB)).status).toBe(200)
    await other
    // Once the held exchange ends, its bytes are the credential's again.
    await held.release()
    const again = answerNext()
    expect((await send("sk-inflight-a", 400 * KIB)).status).toBe(200)
    await again
  })

  it("per credential, without a declared length: the upload is cut at the chunk that does not fit", async () => {
    const held = await hold("sk-inflight-c", 700 * KIB)
    const before = upstream.requests.length
    const res = await new Promise<RawResponse>((resolve, reject) => {
      const req = httpRequest(
        `${gateway.url}/anthropic/v1/messages`,
        { method: "POST", headers: { ...headers("sk-inflight-c"), "transfer-encoding": "chunked" }, agent: false },
        (answer) => {
          const chunks: Array<Buffer> = []
          answer.on("data", (c: Buffer) => chunks.push(c))
          answer.on("end", () =>
            resolve({
              status: answer.statusCode!,
              headers: answer.headers,
              rawHeaders: answer.rawHeaders,
              body: Buffer.concat(chunks),
              chunks
            })
          )
        }
      )
      // The gateway may close before the whole upload is written: that is the point.
      req.on("error", (error) => (req.writableEnded ? undefined : reject(error)))
      const chunk = Buffer.alloc(64 * KIB, 0x20)
      let sent = 0
      const next = () => {
        if (sent >= 640 * KIB || req.destroyed) return req.end()
        sent += chunk.byteLength
        if (req.write(chunk)) setImmediate(next)
        else req.once("drain", next)
      }
      next()
    })
    refused(res, 429, "GATEWAY_INFLIGHT_BYTES_PER_CREDENTIAL")
    expect(upstream.requests.length).toBe(before)
    await held.release()
  })

  it("per organization: 429 for a key of the organization whose other keys hold its budget; a key outside it passes", async () => {
    for (const key of ["sk-org-1", "sk-org-2"]) {
      await run(state.update(agentIdOf(sha256Hex(key), undefined), { orgId: "org-inflight" }))
    }
    const held = await hold("sk-org-1", 800 * KIB)
    refused(await send("sk-org-2", 800 * KIB), 429, "GATEWAY_INFLIGHT_BYTES_PER_ORG")
    const outside = answerNext()
    expect((await send("sk-no-org", 800 * KIB)).status).toBe(200)
    await outside
    await held.release()
  })

  it("per process: 503 with Retry-After once the gateway holds its total, for any key", async () => {
    const first = await hold("sk-proc-1", 900 * KIB)
    const second = await hold("sk-proc-2", 900 * KIB)
    refused(await send("sk-proc-3", 400 * KIB), 503, "GATEWAY_INFLIGHT_BYTES")
    await first.release()
    await second.release()
  })
})
