/**
 * The gateway's own catalogue events, over real HTTP with the real provider adapters and a
 * recording feed: `enforcement.blocked` for each kind of 403 it answers (containment, tool policy,
 * an enforce-mode boundary violation), `policy.violation` for a request that breaks the policy in
 * `warn` mode, each decoding with the catalogue's schema, naming the agent's organization, holding
 * no content; and the client's answer is the same whether the feed records or fails.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import type { ServerResponse } from "node:http"
import { AgentState } from "../../../adapters/bus/AgentState.js"
import { Bus } from "../../../adapters/bus/Bus.js"
import { agentIdOf } from "../../../adapters/gateway/AgentIdentity.js"
import * as GatewayInspector from "../../../adapters/gateway/GatewayInspector.js"
import { Inspector } from "../../../adapters/gateway/Inspector.js"
import { ProviderAdapters } from "../../../adapters/gateway/ProviderAdapters.js"
import { providerAdapters } from "../../../adapters/providers/Registry.js"
import { sha256Hex } from "../../../adapters/providers/Identity.js"
import { eventId } from "../../../core/Events.js"
import { Policy, type PolicyEncoded } from "../../../core/schema/Policy.js"
import {
  WEBHOOK_EVENT_TYPES,
  type WebhookEnvelope,
  WebhookEnvelope as Envelope
} from "../../../core/schema/WebhookEvents.js"
import * as RecordingEventFeed from "../../support/RecordingEventFeed.js"
import { RecordedEvents } from "../../support/RecordingEventFeed.js"
import { FakeJudge } from "./Fakes.js"
import { call, startGateway, startUpstream } from "./Harness.js"

const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(effect)

const ORG = "org-events"
const SECRET = "SHOULD-NOT-LEAK"

const SHELL_FORBIDDEN: PolicyEncoded = {
  capability_mappings: {},
  forbidden: [{ pattern: "shell_*", reason: "no shell access" }],
  defaults: { enforcement_mode: "enforce", unmapped_tool_action: "allow" }
}

/** A gateway on the given feed, and an upstream answering with the thinking the request asks for. */
const startWorld = async (feed: ReturnType<typeof RecordingEventFeed.layer>) => {
  const scope = await run(Scope.make())
  const context = await run(
    Layer.buildWithScope(
      GatewayInspector.layer().pipe(
        Layer.provideMerge(
          Layer.mergeAll(
            AgentState.layerMemory,
            Bus.layerMemory,
            Layer.succeed(ProviderAdapters, providerAdapters),
            FakeJudge,
            feed
          )
        )
      ),
      scope
    )
  )
  const upstream = await startUpstream((r, res: ServerResponse) => {
    const { think } = JSON.parse(r.body.toString() || "{}") as { think?: string }
    const body = JSON.stringify({
      model: "claude-test",
      content: [...(think === undefined ? [] : [{ type: "thinking", thinking: think }]), { type: "text", text: "ok" }]
    })
    res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
    res.end(body)
  })
  const gateway = await startGateway(upstream.url, Context.get(context, Inspector))
  return {
    state: Context.get(context, AgentState),
    recorded: Context.get(context, RecordedEvents),
    gateway,
    upstream,
    close: async () => {
      await gateway.close()
      await upstream.close()
      await run(Scope.close(scope, Exit.void))
    }
  }
}

let world: Awaited<ReturnType<typeof startWorld>>
let failing: Awaited<ReturnType<typeof startWorld>>

beforeAll(async () => {
  world = await startWorld(RecordingEventFeed.layer())
  failing = await startWorld(RecordingEventFeed.layer({ fail: true }))
})
afterAll(async () => {
  await world.close()
  await failing.close()
})

let keyCounter = 0
/** A fresh agent of the organization, in `on`, with its settings. */
const newAgent = async (on: typeof world, settings: Parameters<AgentState["Type"]["update"]>[1]) => {
  const key = `sk-events-${++keyCounter}`
  const agentId = agentIdOf(sha256Hex(key), undefined)
  await run(on.state.update(agentId, { orgId: ORG, ...settings }))
  const send = (body: Record<string, unknown>) =>
    call(`${on.gateway.url}/anthropic/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": key, "content-type": "application/json", "x-candor-session": "ses-events" },
      body: JSON.stringify({
        model: "claude-test",
        max_tokens: 10,
        messages: [{ role: "user", content: SECRET }],
        ...body
      })
    })
  return { agentId, key, send }
}

const tools = (...names: ReadonlyArray<string>) => names.map((name) => ({ name, input_schema: { type: "object" } }))

const returned = new Set<WebhookEnvelope>()

/**
 * The next recorded event of `agentId` and `type` not returned before (events are published on
 * fibers of their own, so two of one request may arrive in either order), checked against the
 * envelope and its type's data schema. Waits for the next publication while there is none.
 */
const nextOf = async (agentId: string, type: keyof typeof WEBHOOK_EVENT_TYPES): Promise<WebhookEnvelope> => {
  for (;;) {
    const envelope = world.recorded.published.find((e) => e.agent_id === agentId && e.type === type && !returned.has(e))
    if (envelope === undefined) {
      await run(world.recorded.take)
      continue
    }
    returned.add(envelope)
    Schema.decodeUnknownSync(Envelope)(envelope)
    Schema.decodeUnknownSync(WEBHOOK_EVENT_TYPES[type].data as Schema.Schema<unknown>)(envelope.data)
    expect(envelope.org_id).toBe(ORG)
    expect(JSON.stringify(envelope)).not.toContain(SECRET)
    return envelope
  }
}

describe("the gateway's events", () => {
  it("a contained agent's 403: enforcement.blocked, rule containment, the refusal's reason", async () => {
    const containment = {
      status: "paused" as const,
      reason: "incident",
      contained_at: "2026-01-31T12:00:00Z",
      contained_by: "system"
    }
    const agent = await newAgent(world, { containment })
    const res = await agent.send({ think: "x" })
    expect(res.status).toBe(403)
    const paused = await nextOf(agent.agentId, "enforcement.blocked")
    expect(paused.data).toEqual({
      agent_id: agent.agentId,
      session_id: "ses-events",
      provider: "anthropic",
      rule: "containment",
      reason: "agent_paused",
      checkpoint_id: null
    })
    await run(world.state.update(agent.agentId, { containment: { ...containment, status: "killed" } }))
    expect((await agent.send({ think: "x" })).status).toBe(403)
    const killed = await nextOf(agent.agentId, "enforcement.blocked")
    expect(killed.data).toMatchObject({ rule: "containment", reason: "agent_killed" })
    // Each refusal is its own occurrence.
    expect(killed.id).not.toBe(paused.id)
  })

  it("a policy 403: policy.violation (fail) and enforcement.blocked naming the forbidden tools", async () => {
    const agent = await newAgent(world, { policy: Schema.decodeUnknownSync(Policy)(SHELL_FORBIDDEN) })
    const res = await agent.send({ tools: tools("shell_exec", "read_file") })
    expect(res.status).toBe(403)
    const violation = await nextOf(agent.agentId, "policy.violation")
    expect(violation.data).toEqual({
      agent_id: agent.agentId,
      checkpoint_id: null,
      phase: "request",
      verdict: "fail",
      mode: "enforce",
      violations: [{ type: "forbidden", tool: "shell_exec", reason: "no shell access", severity: "high" }],
      warnings: []
    })
    const blocked = await nextOf(agent.agentId, "enforcement.blocked")
    expect(blocked.data).toMatchObject({ rule: "policy", reason: "forbidden tools: shell_exec", checkpoint_id: null })
  })

  it("a request whose tools cannot be read, under a policy that does not fail open: blocked, rule policy", async () => {
    const policy = Schema.decodeUnknownSync(Policy)({
      ...SHELL_FORBIDDEN,
      defaults: { ...SHELL_FORBIDDEN.defaults, fail_open: false }
    })
    const agent = await newAgent(world, { policy })
    const res = await call(`${world.gateway.url}/anthropic/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": agent.key, "content-type": "application/json" },
      body: `not json ${SECRET}`
    })
    expect(res.status).toBe(403)
    const blocked = await nextOf(agent.agentId, "enforcement.blocked")
    expect(blocked.data).toMatchObject({ rule: "policy", reason: expect.stringContaining("unreadable") })
  })

  it("warn mode: policy.violation (fail, mode warn), the request forwarded and nothing blocked", async () => {
    const agent = await newAgent(world, {
      policy: Schema.decodeUnknownSync(Policy)({ ...SHELL_FORBIDDEN, defaults: { enforcement_mode: "warn" } })
    })
    const res = await agent.send({ tools: tools("shell_exec") })
    expect(res.status).toBe(200)
    expect(res.headers["x-policy-verdict"]).toBe("warn")
    const violation = await nextOf(agent.agentId, "policy.violation")
    expect(violation.data).toMatchObject({ phase: "request", verdict: "fail", mode: "warn", checkpoint_id: null })
    expect(world.recorded.published.filter((e) => e.agent_id === agent.agentId).map((e) => e.type)).toEqual([
      "policy.violation"
    ])
  })

  it("an enforce-mode boundary violation's 403: enforcement.blocked, rule enforce, with its checkpoint", async () => {
    const agent = await newAgent(world, { mode: "enforce" })
    const res = await agent.send({ think: `EXFILTRATE ${SECRET}` })
    expect(res.status).toBe(403)
    const { checkpoint_id } = JSON.parse(res.body.toString()) as { checkpoint_id: string }
    const blocked = await nextOf(agent.agentId, "enforcement.blocked")
    expect(blocked.data).toEqual({
      agent_id: agent.agentId,
      session_id: "ses-events",
      provider: "anthropic",
      rule: "enforce",
      reason: "boundary_violation",
      checkpoint_id
    })
    // Its source is the checkpoint: the same block reported again is the same event.
    expect(blocked.id).toBe(eventId("enforcement.blocked", checkpoint_id))
  })

  it("answers the client the same when the feed fails", async () => {
    const containment = {
      status: "paused" as const,
      reason: null,
      contained_at: "2026-01-31T12:00:00Z",
      contained_by: "system"
    }
    const policy = Schema.decodeUnknownSync(Policy)(SHELL_FORBIDDEN)
    for (const on of [world, failing]) {
      const contained = await newAgent(on, { containment })
      const forbidden = await newAgent(on, { policy })
      const enforced = await newAgent(on, { mode: "enforce" })
      const answers = [
        await contained.send({ think: "x" }),
        await forbidden.send({ tools: tools("shell_exec") }),
        await enforced.send({ think: "EXFILTRATE" })
      ].map((res) => ({ status: res.status, body: JSON.parse(res.body.toString()) as Record<string, unknown> }))
      expect(answers.map((a) => a.status)).toEqual([403, 403, 403])
      expect(answers[0]!.body).toMatchObject({ type: "containment_error", reason: "agent_paused" })
      expect(answers[1]!.body).toMatchObject({ error: "blocked by Candor tool policy: shell_exec" })
      expect(answers[2]!.body).toMatchObject({ error: "blocked by Candor: boundary violation" })
    }
    expect(failing.recorded.published).toEqual([])
  })
})
