/**
 * The tool policy at the gateway, over real HTTP with the real provider adapters: `enforce` blocks
 * with 403 before the upstream is called, `warn` forwards with `X-Policy-Verdict`, the grace period
 * for new tools runs on the (test) clock, every provider's tool format is read, and the response's
 * tool calls are recorded in the trace.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as TestClock from "effect/TestClock"
import * as TestContext from "effect/TestContext"
import type { ServerResponse } from "node:http"
import { Bus, type Subscription } from "../../../adapters/bus/Bus.js"
import { AgentState } from "../../../adapters/bus/AgentState.js"
import { MAX_TOOLS_PER_AGENT } from "../../../adapters/bus/ToolSightings.js"
import { agentIdOf } from "../../../adapters/gateway/AgentIdentity.js"
import { Inspector } from "../../../adapters/gateway/Inspector.js"
import { sha256Hex } from "../../../adapters/providers/Identity.js"
import { GatewayEvent } from "../../../core/schema/Event.js"
import { Policy, type PolicyEncoded } from "../../../core/schema/Policy.js"
import {
  call,
  keyHeader,
  type FakeUpstream,
  type Recorded,
  startGateway,
  startUpstream,
  type TestGateway
} from "./Harness.js"
import { inspectorWithFakes } from "./Fakes.js"

const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(effect)
const policyOf = (encoded: PolicyEncoded): Policy => Schema.decodeUnknownSync(Policy)(encoded)

const json = (res: ServerResponse, body: unknown) => {
  const text = JSON.stringify(body)
  res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
  res.end(text)
}

/** Each provider's minimal answer; `call` in the request body makes the Anthropic answer call that tool. */
const speak = (r: Recorded, res: ServerResponse) => {
  let body: { call?: string; input?: unknown } = {}
  try {
    body = JSON.parse(r.body.toString() || "{}")
  } catch {
    // not JSON (the fail_open test): answer all the same
  }
  if (r.url.startsWith("/v1/messages") && (body as { stream?: boolean }).stream === true) {
    // A streamed answer calling `call`: it reaches the client before any verdict.
    const events = [
      { type: "message_start", message: { model: "claude-test", content: [] } },
      {
        type: "content_block_start",
        index: 0,
        content_block: { type: "tool_use", id: "tu_1", name: body.call ?? "none", input: {} }
      },
      { type: "content_block_stop", index: 0 },
      { type: "message_delta", delta: { stop_reason: "tool_use" } },
      { type: "message_stop" }
    ]
    res.writeHead(200, { "content-type": "text/event-stream" })
    return res.end(events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join(""))
  }
  if (r.url.startsWith("/v1/messages")) {
    return json(res, {
      model: "claude-test",
      content: [
        { type: "text", text: "ok" },
        ...(body.call === undefined ? [] : [{ type: "tool_use", id: "tu_1", name: body.call, input: body.input ?? {} }])
      ]
    })
  }
  if (r.url.startsWith("/v1/chat/completions")) {
    return json(res, {
      model: "gpt-test",
      choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }]
    })
  }
  if (r.url.startsWith("/v1/responses")) {
    return json(res, {
      object: "response",
      model: "gpt-test",
      output: [{ type: "message", content: [{ type: "output_text", text: "ok" }] }]
    })
  }
  return json(res, { candidates: [{ content: { parts: [{ text: "ok" }] }, finishReason: "STOP", index: 0 }] })
}

let scope: Scope.CloseableScope
let upstream: FakeUpstream
let gateway: TestGateway
let state: AgentState["Type"]
let events: Subscription
let clock: TestClock.TestClock

beforeAll(async () => {
  scope = await run(Scope.make())
  // The inspector reads time from this clock: the grace period is driven by adjusting it.
  const testClock = TestClock.defaultTestClock.pipe(Layer.provide(TestContext.TestContext))
  clock = Context.get(await run(Layer.buildWithScope(testClock, scope)), TestClock.TestClock)
  await run(clock.setTime(Date.parse("2026-03-01T12:00:00Z")))
  const context = await run(Layer.buildWithScope(inspectorWithFakes.pipe(Layer.provide(Layer.setClock(clock))), scope))
  state = Context.get(context, AgentState)
  events = await run(Scope.extend(Context.get(context, Bus).subscribe("candor.events."), scope))
  upstream = await startUpstream(speak)
  gateway = await startGateway(upstream.url, Context.get(context, Inspector))
})
afterAll(async () => {
  await gateway.close()
  await upstream.close()
  await run(Scope.close(scope, Exit.void))
})

let keyCounter = 0
/** A fresh agent (its own key) per test, with the given policy. */
const newAgent = async (policy: PolicyEncoded | undefined) => {
  const key = `sk-policy-${++keyCounter}`
  const agentId = agentIdOf(sha256Hex(key), undefined)
  if (policy !== undefined) await run(state.update(agentId, { policy: policyOf(policy) }))
  const send = (path: string, body: Record<string, unknown>) =>
    call(`${gateway.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...keyHeader(path, key) },
      body: JSON.stringify(body)
    })
  const anthropic = (tools: ReadonlyArray<string>, extra: Record<string, unknown> = {}) =>
    send("/anthropic/v1/messages", anthropicBody(tools, extra))
  return { agentId, key, send, anthropic }
}

const anthropicBody = (tools: ReadonlyArray<string>, extra: Record<string, unknown> = {}) => ({
  model: "claude-test",
  max_tokens: 10,
  messages: [{ role: "user", content: "hi" }],
  tools: tools.map((name) => ({ name, input_schema: { type: "object" } })),
  ...extra
})

/** The next event of this agent (events of other agents are skipped). */
const eventOf = async (agentId: string): Promise<GatewayEvent> => {
  for (;;) {
    const message = await run(events.take)
    // Enforcement records travel on the same subjects (test/adapters/gateway/EnforcementRecords.test.ts).
    if ((message.payload as { type?: unknown }).type === "gateway.enforcement") continue
    const event = Schema.decodeUnknownSync(GatewayEvent)(message.payload)
    if (event.agent_id === agentId) return event
  }
}

const SHELL_FORBIDDEN: PolicyEncoded = {
  capability_mappings: { browsing: { tools: ["mcp__browser__*"], card_actions: ["web_fetch"] } },
  forbidden: [{ pattern: "shell_*", reason: "no shell access" }],
  defaults: { enforcement_mode: "enforce", unmapped_tool_action: "allow" }
}

describe("tool policy at the gateway", () => {
  it("enforce: a forbidden tool is answered 403 {error, policy_verdict} and the upstream is never called", async () => {
    const agent = await newAgent(SHELL_FORBIDDEN)
    const before = upstream.requests.length
    const res = await agent.anthropic(["mcp__browser__navigate", "shell_exec"])
    expect(res.status).toBe(403)
    expect(res.headers["x-policy-verdict"]).toBe("fail")
    expect(res.headers["content-type"]).toBe("application/json")
    expect(JSON.parse(res.body.toString())).toEqual({
      error: "blocked by Candor tool policy: shell_exec",
      policy_verdict: {
        mode: "enforce",
        verdict: "fail",
        violations: [{ type: "forbidden", tool: "shell_exec", reason: "no shell access", severity: "high" }],
        warnings: [],
        tools_evaluated: 2
      }
    })
    expect(upstream.requests.length).toBe(before)
  })

  it("enforce: allowed tools pass, unchanged, with X-Policy-Verdict: pass", async () => {
    const agent = await newAgent(SHELL_FORBIDDEN)
    const res = await agent.anthropic(["mcp__browser__navigate"])
    expect(res.status).toBe(200)
    expect(res.headers["x-policy-verdict"]).toBe("pass")
    expect(JSON.parse(res.body.toString()).content[0]).toEqual({ type: "text", text: "ok" })
    const event = await eventOf(agent.agentId)
    expect(event.trace.context?.metadata).toMatchObject({
      policy_verdict: "pass",
      policy: { mode: "enforce", request_verdict: "pass" }
    })
  })

  it("warn: a forbidden tool is forwarded byte for byte with X-Policy-Verdict: warn and recorded", async () => {
    const agent = await newAgent({ ...SHELL_FORBIDDEN, defaults: { enforcement_mode: "warn" } })
    const before = upstream.requests.length
    const res = await agent.anthropic(["shell_exec"])
    expect(res.status).toBe(200)
    expect(res.headers["x-policy-verdict"]).toBe("warn")
    expect(upstream.requests.length).toBe(before + 1)
    expect(upstream.requests.at(-1)!.body.toString()).toBe(JSON.stringify(anthropicBody(["shell_exec"])))
    const event = await eventOf(agent.agentId)
    expect(event.trace.context?.metadata).toMatchObject({ policy: { mode: "warn", request_verdict: "warn" } })
  })

  it("the header is on held responses too (alignment enforce mode waits for the verdict)", async () => {
    const agent = await newAgent(SHELL_FORBIDDEN)
    await run(state.update(agent.agentId, { mode: "enforce" }))
    const res = await agent.anthropic(["mcp__browser__navigate"])
    expect(res.status).toBe(200)
    expect(res.headers["x-policy-verdict"]).toBe("pass")
    await eventOf(agent.agentId)
  })

  it("no policy, or mode off: no evaluation and no header", async () => {
    for (const policy of [undefined, { ...SHELL_FORBIDDEN, defaults: { enforcement_mode: "off" as const } }]) {
      const agent = await newAgent(policy)
      const res = await agent.anthropic(["shell_exec"])
      expect(res.status).toBe(200)
      expect(res.headers["x-policy-verdict"]).toBeUndefined()
      const event = await eventOf(agent.agentId)
      expect(event.trace.context?.metadata).not.toHaveProperty("policy_verdict")
    }
  })

  it("a new unmapped tool gets its grace period (warn), and is blocked once the grace period is over", async () => {
    const agent = await newAgent({
      defaults: {
        enforcement_mode: "enforce",
        unmapped_tool_action: "deny",
        unmapped_severity: "high",
        grace_period_hours: 24
      }
    })
    const first = await agent.anthropic(["brand_new_tool"])
    expect(first.status).toBe(200)
    expect(first.headers["x-policy-verdict"]).toBe("warn")
    const event = await eventOf(agent.agentId)
    expect(event.trace.context?.metadata).toMatchObject({ policy: { request_verdict: "warn" } })

    await run(clock.adjust("23 hours"))
    const still = await agent.anthropic(["brand_new_tool"])
    expect(still.headers["x-policy-verdict"]).toBe("warn")
    await eventOf(agent.agentId)

    await run(clock.adjust("1 hour"))
    const before = upstream.requests.length
    const late = await agent.anthropic(["brand_new_tool", "another_new_tool"])
    expect(late.status).toBe(403)
    const verdict = JSON.parse(late.body.toString()).policy_verdict
    expect(verdict.violations).toEqual([
      {
        type: "unmapped_denied",
        tool: "brand_new_tool",
        reason: "no capability mapping covers this tool",
        severity: "high"
      }
    ])
    // The other tool is new now: it starts its own grace period.
    expect(verdict.warnings).toMatchObject([{ tool: "another_new_tool", type: "unmapped_denied" }])
    expect(upstream.requests.length).toBe(before)
  })

  it("the grace period runs from the first sighting in the shared agent state: one noted before (a restart, another gateway) is not restarted", async () => {
    const agent = await newAgent({
      defaults: {
        enforcement_mode: "enforce",
        unmapped_tool_action: "deny",
        unmapped_severity: "high",
        grace_period_hours: 24
      }
    })
    const now = await run(clock.currentTimeMillis)
    state.noteTools(agent.agentId, [{ name: "known_tool" }], now - 25 * 3_600_000)
    const before = upstream.requests.length
    const res = await agent.anthropic(["known_tool"])
    expect(res.status).toBe(403)
    expect(JSON.parse(res.body.toString()).policy_verdict.violations).toMatchObject([{ tool: "known_tool" }])
    expect(upstream.requests.length).toBe(before)
  })

  it("a new tool the agent's full record cannot take gets no grace", async () => {
    const agent = await newAgent({
      defaults: {
        enforcement_mode: "enforce",
        unmapped_tool_action: "deny",
        unmapped_severity: "high",
        grace_period_hours: 24
      }
    })
    const tools = Array.from({ length: MAX_TOOLS_PER_AGENT }, (_, i) => ({ name: `filler_${i}` }))
    state.noteTools(agent.agentId, tools, await run(clock.currentTimeMillis))
    const res = await agent.anthropic(["one_too_many"])
    expect(res.status).toBe(403)
    expect(JSON.parse(res.body.toString()).policy_verdict.violations).toMatchObject([{ tool: "one_too_many" }])
  })

  it("enforce blocks on critical and high findings only: low and medium ones are forwarded as warn", async () => {
    const agent = await newAgent({
      forbidden: [
        { pattern: "?ash", reason: "no shells", severity: "medium" },
        { pattern: "scratch_*", reason: "discouraged", severity: "low" }
      ],
      escalation_triggers: [{ condition: "tool_matches('pay_*')", action: "deny", reason: "no payments" }],
      defaults: { enforcement_mode: "enforce", unmapped_tool_action: "allow" }
    })
    const soft = await agent.anthropic(["bash", "scratch_pad"])
    expect(soft.status).toBe(200)
    expect(soft.headers["x-policy-verdict"]).toBe("warn")
    await eventOf(agent.agentId)
    const before = upstream.requests.length
    const denied = await agent.anthropic(["bash", "pay_out"])
    expect(denied.status).toBe(403)
    expect(denied.headers["x-policy-verdict"]).toBe("fail")
    expect(JSON.parse(denied.body.toString()).policy_verdict.violations).toEqual([
      { type: "forbidden", tool: "bash", reason: "no shells", severity: "medium" },
      { type: "escalation", tool: "pay_out", reason: "no payments", severity: "high" }
    ])
    expect(upstream.requests.length).toBe(before)
  })

  it("approve (human approval) cannot wait on the LLM path: 403 under enforce, forwarded as a warning otherwise", async () => {
    const approving = (mode: "enforce" | "warn"): PolicyEncoded => ({
      escalation_triggers: [{ condition: "tool_matches('repo_delete')", action: "approve", reason: "needs a person" }],
      defaults: { enforcement_mode: mode, unmapped_tool_action: "allow" }
    })
    const enforcing = await newAgent(approving("enforce"))
    const before = upstream.requests.length
    const denied = await enforcing.anthropic(["repo_delete"])
    expect(denied.status).toBe(403)
    expect(JSON.parse(denied.body.toString()).policy_verdict.violations).toEqual([
      { type: "escalation", tool: "repo_delete", reason: "needs a person", severity: "high" }
    ])
    expect(upstream.requests.length).toBe(before)

    const warning = await newAgent(approving("warn"))
    const escalated = await warning.anthropic(["repo_delete"])
    expect(escalated.status).toBe(200)
    expect(escalated.headers["x-policy-verdict"]).toBe("warn")
    expect(upstream.requests.length).toBe(before + 1)
    await eventOf(warning.agentId)
  })

  it("fail_open: false refuses, in enforce, a request whose tools cannot be read; true forwards it marked warn", async () => {
    const sendText = (key: string) =>
      call(`${gateway.url}/anthropic/v1/messages`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": key },
        body: "this is not JSON"
      })
    const closed = await newAgent({ defaults: { enforcement_mode: "enforce", fail_open: false } })
    const before = upstream.requests.length
    const refused = await sendText(closed.key)
    expect(refused.status).toBe(403)
    expect(refused.headers["x-policy-verdict"]).toBe("fail")
    expect(JSON.parse(refused.body.toString()).error).toContain("cannot be read")
    expect(upstream.requests.length).toBe(before)
    const open = await newAgent({ defaults: { enforcement_mode: "enforce", fail_open: true } })
    const forwarded = await sendText(open.key)
    expect(forwarded.status).toBe(200)
    // Forwarded unchecked, never as a pass: the header and the record say so (issue 24).
    expect(forwarded.headers["x-policy-verdict"]).toBe("warn")
    const event = await eventOf(open.agentId)
    expect(event.trace.context?.metadata).toMatchObject({
      policy: { request_verdict: "warn", request_unreadable: true }
    })
  })

  it("reads each provider's tool format", async () => {
    const policy: PolicyEncoded = {
      forbidden: [
        { pattern: "shell_exec", reason: "no shell" },
        { pattern: "code*", reason: "no code execution" },
        { pattern: "web_search*", reason: "offline agent" }
      ],
      defaults: { enforcement_mode: "enforce", unmapped_tool_action: "allow" }
    }
    const cases: ReadonlyArray<readonly [string, string, Record<string, unknown>, ReadonlyArray<string>]> = [
      [
        "Anthropic tools[].name",
        "/anthropic/v1/messages",
        {
          model: "claude-test",
          messages: [],
          tools: [
            { name: "get_weather", input_schema: {} },
            { type: "web_search_20250305", name: "web_search" },
            { name: "shell_exec", input_schema: {} }
          ]
        },
        ["web_search", "shell_exec"]
      ],
      [
        "OpenAI chat tools[].function.name",
        "/openai/v1/chat/completions",
        {
          model: "gpt-test",
          messages: [],
          tools: [
            { type: "function", function: { name: "get_weather" } },
            { type: "function", function: { name: "shell_exec" } }
          ]
        },
        ["shell_exec"]
      ],
      [
        "OpenAI chat legacy functions[].name",
        "/openai/v1/chat/completions",
        {
          model: "gpt-test",
          messages: [],
          functions: [{ name: "shell_exec", parameters: {} }]
        },
        ["shell_exec"]
      ],
      [
        "OpenAI Responses tools[].name and built-in types",
        "/openai/v1/responses",
        {
          model: "gpt-test",
          input: "hi",
          tools: [
            { type: "function", name: "shell_exec", parameters: {} },
            { type: "web_search_preview" },
            { type: "code_interpreter", container: { type: "auto" } }
          ]
        },
        ["shell_exec", "web_search_preview", "code_interpreter"]
      ],
      [
        "Gemini functionDeclarations and built-in tools",
        "/gemini/v1beta/models/gemini-test:generateContent",
        {
          contents: [{ role: "user", parts: [{ text: "hi" }] }],
          tools: [
            { functionDeclarations: [{ name: "get_weather" }, { name: "shell_exec" }] },
            { code_execution: {} },
            { googleSearch: {} }
          ]
        },
        ["shell_exec", "codeExecution"]
      ]
    ]
    for (const [name, path, body, blocked] of cases) {
      const agent = await newAgent(policy)
      const res = await agent.send(path, body)
      expect(res.status, name).toBe(403)
      const verdict = JSON.parse(res.body.toString()).policy_verdict
      expect(
        verdict.violations.map((v: { tool: string }) => v.tool),
        name
      ).toEqual(blocked)
      // Without the forbidden tools, the same request goes through.
      const allowed = await agent.send(path, { ...body, tools: [], functions: [] })
      expect(allowed.headers["x-policy-verdict"], name).toBe("pass")
      await eventOf(agent.agentId)
    }
  })

  it("enforce: a non-streaming answer calling a forbidden tool is held and answered 403, and recorded (issue 28)", async () => {
    const agent = await newAgent(SHELL_FORBIDDEN)
    // The request declares nothing forbidden; the model calls a forbidden tool anyway. The agent
    // itself only observes: the policy's `enforce` alone holds the answer.
    const res = await agent.anthropic(["mcp__browser__navigate"], { call: "shell_exec" })
    expect(res.status).toBe(403)
    // The header is the request's verdict (its declared tools passed); the body says what failed.
    expect(res.headers["x-policy-verdict"]).toBe("pass")
    const body = JSON.parse(res.body.toString())
    expect(body.error).toBe("blocked by Candor tool policy: the answer calls shell_exec")
    expect(res.body.toString()).not.toContain("tool_use")
    const event = await eventOf(agent.agentId)
    expect(body.checkpoint_id).toBe(event.checkpoint.checkpoint_id)
    expect(event.trace.action).toEqual({ type: "execute", name: "shell_exec", category: "forbidden" })
    expect(event.trace.context?.metadata).toMatchObject({
      policy_verdict: "fail",
      policy: {
        mode: "enforce",
        request_verdict: "pass",
        tools_evaluated: 1,
        violations: [{ type: "forbidden", tool: "shell_exec", reason: "no shell access", severity: "high" }]
      }
    })
    // Still an event the actors accept.
    expect(() => Schema.decodeUnknownSync(GatewayEvent)(event)).not.toThrow()
  })

  it("enforce: an answer's tool call is judged with its arguments (argument conditions): a path outside the glob is 403", async () => {
    const agent = await newAgent({
      argument_conditions: [
        { tool: "read_file", argument: "path", matches: "/srv/docs/*", reason: "documents only", severity: "high" }
      ],
      defaults: { enforcement_mode: "enforce", unmapped_tool_action: "allow" }
    })
    const refused = await agent.anthropic(["read_file"], { call: "read_file", input: { path: "/etc/passwd" } })
    expect(refused.status).toBe(403)
    expect(JSON.parse(refused.body.toString()).error).toBe("blocked by Candor tool policy: the answer calls read_file")
    const refusedEvent = await eventOf(agent.agentId)
    expect(refusedEvent.trace.context?.metadata).toMatchObject({
      policy_verdict: "fail",
      policy: {
        violations: [
          {
            type: "argument",
            tool: "read_file",
            reason: "argument path does not match /srv/docs/*: documents only",
            severity: "high"
          }
        ]
      }
    })
    // The value itself is never in the record.
    expect(JSON.stringify(refusedEvent)).not.toContain("/etc/passwd")
    const allowed = await agent.anthropic(["read_file"], { call: "read_file", input: { path: "/srv/docs/a.md" } })
    expect(allowed.status).toBe(200)
    expect(JSON.parse(allowed.body.toString()).content[1]).toMatchObject({ name: "read_file" })
    await eventOf(agent.agentId)
  })

  it("enforce: a streamed answer calling a forbidden tool cannot be withheld: the next request is nudged", async () => {
    const agent = await newAgent(SHELL_FORBIDDEN)
    const res = await agent.anthropic(["mcp__browser__navigate"], { call: "shell_exec", stream: true })
    expect(res.status).toBe(200)
    expect(res.body.toString()).toContain("shell_exec")
    const event = await eventOf(agent.agentId)
    expect(event.trace.context?.metadata).toMatchObject({ policy_verdict: "fail" })
    const before = upstream.requests.length
    expect((await agent.anthropic(["mcp__browser__navigate"])).status).toBe(200)
    const next = JSON.parse(upstream.requests[before]!.body.toString())
    expect(next.system).toContain(`(checkpoint ${event.checkpoint.checkpoint_id}) was flagged`)
    expect(next.system).toContain("shell_exec")
  })

  it("warn: the answer's forbidden tool call is recorded in the trace, never blocked", async () => {
    const agent = await newAgent({
      ...SHELL_FORBIDDEN,
      defaults: { enforcement_mode: "warn", unmapped_tool_action: "allow" }
    })
    const res = await agent.anthropic(["mcp__browser__navigate"], { call: "shell_exec" })
    expect(res.status).toBe(200)
    expect(JSON.parse(res.body.toString()).content[1]).toMatchObject({ type: "tool_use", name: "shell_exec" })
    const event = await eventOf(agent.agentId)
    expect(event.trace.action).toEqual({ type: "execute", name: "shell_exec", category: "forbidden" })
    expect(event.trace.context?.metadata).toMatchObject({ policy_verdict: "fail", policy: { mode: "warn" } })
  })

  it("a blocked request keeps the agent's pending nudge for the next request that goes out", async () => {
    const agent = await newAgent(SHELL_FORBIDDEN)
    await run(state.setNudge(agent.agentId, "NUDGE-TEXT"))
    expect((await agent.anthropic(["shell_exec"])).status).toBe(403)
    expect((await agent.anthropic([], { system: "be helpful" })).status).toBe(200)
    expect(JSON.parse(upstream.requests.at(-1)!.body.toString()).system).toBe("be helpful\n\nNUDGE-TEXT")
    await eventOf(agent.agentId)
  })
})
