/**
 * Extraction confidence end to end, over real HTTP with the real provider adapters: native reasoning
 * keeps its own confidence, an answer without reasoning but with deliberation-like prose is judged
 * from that prose (the fallback, 0.3), and a plain answer (one "However, …" is not reasoning) still
 * gets a synthetic clear. The visible
 * text is only ever hashed: it never appears in the event.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import type { ServerResponse } from "node:http"
import { Bus, type Subscription } from "../../../adapters/bus/Bus.js"
import { Inspector } from "../../../adapters/gateway/Inspector.js"
import { inferThinking } from "../../../adapters/providers/Fallback.js"
import { sha256Hex } from "../../../adapters/providers/Identity.js"
import { inspectorWithFakes, judgeRequests } from "./Fakes.js"
import { call, type FakeUpstream, type Recorded, startGateway, startUpstream, type TestGateway } from "./Harness.js"
import * as Schema from "effect/Schema"
import { GatewayEvent } from "../../../core/schema/Event.js"

/** What the workers do with a published event. */
const decodeEvent = Schema.decodeUnknownSync(GatewayEvent)

const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(effect)

/** Deliberation in the visible answer, with a marker that must never leave the gateway. */
const DELIBERATE = "Let me check the file. I should read it before editing. The file holds VISIBLE-ANSWER-MARKER."
const PLAIN = "The file holds three lines."
/** A plain answer with one deliberation-like turn of phrase: still no reasoning (tracing only). */
const TURN_OF_PHRASE = "The file holds three lines. However, it is read-only."
const REASONING = "native reasoning NATIVE-MARKER"

interface Ask {
  readonly text: string
  readonly reasoning?: string
  readonly stream?: boolean
}

const sse = (res: ServerResponse, events: ReadonlyArray<unknown>) => {
  res.writeHead(200, { "content-type": "text/event-stream" })
  for (const event of events) res.write(`data: ${typeof event === "string" ? event : JSON.stringify(event)}\n\n`)
  res.end()
}

const json = (res: ServerResponse, body: unknown) => {
  const text = JSON.stringify(body)
  res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
  res.end(text)
}

/** Answers with the text (and reasoning) the request asks for, in the provider's format, JSON or SSE. */
const speak = (r: Recorded, res: ServerResponse) => {
  const { reasoning, stream, text } = JSON.parse(r.body.toString()) as Ask
  if (r.url.startsWith("/v1/messages")) {
    const blocks = [
      ...(reasoning === undefined ? [] : [{ type: "thinking", thinking: reasoning }]),
      { type: "text", text }
    ]
    if (stream !== true) return json(res, { model: "claude-test", content: blocks })
    return sse(res, [
      { type: "message_start", message: { model: "claude-test", content: [] } },
      ...blocks.flatMap((block, index) => [
        { type: "content_block_start", index, content_block: { type: block.type, [block.type]: "" } },
        {
          type: "content_block_delta",
          index,
          delta:
            block.type === "text"
              ? { type: "text_delta", text: block.text }
              : { type: "thinking_delta", thinking: block.thinking }
        },
        { type: "content_block_stop", index }
      ]),
      { type: "message_stop" }
    ])
  }
  const message = {
    role: "assistant",
    content: text,
    ...(reasoning === undefined ? {} : { reasoning_content: reasoning })
  }
  if (stream !== true) {
    return json(res, { model: "gpt-test", choices: [{ index: 0, message, finish_reason: "stop" }] })
  }
  return sse(res, [
    { model: "gpt-test", choices: [{ index: 0, delta: message, finish_reason: null }] },
    { model: "gpt-test", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] },
    "[DONE]"
  ])
}

let scope: Scope.CloseableScope
let upstream: FakeUpstream
let gateway: TestGateway
let events: Subscription

beforeAll(async () => {
  scope = await run(Scope.make())
  const context = await run(Layer.buildWithScope(inspectorWithFakes, scope))
  events = await run(Scope.extend(Context.get(context, Bus).subscribe("candor.events."), scope))
  upstream = await startUpstream(speak)
  gateway = await startGateway(upstream.url, Context.get(context, Inspector))
})
afterAll(async () => {
  await gateway.close()
  await upstream.close()
  await run(Scope.close(scope, Exit.void))
})

const formats = [
  { name: "Anthropic", path: "/anthropic/v1/messages", headers: { "x-api-key": "sk-ant-fallback" }, native: 1.0 },
  {
    name: "OpenAI",
    path: "/openai/v1/chat/completions",
    headers: { authorization: "Bearer sk-openai-fallback" },
    native: 0.9
  }
] as const

/** One exchange through the gateway and the event it published. */
const exchange = async (format: (typeof formats)[number], ask: Ask) => {
  const res = await call(`${gateway.url}${format.path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...format.headers },
    body: JSON.stringify({ model: "m", ...ask })
  })
  expect(res.status).toBe(200)
  return decodeEvent((await run(events.take)).payload)
}

describe("extraction confidence through the gateway", () => {
  for (const format of formats) {
    for (const stream of [false, true]) {
      it(`${format.name} ${stream ? "SSE" : "JSON"}: no reasoning but deliberating prose → judged from the prose at 0.3`, async () => {
        const judged = judgeRequests.length
        const event = await exchange(format, { text: DELIBERATE, stream })
        const inferred = inferThinking(DELIBERATE)!.text
        expect(inferred).toBe("Let me check the file.\nI should read it before editing.")
        expect(event.checkpoint.analysis_metadata.extraction_confidence).toBe(0.3)
        expect(event.checkpoint.thinking_block_hash).toBe(sha256Hex(inferred))
        expect(event.checkpoint.synthetic).toBeUndefined()
        expect(judgeRequests.slice(judged).map((r) => r.thinking)).toEqual([inferred])
        expect(JSON.stringify(event)).not.toContain("VISIBLE-ANSWER-MARKER")
        expect(JSON.stringify(event)).not.toContain("Let me check")
      })
    }

    it(`${format.name}: native reasoning keeps its confidence; a plain answer (one turn of phrase included) is a synthetic clear`, async () => {
      const native = await exchange(format, { text: DELIBERATE, reasoning: REASONING })
      expect(native.checkpoint.analysis_metadata.extraction_confidence).toBe(format.native)
      expect(native.checkpoint.thinking_block_hash).toBe(sha256Hex(REASONING))

      for (const text of [PLAIN, TURN_OF_PHRASE]) {
        const plain = await exchange(format, { text })
        expect(plain.checkpoint, text).toMatchObject({
          verdict: "clear",
          thinking_block_hash: "none",
          synthetic: true,
          synthetic_reason: "no_thinking_block"
        })
        expect(plain.checkpoint.analysis_metadata.extraction_confidence).toBeNull()
      }
    })
  }
})
