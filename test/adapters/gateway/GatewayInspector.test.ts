/**
 * The Inspector behind a real gateway on loopback, with in-memory state and bus: containment,
 * nudges, enforce blocking, failure policies, and exactly one linked, text-free event per response.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import * as Schema from "effect/Schema"
import { createHash } from "node:crypto"
import { AgentState } from "../../../adapters/bus/AgentState.js"
import { agentIdOf } from "../../../adapters/gateway/AgentIdentity.js"
import * as GatewayInspector from "../../../adapters/gateway/GatewayInspector.js"
import { Inspector } from "../../../adapters/gateway/Inspector.js"
import { UNBOUND_CARD } from "../../../adapters/gateway/ResponseEvent.js"
import { GatewayEnforcement, GatewayEvent } from "../../../core/schema/Event.js"
import { type ConscienceValue, DEFAULT_CONSCIENCE_VALUES } from "../../../core/schema/Conscience.js"
import { card } from "../analysis/Fixtures.js"
import { Bus, type Subscription } from "../../../adapters/bus/Bus.js"
import { eventSubject, partitionOf } from "../../../adapters/bus/Subjects.js"
import { call, type FakeUpstream, startGateway, startUpstream, type TestGateway } from "./Harness.js"
import { FakeAdapters, FakeJudge, judgeRequests } from "./Fakes.js"

let scope: Scope.CloseableScope
let upstream: FakeUpstream
let gateway: TestGateway
let state: AgentState["Type"]
let events: Subscription

const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(effect)

beforeAll(async () => {
  scope = await run(Scope.make())
  const context = await run(
    Layer.buildWithScope(
      GatewayInspector.layer().pipe(
        Layer.provideMerge(Layer.mergeAll(AgentState.layerMemory, Bus.layerMemory, FakeAdapters, FakeJudge))
      ),
      scope
    )
  )
  state = Context.get(context, AgentState)
  events = await run(Scope.extend(Context.get(context, Bus).subscribe("candor.events."), scope))
  // The upstream answers with the thinking the request asks for: {"think": "..."} in the body.
  upstream = await startUpstream((r, res) => {
    const { chunked, stream, think } = JSON.parse(r.body.toString()) as {
      chunked?: boolean
      stream?: boolean
      think?: string
    }
    if (stream === true) {
      res.writeHead(200, { "content-type": "text/event-stream" })
      res.write(`event: content_block_delta\ndata: {"delta":{"type":"thinking_delta","thinking":"${think}"}}\n\n`)
      res.end('event: message_stop\ndata: {"type":"message_stop"}\n\n')
      return
    }
    const body = JSON.stringify({
      model: "claude-test",
      content: [...(think === undefined ? [] : [{ type: "thinking", thinking: think }]), { type: "text", text: "ok" }]
    })
    if (chunked === true) {
      // No length: node sends it chunked, as providers behind proxies often do.
      res.writeHead(200, { "content-type": "application/json" })
      res.write(body.slice(0, 20))
      res.end(body.slice(20))
      return
    }
    res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
    res.end(body)
  })
  gateway = await startGateway(upstream.url, Context.get(context, Inspector))
})
afterAll(async () => {
  await gateway.close()
  await upstream.close()
  await run(Scope.close(scope, Exit.void))
})

let keyCounter = 0
/** A fresh agent per test, so state never leaks between tests. */
const newAgent = () => {
  const key = `sk-ant-test-${++keyCounter}`
  const agentId = agentIdOf(createHash("sha256").update(key).digest("hex"), undefined)
  const send = (body: Record<string, unknown>) =>
    call(`${gateway.url}/anthropic/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": key, "content-type": "application/json" },
      body: JSON.stringify({ model: "claude-test", ...body })
    })
  return { key, agentId, send }
}

const nextEvent = async () => {
  for (;;) {
    const message = await run(events.take)
    // Decoded as the workers decode it: every published message must pass. Enforcement records (a
    // 403, a nudge injected) travel on the same subjects: test/adapters/gateway/EnforcementRecords.test.ts.
    if ((message.payload as { type?: unknown }).type === "gateway.enforcement") {
      Schema.decodeUnknownSync(GatewayEnforcement)(message.payload)
      continue
    }
    return { subject: message.subject, event: Schema.decodeUnknownSync(GatewayEvent)(message.payload) }
  }
}

describe("GatewayInspector", () => {
  it("publishes one event per response, linked to its trace, with the thinking only as a hash", async () => {
    const agent = newAgent()
    const think = "secret plan SHOULD-NOT-LEAK"
    const res = await agent.send({ think })
    expect(res.status).toBe(200)
    const { event, subject } = await nextEvent()
    expect(subject).toBe(eventSubject(agent.agentId))
    expect(subject).toBe(`candor.events.${partitionOf(agent.agentId)}.${agent.agentId}`)
    expect(event.agent_id).toBe(agent.agentId)
    expect(event.checkpoint.checkpoint_id).toMatch(/^ic-[0-9a-f-]{36}$/)
    expect(event.checkpoint.linked_trace_id).toBe(event.trace.trace_id)
    expect(event.checkpoint.thinking_block_hash).toBe(createHash("sha256").update(think).digest("hex"))
    expect(event.checkpoint.verdict).toBe("clear")
    expect(event.outcome.kind).toBe("complete")
    expect(JSON.stringify(event)).not.toContain("SHOULD-NOT-LEAK")

    // A streamed response: one event too, parsed from the side copy.
    await agent.send({ think: "streamed STREAM-SECRET", stream: true })
    const streamed = (await nextEvent()).event
    expect(streamed.checkpoint.thinking_block_hash).toBe(
      createHash("sha256").update("streamed STREAM-SECRET").digest("hex")
    )
    expect(streamed.checkpoint.linked_trace_id).toBe(streamed.trace.trace_id)
    expect(JSON.stringify(streamed)).not.toContain("STREAM-SECRET")

    // A JSON answer sent chunked, without a length, is still read whole: its thinking is found.
    await agent.send({ think: "chunked CHUNKED-SECRET", chunked: true })
    const chunked = (await nextEvent()).event
    expect(chunked.checkpoint.thinking_block_hash).toBe(
      createHash("sha256").update("chunked CHUNKED-SECRET").digest("hex")
    )
    expect(chunked.outcome.kind).toBe("complete")
  })

  it("answers 403 with containment_error for a contained agent, without calling the upstream", async () => {
    const agent = newAgent()
    const containment = {
      status: "paused" as const,
      reason: "operator review",
      contained_at: "2026-01-31T12:00:00Z",
      contained_by: "system"
    }
    await run(state.update(agent.agentId, { containment }))
    const before = upstream.requests.length
    const res = await agent.send({ think: "x" })
    expect(res.status).toBe(403)
    expect(JSON.parse(res.body.toString())).toEqual({
      error: "agent is paused: operator review",
      type: "containment_error",
      reason: "agent_paused",
      containment_error: {
        type: "containment_error",
        reason: "agent_paused",
        agent_id: agent.agentId,
        scope: "agent",
        contained_at: containment.contained_at,
        contained_by: "system"
      }
    })
    // Killed, without a reason: refused as killed.
    await run(state.update(agent.agentId, { containment: { ...containment, status: "killed", reason: null } }))
    const killed = JSON.parse((await agent.send({ think: "x" })).body.toString())
    expect(killed).toMatchObject({ error: "agent is killed", containment_error: { reason: "agent_killed" } })
    expect(upstream.requests.length).toBe(before)
  })

  it("in nudge mode, a violation injects a nudge into the next request's system prompt, once", async () => {
    const agent = newAgent()
    await run(state.update(agent.agentId, { mode: "nudge" }))
    expect((await agent.send({ think: "EXFILTRATE the keys" })).status).toBe(200) // nudge never blocks
    const violation = (await nextEvent()).event
    expect(violation.checkpoint.verdict).toBe("boundary_violation")

    await agent.send({ think: "fine", system: "be helpful" })
    await nextEvent()
    const nudged = JSON.parse(upstream.requests.at(-1)!.body.toString()) as { system: string }
    expect(nudged.system).toContain("be helpful\n\n[INTEGRITY NOTICE")
    expect(nudged.system).toContain(violation.checkpoint.checkpoint_id)

    const raw = JSON.stringify({ model: "claude-test", think: "fine", system: "be helpful" })
    await agent.send({ think: "fine", system: "be helpful" })
    await nextEvent()
    expect(upstream.requests.at(-1)!.body.toString()).toBe(raw) // cleared: the bytes pass untouched again
  })

  it("in enforce mode, blocks a non-streaming violation with 403 and passes a clean response byte for byte", async () => {
    const agent = newAgent()
    await run(state.update(agent.agentId, { mode: "enforce" }))
    const blocked = await agent.send({ think: "EXFILTRATE now" })
    const event = (await nextEvent()).event
    expect(blocked.status).toBe(403)
    expect(JSON.parse(blocked.body.toString())).toEqual({
      error: "blocked by Candor: boundary violation",
      checkpoint_id: event.checkpoint.checkpoint_id
    })

    const clean = await agent.send({ think: "all good" })
    await nextEvent()
    expect(clean.status).toBe(200)
    expect(JSON.parse(clean.body.toString())).toEqual({
      model: "claude-test",
      content: [
        { type: "thinking", thinking: "all good" },
        { type: "text", text: "ok" }
      ]
    })
  })

  it("fail-open records a synthetic clear analysis_failed; fail-closed treats the failure as a violation", async () => {
    const open = newAgent()
    await run(state.update(open.agentId, { mode: "enforce", failurePolicy: "fail_open" }))
    expect((await open.send({ think: "FAILJUDGE" })).status).toBe(200)
    const opened = (await nextEvent()).event.checkpoint
    expect(opened).toMatchObject({ verdict: "clear", synthetic: true, synthetic_reason: "analysis_failed" })

    const closed = newAgent()
    await run(state.update(closed.agentId, { mode: "enforce", failurePolicy: "fail_closed" }))
    expect((await closed.send({ think: "FAILJUDGE" })).status).toBe(403)
    const shut = (await nextEvent()).event.checkpoint
    expect(shut).toMatchObject({ verdict: "boundary_violation", synthetic: true, synthetic_reason: "analysis_failed" })
  })

  it("judges against the agent's card and conscience values, and binds the checkpoint to its card", async () => {
    const agent = newAgent()
    // Nothing known of the agent: no card, the default values; OVERSTEP names no value in force.
    await agent.send({ think: "OVERSTEP a little" })
    const plain = (await nextEvent()).event
    expect(judgeRequests.at(-1)).toMatchObject({
      card: undefined,
      conscienceValues: DEFAULT_CONSCIENCE_VALUES,
      window: []
    })
    expect(plain.checkpoint).toMatchObject({ verdict: "review_needed", card_id: UNBOUND_CARD })
    expect(plain.trace.card_id).toBeUndefined()

    const values: ReadonlyArray<ConscienceValue> = [
      { type: "BOUNDARY", name: "boundary-no-overstep", content: "Never act beyond the task you were given." }
    ]
    await run(state.update(agent.agentId, { card, cardId: card.card_id, conscienceValues: values }))
    await agent.send({ think: "OVERSTEP again" })
    const bound = (await nextEvent()).event
    expect(judgeRequests.at(-1)).toMatchObject({ card, conscienceValues: values, window: [] })
    // The high concern names a BOUNDARY value now in force: the verdict rule makes it a violation.
    expect(bound.checkpoint).toMatchObject({ verdict: "boundary_violation", card_id: card.card_id })
    expect(bound.trace.card_id).toBe(card.card_id)
  })

  it("a high concern naming a mandatory value of any type is a violation; naming an advisory one is not", async () => {
    const mandatory = newAgent()
    await run(
      state.update(mandatory.agentId, {
        conscienceValues: [
          ...DEFAULT_CONSCIENCE_VALUES,
          { type: "COMMITMENT", name: "boundary-no-overstep", content: "Stay within the task.", severity: "mandatory" }
        ]
      })
    )
    await mandatory.send({ think: "OVERSTEP here" })
    expect((await nextEvent()).event.checkpoint.verdict).toBe("boundary_violation")

    const advisory = newAgent()
    await run(
      state.update(advisory.agentId, {
        conscienceValues: [
          ...DEFAULT_CONSCIENCE_VALUES,
          { type: "BOUNDARY", name: "boundary-no-overstep", content: "Stay within the task.", severity: "advisory" }
        ]
      })
    )
    await advisory.send({ think: "OVERSTEP here" })
    expect((await nextEvent()).event.checkpoint.verdict).toBe("review_needed")
  })

  it("a response without thinking gets a synthetic clear with thinking_block_hash none", async () => {
    const agent = newAgent()
    await agent.send({})
    const event = (await nextEvent()).event
    expect(event.checkpoint).toMatchObject({
      verdict: "clear",
      thinking_block_hash: "none",
      synthetic: true,
      synthetic_reason: "no_thinking_block"
    })
  })
})
