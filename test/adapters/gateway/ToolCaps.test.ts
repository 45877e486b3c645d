/**
 * The tool caps at the gateway (issue 24), over real HTTP with the real provider adapters: when an
 * active tool policy makes the gateway read a request's tools, more than GATEWAY_MAX_TOOLS entries or
 * a name longer than GATEWAY_MAX_TOOL_NAME is a 413 `{error}` naming the cap and the provider is never
 * called; a flood of tools is refused from its bytes, before any parse; without a policy the same
 * requests are forwarded byte for byte.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import { AgentState } from "../../../adapters/bus/AgentState.js"
import { Bus } from "../../../adapters/bus/Bus.js"
import { agentIdOf } from "../../../adapters/gateway/AgentIdentity.js"
import * as GatewayInspector from "../../../adapters/gateway/GatewayInspector.js"
import { Inspector } from "../../../adapters/gateway/Inspector.js"
import { ProviderAdapters } from "../../../adapters/gateway/ProviderAdapters.js"
import { requestsOverCap } from "../../../adapters/metrics/GatewayMetrics.js"
import { sha256Hex } from "../../../adapters/providers/Identity.js"
import { providerAdapters } from "../../../adapters/providers/Registry.js"
import { request } from "node:http"
import { Policy, type PolicyEncoded } from "../../../core/schema/Policy.js"
import { FakeJudge } from "./Fakes.js"
import { call, type FakeUpstream, keyHeader, startGateway, startUpstream, type TestGateway } from "./Harness.js"

const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(effect)

let scope: Scope.CloseableScope
let upstream: FakeUpstream
let gateway: TestGateway
/** A second gateway with caps of its own (3 tools, names of 10): the caps are configurable. */
let small: TestGateway
let state: AgentState["Type"]

const inspectorWith = (options: Partial<GatewayInspector.GatewayInspectorOptions>) =>
  GatewayInspector.layer(options).pipe(
    Layer.provideMerge(
      Layer.mergeAll(
        AgentState.layerMemory,
        Bus.layerMemory,
        Layer.succeed(ProviderAdapters, providerAdapters),
        FakeJudge
      )
    )
  )

beforeAll(async () => {
  scope = await run(Scope.make())
  const context = await run(Layer.buildWithScope(inspectorWith({}), scope))
  const smallContext = await run(
    Layer.buildWithScope(inspectorWith({ toolCaps: { maxTools: 3, maxNameLength: 10 } }), scope)
  )
  state = Context.get(context, AgentState)
  upstream = await startUpstream((_r, res) => {
    res.writeHead(200, { "content-type": "application/json" })
    res.end(JSON.stringify({ model: "m", content: [{ type: "text", text: "ok" }] }))
  })
  gateway = await startGateway(upstream.url, Context.get(context, Inspector))
  small = await startGateway(upstream.url, Context.get(smallContext, Inspector))
  await run(
    Context.get(smallContext, AgentState).update(agentIdOf(sha256Hex("sk-small"), undefined), {
      policy: Schema.decodeUnknownSync(Policy)(WARN_ALL)
    })
  )
})
afterAll(async () => {
  await gateway.close()
  await small.close()
  await upstream.close()
  await run(Scope.close(scope, Exit.void))
})

/** A policy in `warn` that allows every tool: only the caps can refuse. */
const WARN_ALL: PolicyEncoded = { defaults: { enforcement_mode: "warn", unmapped_tool_action: "allow" } }

let keys = 0
const agent = async (policy: PolicyEncoded | undefined) => {
  const key = `sk-caps-${++keys}`
  if (policy !== undefined) {
    await run(state.update(agentIdOf(sha256Hex(key), undefined), { policy: Schema.decodeUnknownSync(Policy)(policy) }))
  }
  return key
}

const send = (target: TestGateway, key: string, path: string, body: string | Buffer) =>
  call(`${target.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...keyHeader(path, key) },
    body
  })

const names = (n: number, length = 12) => Array.from({ length: n }, (_, i) => `tool_${i}_`.padEnd(length, "x"))
const anthropic = (tools: ReadonlyArray<string>) =>
  JSON.stringify({
    model: "claude-test",
    max_tokens: 10,
    messages: [{ role: "user", content: "hi" }],
    tools: tools.map((name) => ({ name, description: "a tool", input_schema: { type: "object" } }))
  })
const openai = (tools: ReadonlyArray<string>, functions: ReadonlyArray<string>) =>
  JSON.stringify({
    model: "gpt-test",
    messages: [{ role: "user", content: "hi" }],
    tools: tools.map((name) => ({ type: "function", function: { name, parameters: { type: "object" } } })),
    functions: functions.map((name) => ({ name }))
  })
const gemini = (tools: ReadonlyArray<string>) =>
  JSON.stringify({
    contents: [{ role: "user", parts: [{ text: "hi" }] }],
    tools: [{ functionDeclarations: tools.map((name) => ({ name })) }, { googleSearch: {} }]
  })

/** `candor_gateway_requests_over_cap_total{cap}` now. */
const overCap = (cap: string) => Effect.runSync(Metric.value(requestsOverCap.pipe(Metric.tagged("cap", cap)))).count

const refusal = (res: { status: number; headers: Record<string, unknown>; body: Buffer }) => {
  expect(res.status).toBe(413)
  expect(res.headers["content-type"]).toBe("application/json")
  const body = JSON.parse(res.body.toString()) as { error: string }
  expect(Object.keys(body)).toEqual(["error"])
  return body.error
}

describe("tool caps at the gateway", () => {
  it("an active policy: 513 tools is 413 naming GATEWAY_MAX_TOOLS, and the upstream is never called", async () => {
    const key = await agent(WARN_ALL)
    const before = upstream.requests.length
    const counted = overCap("tools")
    const error = refusal(await send(gateway, key, "/anthropic/v1/messages", anthropic(names(513))))
    expect(error).toMatch(/declares 513 tools; at most 512 .*GATEWAY_MAX_TOOLS/)
    expect(upstream.requests.length).toBe(before)
    expect(overCap("tools")).toBe(counted + 1)
  })

  it("20,000 tools (the issue's flood) is refused from its bytes: a body JSON.parse would reject is refused all the same", async () => {
    const key = await agent(WARN_ALL)
    const before = upstream.requests.length
    const flood = anthropic(names(20_000))
    refusal(await send(gateway, key, "/anthropic/v1/messages", flood))
    // Without its closing brace: not JSON, so only a scan of the bytes can have counted the tools (a
    // parse fails, and under `fail_open` the request would have been forwarded unread).
    const cut = flood.slice(0, -1)
    expect(() => JSON.parse(cut)).toThrow()
    expect(refusal(await send(gateway, key, "/anthropic/v1/messages", cut))).toMatch(/at most 512/)
    expect(upstream.requests.length).toBe(before)
  })

  it("a flood is refused from its first bytes: the 413 comes before the client has sent the rest, and the connection closes", async () => {
    const key = await agent(WARN_ALL)
    const flood = Buffer.from(anthropic(names(20_000)))
    const before = upstream.requests.length
    const res = await new Promise<{ status: number; connection: string | undefined; body: string }>(
      (resolve, reject) => {
        const req = request(
          `${gateway.url}/anthropic/v1/messages`,
          {
            method: "POST",
            headers: { "content-type": "application/json", "x-api-key": key, "content-length": flood.byteLength },
            agent: false
          },
          (answer) => {
            const chunks: Array<Buffer> = []
            answer.on("data", (c: Buffer) => chunks.push(c))
            answer.on("end", () =>
              resolve({
                status: answer.statusCode!,
                connection: answer.headers.connection,
                body: Buffer.concat(chunks).toString()
              })
            )
          }
        )
        req.on("error", reject)
        // A fifth of the body, and then nothing: a gateway that waited for the rest would never answer.
        req.write(flood.subarray(0, 400 * 1024))
      }
    )
    expect(res.status).toBe(413)
    expect(res.connection).toBe("close")
    expect(JSON.parse(res.body).error).toMatch(/at most 512 .*GATEWAY_MAX_TOOLS/)
    expect(upstream.requests.length).toBe(before)
  })

  it("counts OpenAI's tools and legacy functions together, and Gemini's declarations and built-in tools", async () => {
    const key = await agent(WARN_ALL)
    const before = upstream.requests.length
    refusal(await send(gateway, key, "/openai/v1/chat/completions", openai(names(300), names(213))))
    refusal(await send(gateway, key, "/gemini/v1beta/models/gemini-test:generateContent", gemini(names(512))))
    expect(upstream.requests.length).toBe(before)
    expect((await send(gateway, key, "/openai/v1/chat/completions", openai(names(300), names(212)))).status).toBe(200)
    expect(
      (await send(gateway, key, "/gemini/v1beta/models/gemini-test:generateContent", gemini(names(511)))).status
    ).toBe(200)
  })

  it("a tool name of 129 characters is 413 naming GATEWAY_MAX_TOOL_NAME; 512 names of 128 pass", async () => {
    const key = await agent(WARN_ALL)
    const error = refusal(await send(gateway, key, "/anthropic/v1/messages", anthropic(["ok", "n".repeat(129)])))
    expect(error).toMatch(/tool name of 129 characters .* at most 128 .*GATEWAY_MAX_TOOL_NAME/)
    const atCaps = await send(gateway, key, "/anthropic/v1/messages", anthropic(names(512, 128)))
    expect(atCaps.status).toBe(200)
    expect(atCaps.headers["x-policy-verdict"]).toBe("pass")
  })

  it("without a policy, or with mode off, the tools are not read: the same requests are forwarded byte for byte", async () => {
    for (const policy of [undefined, { defaults: { enforcement_mode: "off" as const } }]) {
      const key = await agent(policy)
      const flood = anthropic(names(20_000, 200))
      const res = await send(gateway, key, "/anthropic/v1/messages", flood)
      expect(res.status).toBe(200)
      expect(upstream.requests.at(-1)!.body.toString()).toBe(flood)
    }
  })

  it("the caps are the gateway's options (GATEWAY_MAX_TOOLS, GATEWAY_MAX_TOOL_NAME)", async () => {
    expect(refusal(await send(small, "sk-small", "/anthropic/v1/messages", anthropic(["a", "b", "c", "d"])))).toMatch(
      /declares 4 tools; at most 3/
    )
    expect(refusal(await send(small, "sk-small", "/anthropic/v1/messages", anthropic(["abcdefghijk"])))).toMatch(
      /11 characters .* at most 10/
    )
    expect((await send(small, "sk-small", "/anthropic/v1/messages", anthropic(["a", "b", "abcdefghij"]))).status).toBe(
      200
    )
  })
})
