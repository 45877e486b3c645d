/**
 * Nothing answered leaves the record (issue 24), through real HTTP with the real provider adapters:
 *
 * - a flooding tenant beside a victim, with a judge that never answers the flooder: the victim's
 *   held answers are judged (403, violations on record) while every flooder call still hangs, and
 *   every answered exchange of both has exactly one checkpoint; the flooder's are unanalysed
 *   (`judge_timeout`, `over_share`), none missing;
 * - a provider's 401 or 403 creates no checkpoint (only a metric);
 * - once the event publisher's buffer is full (the bus down past it), new requests are refused with
 *   503 and `Retry-After` before the provider, and pass again once the bus is back.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as MetricLabel from "effect/MetricLabel"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import type { ServerResponse } from "node:http"
import { AnalysisModel, type AnalysisResult } from "../../../adapters/analysis/AnalysisModel.js"
import { AgentState } from "../../../adapters/bus/AgentState.js"
import { Bus, BusError, type Subscription } from "../../../adapters/bus/Bus.js"
import { agentIdOf } from "../../../adapters/gateway/AgentIdentity.js"
import * as GatewayInspector from "../../../adapters/gateway/GatewayInspector.js"
import { Inspector } from "../../../adapters/gateway/Inspector.js"
import { ProviderAdapters } from "../../../adapters/gateway/ProviderAdapters.js"
import { providerRefusals } from "../../../adapters/metrics/GatewayMetrics.js"
import { sha256Hex } from "../../../adapters/providers/Identity.js"
import { providerAdapters } from "../../../adapters/providers/Registry.js"
import { GatewayEvent } from "../../../core/schema/Event.js"
import {
  call,
  type FakeUpstream,
  startGateway,
  startUpstream,
  type TestGateway,
  nextResponsePayload
} from "./Harness.js"

const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(effect)

/** Judge calls of the flooder (thinking with HANG): they never answer; how many were cut by their deadline. */
const flooderCalls = { started: 0, cut: 0 }

const violation: AnalysisResult = {
  concerns: [{ category: "prompt_injection", severity: "critical", evidence: "", description: "follows the page" }],
  reasoning_summary: "follows injected instructions",
  llm_verdict: undefined,
  analysis_model: "fake",
  analysis_duration_ms: 1,
  thinking_tokens_original: 1,
  thinking_tokens_analyzed: 1,
  truncated: false,
  raw_analysis: "{}",
  cross_validation_warnings: [],
  values_checked: []
}

/** A judge that never answers thinking with HANG (counting the calls its deadline cuts) and flags everything else. */
const HangingJudge = Layer.succeed(AnalysisModel, {
  name: "fake",
  analyze: (request) =>
    request.thinking.includes("HANG")
      ? Effect.sync(() => void flooderCalls.started++).pipe(
          Effect.zipRight(Effect.never),
          Effect.onInterrupt(() => Effect.sync(() => void flooderCalls.cut++))
        )
      : Effect.succeed(violation)
})

/** The in-process bus, refusing publishes while `outage.down`. */
const outage = { down: false }
const FlakyBus = Layer.effect(
  Bus,
  Effect.map(Bus, (bus) =>
    Bus.of({
      ...bus,
      publish: (subject, payload, options) =>
        Effect.suspend(() =>
          outage.down
            ? Effect.fail(new BusError({ operation: "publish", cause: "connection refused" }))
            : bus.publish(subject, payload, options)
        )
    })
  )
).pipe(Layer.provide(Bus.layerMemory))

const DEADLINE_MS = 1_000
const PUBLISHER_CAPACITY = 24

let scope: Scope.CloseableScope
let upstream: FakeUpstream
let gateway: TestGateway
let state: AgentState["Type"]
let events: Subscription

beforeAll(async () => {
  scope = await run(Scope.make())
  const context = await run(
    Layer.buildWithScope(
      GatewayInspector.layer({
        concurrency: 4,
        queueCapacity: 8,
        analysisTimeoutMs: DEADLINE_MS,
        publisherCapacity: PUBLISHER_CAPACITY
      }).pipe(
        Layer.provideMerge(
          Layer.mergeAll(
            AgentState.layerMemory,
            FlakyBus,
            Layer.succeed(ProviderAdapters, providerAdapters),
            HangingJudge
          )
        )
      ),
      scope
    )
  )
  state = Context.get(context, AgentState)
  events = await run(Scope.extend(Context.get(context, Bus).subscribe("candor.events."), scope))
  // Answers with the thinking the request names (`think`), or with the status it names (`status`).
  upstream = await startUpstream((r, res: ServerResponse) => {
    const { status, think } = JSON.parse(r.body.toString()) as { status?: number; think?: string }
    const body =
      status !== undefined
        ? JSON.stringify({ type: "error", error: { type: "authentication_error", message: "invalid x-api-key" } })
        : JSON.stringify({
            model: "claude-test",
            content: [
              { type: "thinking", thinking: think ?? "" },
              { type: "text", text: "ok" }
            ]
          })
    res.writeHead(status ?? 200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
    res.end(body)
  })
  gateway = await startGateway(upstream.url, Context.get(context, Inspector))
})
afterAll(async () => {
  await gateway.close()
  await upstream.close()
  await run(Scope.close(scope, Exit.void))
})

const send = (key: string, body: Record<string, unknown>, agentName?: string) =>
  call(`${gateway.url}/anthropic/v1/messages`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-api-key": key,
      ...(agentName === undefined ? {} : { "x-candor-agent": agentName })
    },
    body: JSON.stringify({ model: "claude-test", messages: [], ...body })
  })

const nextEvent = async (): Promise<GatewayEvent> =>
  Schema.decodeUnknownSync(GatewayEvent)(await nextResponsePayload(events.take.pipe(Effect.timeout("30 seconds"))))

describe("nothing answered leaves the record", () => {
  it("a flooding tenant beside a victim, the judge never answering the flooder: the victim judged, the flooder unanalysed, none missing", async () => {
    const flooderKey = "sk-flooder"
    const labels = Array.from({ length: 6 }, (_, i) => `bot-${i}`) // many agent names, one credential: one tenant
    const flooderAgents = new Set(labels.map((label) => agentIdOf(sha256Hex(flooderKey), label)))
    const victimKey = "sk-victim"
    const victimAgent = agentIdOf(sha256Hex(victimKey), undefined)
    await run(state.update(victimAgent, { mode: "enforce", orgId: "org-victim" }))

    const floods = Array.from({ length: 60 }, (_, i) =>
      send(flooderKey, { think: `HANG ${i}` }, labels[i % labels.length])
    )
    const flooded = await Promise.all(floods)
    expect(flooded.every((res) => res.status === 200)).toBe(true)
    // The victim's held answers are judged while every flooder call still hangs: not delayed by the flood.
    const victims = await Promise.all(Array.from({ length: 5 }, (_, i) => send(victimKey, { think: `page says ${i}` })))
    expect(victims.map((res) => res.status)).toEqual([403, 403, 403, 403, 403])
    expect(flooderCalls.cut).toBe(0)
    expect(flooderCalls.started).toBeGreaterThan(0)

    // Exactly one checkpoint per answered exchange: count them against the answers.
    const byAgent = new Map<string, Array<GatewayEvent>>()
    for (let i = 0; i < floods.length + victims.length; i++) {
      const event = await nextEvent()
      byAgent.set(event.agent_id, [...(byAgent.get(event.agent_id) ?? []), event])
    }
    const victimEvents = byAgent.get(victimAgent) ?? []
    expect(victimEvents).toHaveLength(5)
    for (const event of victimEvents) {
      expect(event.checkpoint.verdict).toBe("boundary_violation")
      expect(event.checkpoint.synthetic).toBeUndefined()
    }
    const floodEvents = [...flooderAgents].flatMap((agent) => byAgent.get(agent) ?? [])
    expect(floodEvents).toHaveLength(60)
    const reasons = new Set(floodEvents.map((event) => event.checkpoint.analysis_metadata.unanalysed_reason))
    expect(reasons).toEqual(new Set(["judge_timeout", "over_share"]))
    for (const event of floodEvents) {
      expect(event.checkpoint).toMatchObject({ verdict: "clear", synthetic: true, synthetic_reason: "unanalysed" })
    }
    expect(flooderCalls.cut).toBe(flooderCalls.started)
  }, 60_000)

  for (const status of [401, 403]) {
    it(`a provider ${status} creates no checkpoint, only a metric; held (enforce) or not`, async () => {
      const key = `sk-refused-${status}`
      const agentId = agentIdOf(sha256Hex(key), undefined)
      const labels = [MetricLabel.make("status", String(status))]
      const counted = Metric.taggedWithLabels(providerRefusals, labels)
      const before = (await run(Metric.value(counted))).count
      expect((await send(key, { status })).status).toBe(status)
      await run(state.update(agentId, { mode: "enforce" }))
      expect((await send(key, { status })).status).toBe(status)
      expect((await run(Metric.value(counted))).count).toBe(before + 2)
      // The next answered exchange is the first event on the bus: the refused ones left none.
      expect((await send(key, { think: "answered" })).status).toBe(403) // judged a violation, held
      const event = await nextEvent()
      expect(event.agent_id).toBe(agentId)
      expect(event.checkpoint.thinking_block_hash).toBe(sha256Hex("answered"))
    })
  }

  it("the bus down past the publisher's buffer: 503 with Retry-After before the provider, then served again", async () => {
    outage.down = true
    const key = "sk-during-outage"
    const answered: Array<number> = []
    let refused: Awaited<ReturnType<typeof send>> | undefined
    for (let i = 0; refused === undefined; i++) {
      const res = await send(key, { think: `held ${i}` })
      if (res.status === 503) refused = res
      else answered.push(res.status)
      expect(i).toBeLessThan(PUBLISHER_CAPACITY + 8)
    }
    const before = upstream.requests.length
    const again = await send(key, { think: "refused" })
    expect(again.status).toBe(503)
    expect(upstream.requests.length).toBe(before) // never reached the provider
    expect(again.headers["retry-after"]).toBe("5")
    expect(JSON.parse(again.body.toString())).toEqual({ error: expect.stringContaining("cannot record") })
    expect(answered.length).toBeGreaterThanOrEqual(PUBLISHER_CAPACITY - 1)
    expect(answered.every((status) => status === 200)).toBe(true)
    outage.down = false
    // Every answered exchange's event arrives (none lost to the outage); then requests pass again.
    const hashes = new Set<string>()
    for (let i = 0; i < answered.length; i++) hashes.add((await nextEvent()).checkpoint.thinking_block_hash)
    expect(hashes).toEqual(new Set(answered.map((_, i) => sha256Hex(`held ${i}`))))
    // The last permits go back just after the last stores: a few turns of the event loop, no timer.
    let after = await send(key, { think: "after" })
    for (let turns = 0; after.status === 503 && turns < 100; turns++) {
      await new Promise((resolve) => setImmediate(resolve))
      after = await send(key, { think: "after" })
    }
    expect(after.status).toBe(200)
    expect((await nextEvent()).checkpoint.thinking_block_hash).toBe(sha256Hex("after"))
  }, 60_000)
})
