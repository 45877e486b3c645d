/**
 * `GatewayServer.layer` as `candor serve` runs it (scoped: listen on build, close on release), with
 * the official Anthropic, OpenAI and Google SDKs pointed at it by base URL: a normal and a streaming
 * call each, through the SDKs' own helpers, against a fake upstream speaking each wire format. Then
 * the same SDKs through the real Inspector with a tool policy set: allowed tools work and carry
 * `X-Policy-Verdict`, a forbidden one surfaces as each SDK's own 403 error.
 */
import Anthropic from "@anthropic-ai/sdk"
import { ApiError, GoogleGenAI } from "@google/genai"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import * as Schema from "effect/Schema"
import OpenAI from "openai"
import * as Rules from "../../../adapters/analysis/Rules.js"
import { Bus } from "../../../adapters/bus/Bus.js"
import { AgentState } from "../../../adapters/bus/AgentState.js"
import { agentIdOf } from "../../../adapters/gateway/AgentIdentity.js"
import * as GatewayInspector from "../../../adapters/gateway/GatewayInspector.js"
import { Inspector } from "../../../adapters/gateway/Inspector.js"
import { ProviderAdapters } from "../../../adapters/gateway/ProviderAdapters.js"
import { sha256Hex } from "../../../adapters/providers/Identity.js"
import { providerAdapters } from "../../../adapters/providers/Registry.js"
import { Policy } from "../../../core/schema/Policy.js"
import { GatewayServer, layer as gatewayLayer } from "../../../adapters/gateway/GatewayServer.js"
import { type FakeUpstream, type Recorded, startUpstream } from "./Harness.js"
import type { ServerResponse } from "node:http"

const sse = (res: ServerResponse, events: ReadonlyArray<string>) => {
  res.writeHead(200, { "content-type": "text/event-stream" })
  for (const e of events) res.write(e)
  res.end()
}
const json = (res: ServerResponse, body: unknown) => {
  const text = JSON.stringify(body)
  res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
  res.end(text)
}

const anthropicMessage = {
  id: "msg_1",
  type: "message",
  role: "assistant",
  model: "claude-test",
  stop_reason: "end_turn",
  stop_sequence: null,
  content: [{ type: "text", text: "Hello from Anthropic" }],
  usage: { input_tokens: 3, output_tokens: 4 }
}
const anthropicStream = [
  `event: message_start\ndata: ${JSON.stringify({ type: "message_start", message: { ...anthropicMessage, content: [], stop_reason: null } })}\n\n`,
  `event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n`,
  `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}\n\n`,
  `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"lo"}}\n\n`,
  `event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n`,
  `event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":2}}\n\n`,
  `event: message_stop\ndata: {"type":"message_stop"}\n\n`
]
const openaiCompletion = {
  id: "chatcmpl-1",
  object: "chat.completion",
  created: 1,
  model: "gpt-test",
  choices: [{ index: 0, finish_reason: "stop", message: { role: "assistant", content: "Hello from OpenAI" } }]
}
const openaiChunk = (content: string | null, finish: string | null) =>
  `data: ${JSON.stringify({
    id: "chatcmpl-1",
    object: "chat.completion.chunk",
    created: 1,
    model: "gpt-test",
    choices: [{ index: 0, delta: content === null ? {} : { role: "assistant", content }, finish_reason: finish }]
  })}\n\n`
const geminiResponse = (text: string) => ({
  candidates: [{ content: { role: "model", parts: [{ text }] }, finishReason: "STOP", index: 0 }],
  modelVersion: "gemini-test"
})

const speak = (r: Recorded, res: ServerResponse) => {
  const body = r.body.length > 0 ? (JSON.parse(r.body.toString()) as { stream?: boolean }) : {}
  if (r.url.startsWith("/v1/messages"))
    return body.stream === true ? sse(res, anthropicStream) : json(res, anthropicMessage)
  if (r.url.startsWith("/v1/chat/completions")) {
    return body.stream === true
      ? sse(res, [openaiChunk("Hel", null), openaiChunk("lo", null), openaiChunk(null, "stop"), "data: [DONE]\n\n"])
      : json(res, openaiCompletion)
  }
  if (r.url.includes(":streamGenerateContent")) {
    return sse(res, [
      `data: ${JSON.stringify(geminiResponse("Hel"))}\r\n\r\n`,
      `data: ${JSON.stringify(geminiResponse("lo"))}\r\n\r\n`
    ])
  }
  if (r.url.includes(":generateContent")) return json(res, geminiResponse("Hello from Gemini"))
  res.writeHead(404).end()
}

/** Every provider to the fake upstream, on an ephemeral port. */
const gatewayOptions = (url: string) => ({
  port: 0,
  host: "127.0.0.1",
  upstreams: { anthropic: url, openai: url, gemini: url }
})

let upstream: FakeUpstream
let scope: Scope.CloseableScope
let gateway: string

beforeAll(async () => {
  upstream = await startUpstream(speak)
  scope = await Effect.runPromise(Scope.make())
  const context = await Effect.runPromise(
    Layer.buildWithScope(gatewayLayer(gatewayOptions(upstream.url)).pipe(Layer.provide(Inspector.layerNoop)), scope)
  )
  gateway = Context.get(context, GatewayServer).url
})
afterAll(async () => {
  await Effect.runPromise(Scope.close(scope, Exit.void))
  await upstream.close()
})

describe("official SDKs through the gateway", () => {
  it("Anthropic: messages.create and messages.stream", async () => {
    const client = new Anthropic({ baseURL: `${gateway}/anthropic`, apiKey: "sk-ant-test", maxRetries: 0 })
    const message = await client.messages.create({
      model: "claude-test",
      max_tokens: 10,
      messages: [{ role: "user", content: "hi" }]
    })
    expect(message.content).toEqual([{ type: "text", text: "Hello from Anthropic" }])
    // Its current SDK sends the key as a bearer token or x-api-key, depending on the version: either passes through.
    const headers = upstream.requests.at(-1)!.req.headers
    expect(headers["x-api-key"] ?? headers.authorization).toMatch(/sk-ant-test$/)

    const stream = client.messages.stream({
      model: "claude-test",
      max_tokens: 10,
      messages: [{ role: "user", content: "hi" }]
    })
    const texts: Array<string> = []
    stream.on("text", (t) => texts.push(t))
    const final = await stream.finalMessage()
    expect(texts).toEqual(["Hel", "lo"])
    expect(final.content).toMatchObject([{ type: "text", text: "Hello" }])
  })

  it("OpenAI: chat.completions.create and the stream helper", async () => {
    const client = new OpenAI({ baseURL: `${gateway}/openai/v1`, apiKey: "sk-test", maxRetries: 0 })
    const completion = await client.chat.completions.create({
      model: "gpt-test",
      messages: [{ role: "user", content: "hi" }]
    })
    expect(completion.choices[0]!.message.content).toBe("Hello from OpenAI")
    expect(upstream.requests.at(-1)!.req.headers.authorization).toBe("Bearer sk-test")

    const runner = client.chat.completions.stream({ model: "gpt-test", messages: [{ role: "user", content: "hi" }] })
    const final = await runner.finalChatCompletion()
    expect(final.choices[0]!.message.content).toBe("Hello")
  })

  it("Gemini: generateContent and generateContentStream", async () => {
    const ai = new GoogleGenAI({ apiKey: "AIza-test", httpOptions: { baseUrl: `${gateway}/gemini` } })
    const response = await ai.models.generateContent({ model: "gemini-test", contents: "hi" })
    expect(response.text).toBe("Hello from Gemini")
    expect(upstream.requests.at(-1)!.req.headers["x-goog-api-key"]).toBe("AIza-test")

    const texts: Array<string> = []
    for await (const chunk of await ai.models.generateContentStream({ model: "gemini-test", contents: "hi" })) {
      texts.push(chunk.text ?? "")
    }
    expect(texts.join("")).toBe("Hello")
  })

  it("answers /health/live on the gateway port", async () => {
    const res = await fetch(`${gateway}/health/live`)
    expect(await res.json()).toEqual({ status: "ok" })
  })
})

describe("official SDKs through the gateway with a tool policy (enforce)", () => {
  let policed: string
  let policeScope: Scope.CloseableScope
  const policy = Schema.decodeUnknownSync(Policy)({
    capability_mappings: { lookups: { tools: ["get_*"], card_actions: ["lookup"] } },
    forbidden: [{ pattern: "shell_*", reason: "no shell access" }],
    defaults: { enforcement_mode: "enforce", unmapped_tool_action: "allow" }
  })
  const weather = {
    name: "get_weather",
    description: "Weather by city",
    parameters: { type: "object", properties: { city: { type: "string" } } }
  }
  const shell = {
    name: "shell_exec",
    description: "Run a command",
    parameters: { type: "object", properties: { cmd: { type: "string" } } }
  }

  beforeAll(async () => {
    policeScope = await Effect.runPromise(Scope.make())
    const context = await Effect.runPromise(
      Layer.buildWithScope(
        gatewayLayer(gatewayOptions(upstream.url)).pipe(
          Layer.provideMerge(GatewayInspector.layer()),
          Layer.provideMerge(
            Layer.mergeAll(
              AgentState.layerMemory,
              Bus.layerMemory,
              Layer.succeed(ProviderAdapters, providerAdapters),
              Rules.layer()
            )
          )
        ),
        policeScope
      )
    )
    policed = Context.get(context, GatewayServer).url
    const state = Context.get(context, AgentState)
    for (const key of ["sk-ant-test", "sk-test", "AIza-test"]) {
      await Effect.runPromise(state.update(agentIdOf(sha256Hex(key), undefined), { policy }))
    }
  })
  afterAll(async () => {
    await Effect.runPromise(Scope.close(policeScope, Exit.void))
  })

  it("Anthropic: allowed tools pass with X-Policy-Verdict (create and stream); a forbidden one is PermissionDeniedError", async () => {
    const client = new Anthropic({ baseURL: `${policed}/anthropic`, apiKey: "sk-ant-test", maxRetries: 0 })
    const tools = [
      { name: weather.name, description: weather.description, input_schema: weather.parameters }
    ] as Array<Anthropic.Tool>
    const messages = [{ role: "user" as const, content: "weather in Paris?" }]
    const { data, response } = await client.messages
      .create({ model: "claude-test", max_tokens: 10, messages, tools })
      .withResponse()
    expect(data.content).toEqual([{ type: "text", text: "Hello from Anthropic" }])
    expect(response.headers.get("x-policy-verdict")).toBe("pass")
    const final = await client.messages.stream({ model: "claude-test", max_tokens: 10, messages, tools }).finalMessage()
    expect(final.content).toMatchObject([{ type: "text", text: "Hello" }])

    const before = upstream.requests.length
    const blocked = client.messages.create({
      model: "claude-test",
      max_tokens: 10,
      messages,
      tools: [
        ...tools,
        { name: shell.name, description: shell.description, input_schema: shell.parameters } as Anthropic.Tool
      ]
    })
    await expect(blocked).rejects.toBeInstanceOf(Anthropic.PermissionDeniedError)
    await expect(blocked).rejects.toMatchObject({ status: 403, error: { policy_verdict: { verdict: "fail" } } })
    expect(upstream.requests.length).toBe(before)
  })

  it("OpenAI: allowed tools pass with X-Policy-Verdict (create and stream); a forbidden one is PermissionDeniedError", async () => {
    const client = new OpenAI({ baseURL: `${policed}/openai/v1`, apiKey: "sk-test", maxRetries: 0 })
    const tools = [{ type: "function" as const, function: weather }]
    const messages = [{ role: "user" as const, content: "weather in Paris?" }]
    const { data, response } = await client.chat.completions
      .create({ model: "gpt-test", messages, tools })
      .withResponse()
    expect(data.choices[0]!.message.content).toBe("Hello from OpenAI")
    expect(response.headers.get("x-policy-verdict")).toBe("pass")
    const final = await client.chat.completions.stream({ model: "gpt-test", messages, tools }).finalChatCompletion()
    expect(final.choices[0]!.message.content).toBe("Hello")

    const blocked = client.chat.completions.create({
      model: "gpt-test",
      messages,
      tools: [...tools, { type: "function", function: shell }]
    })
    await expect(blocked).rejects.toBeInstanceOf(OpenAI.PermissionDeniedError)
    await expect(blocked).rejects.toMatchObject({ status: 403 })
  })

  it("Gemini: allowed function declarations pass with X-Policy-Verdict; a forbidden one is a 403 ApiError", async () => {
    const ai = new GoogleGenAI({ apiKey: "AIza-test", httpOptions: { baseUrl: `${policed}/gemini` } })
    const declaration = (tool: { name: string; description: string; parameters: object }) => ({
      name: tool.name,
      description: tool.description,
      parametersJsonSchema: tool.parameters
    })
    const config = { tools: [{ functionDeclarations: [declaration(weather)] }] }
    const response = await ai.models.generateContent({ model: "gemini-test", contents: "weather in Paris?", config })
    expect(response.text).toBe("Hello from Gemini")
    expect(response.sdkHttpResponse?.headers?.["x-policy-verdict"]).toBe("pass")
    const texts: Array<string> = []
    for await (const chunk of await ai.models.generateContentStream({ model: "gemini-test", contents: "hi", config })) {
      texts.push(chunk.text ?? "")
    }
    expect(texts.join("")).toBe("Hello")

    const blocked = ai.models.generateContent({
      model: "gemini-test",
      contents: "run ls",
      config: { tools: [{ functionDeclarations: [declaration(weather), declaration(shell)] }] }
    })
    await expect(blocked).rejects.toBeInstanceOf(ApiError)
    await expect(blocked).rejects.toMatchObject({ status: 403 })
  })
})
