/**
 * The gateway's enforcement records (issue 26), over real HTTP with the real provider adapters and
 * the in-process bus: each 403 (containment, tool policy) and each nudge injected is published on the
 * agent's event subject as a `gateway.enforcement` message that decodes with its schema; a contained
 * agent's refusals past 10 a second are answered 429 with `Retry-After`, counted, and not recorded,
 * until a second has passed on the gateway's clock (a TestClock).
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as TestClock from "effect/TestClock"
import * as TestContext from "effect/TestContext"
import type { ServerResponse } from "node:http"
import { AgentState } from "../../../adapters/bus/AgentState.js"
import { Bus, type Subscription } from "../../../adapters/bus/Bus.js"
import { eventSubject } from "../../../adapters/bus/Subjects.js"
import { agentIdOf } from "../../../adapters/gateway/AgentIdentity.js"
import { Inspector } from "../../../adapters/gateway/Inspector.js"
import { containedRequestsThrottled } from "../../../adapters/metrics/GatewayMetrics.js"
import { sha256Hex } from "../../../adapters/providers/Identity.js"
import { GatewayEnforcement } from "../../../core/schema/Event.js"
import { Policy } from "../../../core/schema/Policy.js"
import { call, type FakeUpstream, keyHeader, startGateway, startUpstream, type TestGateway } from "./Harness.js"
import { inspectorWithFakes } from "./Fakes.js"

const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(effect)
const START = Date.parse("2026-03-01T12:00:00Z")

let scope: Scope.CloseableScope
let upstream: FakeUpstream
let gateway: TestGateway
let state: AgentState["Type"]
let bus: Bus["Type"]
let events: Subscription
let clock: TestClock.TestClock

beforeAll(async () => {
  scope = await run(Scope.make())
  const testClock = TestClock.defaultTestClock.pipe(Layer.provide(TestContext.TestContext))
  clock = Context.get(await run(Layer.buildWithScope(testClock, scope)), TestClock.TestClock)
  await run(clock.setTime(START))
  const context = await run(Layer.buildWithScope(inspectorWithFakes.pipe(Layer.provide(Layer.setClock(clock))), scope))
  state = Context.get(context, AgentState)
  bus = Context.get(context, Bus)
  events = await run(Scope.extend(bus.subscribe("candor.events."), scope))
  upstream = await startUpstream((_r, res: ServerResponse) => {
    const text = JSON.stringify({ model: "claude-test", content: [{ type: "text", text: "ok" }] })
    res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
    res.end(text)
  })
  gateway = await startGateway(upstream.url, Context.get(context, Inspector))
})
afterAll(async () => {
  await gateway.close()
  await upstream.close()
  await run(Scope.close(scope, Exit.void))
})

let keyCounter = 0
const PATH = "/anthropic/v1/messages"
const newAgent = () => {
  const key = `sk-records-${++keyCounter}`
  const agentId = agentIdOf(sha256Hex(key), undefined)
  const send = (tools: ReadonlyArray<string> = []) =>
    call(`${gateway.url}${PATH}`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-candor-session": "ses-records", ...keyHeader(PATH, key) },
      body: JSON.stringify({
        model: "claude-test",
        max_tokens: 10,
        messages: [{ role: "user", content: "hi" }],
        ...(tools.length === 0 ? {} : { tools: tools.map((name) => ({ name, input_schema: { type: "object" } })) })
      })
    })
  return { agentId, send }
}

/**
 * The next enforcement message on the agent's subject, decoded with its schema. A marker published
 * after it on the same subject proves nothing else was: the memory bus delivers in publish order.
 */
const nextRecord = async (agentId: string): Promise<GatewayEnforcement | "marker"> => {
  for (;;) {
    const message = await run(events.take)
    if (message.subject !== eventSubject(agentId)) continue
    const payload = message.payload as { type?: string }
    if (payload.type === "marker") return "marker"
    if (payload.type === "gateway.enforcement") return Schema.decodeUnknownSync(GatewayEnforcement)(payload)
  }
}
const mark = (agentId: string) => run(bus.publish(eventSubject(agentId), { type: "marker" }))

const paused = {
  status: "paused" as const,
  reason: "investigating",
  contained_at: "2026-03-01T11:00:00Z",
  contained_by: "u1"
}

describe("enforcement records at the gateway", () => {
  it("a contained agent's 403 is a blocked record; past 10 a second, 429 with Retry-After, counted, not recorded", async () => {
    const agent = newAgent()
    await run(state.update(agent.agentId, { containment: paused, mode: "enforce" }))
    const throttledBefore = (await run(Metric.value(containedRequestsThrottled))).count
    for (let i = 0; i < 10; i++) {
      const res = await agent.send()
      expect(res.status).toBe(403)
      const record = await nextRecord(agent.agentId)
      expect(record).toEqual({
        type: "gateway.enforcement",
        mode: "enforce",
        record: {
          record_id: expect.stringMatching(/^enf-[0-9a-f-]{36}$/),
          agent_id: agent.agentId,
          kind: "blocked",
          rule: "containment",
          reason: "agent_paused",
          session_id: "ses-records",
          actor: "gateway",
          created_at: new Date(START).toISOString()
        }
      })
    }
    const throttled = await agent.send()
    expect(throttled.status).toBe(429)
    expect(throttled.headers["retry-after"]).toBe("1")
    expect(Object.keys(JSON.parse(throttled.body.toString()))).toEqual(["error"])
    expect((await run(Metric.value(containedRequestsThrottled))).count).toBe(throttledBefore + 1)
    await mark(agent.agentId)
    expect(await nextRecord(agent.agentId)).toBe("marker")
    // A tenth of a second later, one more refusal is recorded; then 429 again.
    await run(clock.adjust("100 millis"))
    expect((await agent.send()).status).toBe(403)
    expect(await nextRecord(agent.agentId)).toMatchObject({ record: { kind: "blocked" } })
    expect((await agent.send()).status).toBe(429)
    // Another agent has its own allowance.
    const other = newAgent()
    await run(state.update(other.agentId, { containment: { ...paused, status: "killed" } }))
    expect((await other.send()).status).toBe(403)
    expect(await nextRecord(other.agentId)).toMatchObject({ record: { kind: "blocked", reason: "agent_killed" } })
    expect(upstream.requests.length).toBe(0)
  })

  it("a tool-policy 403 is a blocked record naming the forbidden tools", async () => {
    const agent = newAgent()
    const policy = Schema.decodeUnknownSync(Policy)({
      capability_mappings: {},
      forbidden: [{ pattern: "shell_*", reason: "no shell access" }],
      defaults: { enforcement_mode: "enforce", unmapped_tool_action: "allow" }
    })
    await run(state.update(agent.agentId, { policy }))
    expect((await agent.send(["shell_exec"])).status).toBe(403)
    expect(await nextRecord(agent.agentId)).toMatchObject({
      mode: "observe",
      record: { kind: "blocked", rule: "policy", reason: "forbidden tools: shell_exec", actor: "gateway" }
    })
  })

  it("a nudge injected is a nudged record naming the violating checkpoint", async () => {
    const agent = newAgent()
    await run(state.update(agent.agentId, { mode: "nudge" }))
    await run(
      state.setNudge(
        agent.agentId,
        "[INTEGRITY NOTICE — Candor]\nYour previous response (checkpoint ic-abc) was flagged as a boundary violation.\n"
      )
    )
    const before = upstream.requests.length
    expect((await agent.send()).status).toBe(200)
    expect(upstream.requests[before]!.body.toString()).toContain("checkpoint ic-abc")
    expect(await nextRecord(agent.agentId)).toEqual({
      type: "gateway.enforcement",
      mode: "nudge",
      record: {
        record_id: expect.stringMatching(/^enf-/),
        agent_id: agent.agentId,
        kind: "nudged",
        rule: "nudge",
        reason: "boundary_violation",
        checkpoint_id: "ic-abc",
        session_id: "ses-records",
        actor: "gateway",
        created_at: expect.any(String)
      }
    })
  })
})
