/**
 * The request path's synchronous decision (`beforeRequestSync`): it decides the usual request on its
 * own, leaves everything that needs an effect (containment, a pending nudge, a policy finding) to
 * `beforeRequest` without changing any state, and the server asks `beforeRequest` only then. Also the
 * agent id cache it reads.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { createHash } from "node:crypto"
import { AgentState } from "../../../adapters/bus/AgentState.js"
import { Bus } from "../../../adapters/bus/Bus.js"
import { AgentIds, agentIdOf, derivedSessionId } from "../../../adapters/gateway/AgentIdentity.js"
import * as GatewayInspector from "../../../adapters/gateway/GatewayInspector.js"
import { type InspectedRequest, Inspector, type RequestDecision } from "../../../adapters/gateway/Inspector.js"
import { Policy } from "../../../core/schema/Policy.js"
import { call, startGateway, startUpstream } from "./Harness.js"
import { FakeAdapters, FakeJudge } from "./Fakes.js"

const setup = Effect.gen(function* () {
  const context = yield* Layer.build(
    GatewayInspector.layer().pipe(
      Layer.provideMerge(Layer.mergeAll(AgentState.layerMemory, Bus.layerMemory, FakeAdapters, FakeJudge))
    )
  )
  return { inspector: Context.get(context, Inspector), state: Context.get(context, AgentState) }
})

let keys = 0
const agent = () => {
  const key = `sk-fast-${++keys}`
  return { key, agentId: agentIdOf(createHash("sha256").update(key).digest("hex"), undefined) }
}

const request = (key: string | undefined, body: unknown = { model: "m", tools: [{ name: "search" }] }) => {
  const bytes = Buffer.from(JSON.stringify(body))
  return {
    provider: "anthropic",
    url: new URL("http://upstream.test/v1/messages"),
    headers: key === undefined ? {} : { "x-api-key": key },
    body: bytes
  } satisfies InspectedRequest
}

const forwarded = (decision: RequestDecision | undefined) => {
  if (decision === undefined || "respond" in decision) throw new Error("expected a forwarded request")
  return decision
}

const SHELL_FORBIDDEN = Schema.decodeUnknownSync(Policy)({
  forbidden: [{ pattern: "shell_*", reason: "no shell access" }],
  defaults: { enforcement_mode: "enforce", unmapped_tool_action: "allow" }
})

describe("the gateway's synchronous fast path", () => {
  it.scoped("decides the usual request, and the same as beforeRequest", () =>
    Effect.gen(function* () {
      const { inspector } = yield* setup
      const { key } = agent()
      const sync = forwarded(inspector.beforeRequestSync!(request(key)))
      const effectful = forwarded(yield* inspector.beforeRequest(request(key)))
      expect(sync.hold).toBe(false)
      expect(sync.context).toBeDefined()
      expect(sync.context).toEqual(effectful.context)
      // The client's bytes themselves go upstream: no copy.
      const req = request(key)
      expect(forwarded(inspector.beforeRequestSync!(req)).forward).toBe(req.body)
      // No key: no agent, forwarded untouched.
      expect(forwarded(inspector.beforeRequestSync!(request(undefined))).context).toBeUndefined()
    })
  )

  it.scoped("leaves a contained agent and a pending nudge to beforeRequest, which still acts on them", () =>
    Effect.gen(function* () {
      const { inspector, state } = yield* setup
      const contained = agent()
      yield* state.update(contained.agentId, {
        containment: {
          status: "paused",
          reason: "test",
          contained_at: "2026-03-01T12:00:00.000Z",
          contained_by: "tester"
        }
      })
      expect(inspector.beforeRequestSync!(request(contained.key))).toBeUndefined()
      const refused = yield* inspector.beforeRequest(request(contained.key))
      expect("respond" in refused && refused.respond.status).toBe(403)

      const nudged = agent()
      yield* state.setNudge(nudged.agentId, "NUDGE-TEXT")
      expect(inspector.beforeRequestSync!(request(nudged.key))).toBeUndefined()
      const rewritten = forwarded(yield* inspector.beforeRequest(request(nudged.key)))
      expect(Buffer.from(rewritten.forward).toString()).toContain("NUDGE-TEXT")
      // Taken once: the next request is the usual one again.
      expect(forwarded(inspector.beforeRequestSync!(request(nudged.key))).forward).toEqual(request(nudged.key).body)
    })
  )

  it.scoped(
    "leaves an agent whose key is contained to beforeRequest (a map lookup), which refuses any name of the key",
    () =>
      Effect.gen(function* () {
        const { inspector, state } = yield* setup
        const { key } = agent()
        const named = (name: string) => ({ ...request(key), headers: { "x-api-key": key, "x-candor-agent": name } })
        yield* state.updateKey(createHash("sha256").update(key).digest("hex"), {
          containment: {
            status: "paused",
            reason: null,
            contained_at: "2026-03-01T12:00:00.000Z",
            contained_by: "owner"
          }
        })
        for (const req of [request(key), named("never-seen")]) {
          expect(inspector.beforeRequestSync!(req)).toBeUndefined()
          const refused = yield* inspector.beforeRequest(req)
          if (!("respond" in refused)) throw new Error("expected a refusal")
          expect(refused.respond.status).toBe(403)
          expect(JSON.parse(Buffer.from(refused.respond.body).toString())).toMatchObject({
            reason: "agent_paused",
            containment_error: { scope: "key" }
          })
        }
        // Another key: the usual request, decided synchronously.
        expect(forwarded(inspector.beforeRequestSync!(request(agent().key))).context).toBeDefined()
      })
  )

  it.scoped("decides a request whose tools pass the policy; leaves a violation to beforeRequest", () =>
    Effect.gen(function* () {
      const { inspector, state } = yield* setup
      const { agentId, key } = agent()
      yield* state.update(agentId, { policy: SHELL_FORBIDDEN })
      expect(forwarded(inspector.beforeRequestSync!(request(key))).headers).toEqual({ "x-policy-verdict": "pass" })
      const shell = request(key, { model: "m", tools: [{ name: "shell_exec" }] })
      expect(inspector.beforeRequestSync!(shell)).toBeUndefined()
      const blocked = yield* inspector.beforeRequest(shell)
      expect("respond" in blocked && blocked.respond.status).toBe(403)
    })
  )

  it("the server asks beforeRequest only when the synchronous path declines", async () => {
    const upstream = await startUpstream((_r, res) => res.writeHead(200, { "content-length": 2 }).end("ok"))
    let effectful = 0
    const inspector: Inspector["Type"] = {
      beforeRequestSync: (req) =>
        req.headers["x-decline"] === undefined ? { forward: req.body, context: undefined, hold: false } : undefined,
      beforeRequest: (req) =>
        Effect.sync(() => {
          effectful++
          return { forward: req.body, context: undefined, hold: false }
        }),
      onResponse: () => ({ chunk: () => {}, end: () => {} }),
      onFailure: () => {},
      completeNonStreaming: () => Effect.succeed({ pass: true })
    }
    const gateway = await startGateway(upstream.url, inspector)
    try {
      const fast = await call(`${gateway.url}/anthropic/v1/messages`, { method: "POST", body: "{}" })
      expect([fast.status, fast.body.toString(), effectful]).toEqual([200, "ok", 0])
      const slow = await call(`${gateway.url}/anthropic/v1/messages`, {
        method: "POST",
        headers: { "x-decline": "1" },
        body: "{}"
      })
      expect([slow.status, slow.body.toString(), effectful]).toEqual([200, "ok", 1])
    } finally {
      await gateway.close()
      await upstream.close()
    }
  })
})

describe("AgentIds", () => {
  it("gives the derived ids, recomputes the session when the hour turns, and stays bounded", () => {
    const ids = new AgentIds(2)
    const hash = "ab".repeat(32)
    const noon = Date.parse("2026-03-01T12:10:00Z")
    const first = ids.lookup(hash, undefined, noon)
    expect(first).toMatchObject({
      agentId: agentIdOf(hash, undefined),
      sessionId: derivedSessionId(hash, undefined, noon)
    })
    expect(ids.lookup(hash, "bot", noon).agentId).toBe(agentIdOf(hash, "bot"))
    const later = Date.parse("2026-03-01T13:00:00Z")
    expect(ids.lookup(hash, undefined, later).sessionId).toBe(derivedSessionId(hash, undefined, later))
    expect(ids.lookup(hash, undefined, later).sessionId).not.toBe(first.sessionId)
    // A third caller evicts the oldest entry; its ids are only recomputed, the same.
    expect(ids.lookup("cd".repeat(32), undefined, noon).agentId).toBe(agentIdOf("cd".repeat(32), undefined))
    expect(ids.lookup(hash, "bot", noon).agentId).toBe(agentIdOf(hash, "bot"))
  })
})
