/**
 * Malformed upstream answers through the whole gateway (real HTTP, the real provider adapters): the
 * client gets exactly the upstream's bytes, nothing crashes, and one event is still published per
 * response: unanalysed (`unparseable_body`, the failure policy's verdict) when a model's answer
 * could not be read, a synthetic clear `no_thinking_block` for a provider's error page, the
 * reasoning that could be read otherwise, `partial` when a stream was cut short.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import type { ServerResponse } from "node:http"
import { Bus, type Subscription } from "../../../adapters/bus/Bus.js"
import { AgentState } from "../../../adapters/bus/AgentState.js"
import { agentIdOf } from "../../../adapters/gateway/AgentIdentity.js"
import { Inspector } from "../../../adapters/gateway/Inspector.js"
import { sha256Hex } from "../../../adapters/providers/Identity.js"
import { GatewayEvent } from "../../../core/schema/Event.js"
import {
  call,
  keyHeader,
  type FakeUpstream,
  startGateway,
  startUpstream,
  type TestGateway,
  nextResponsePayload
} from "./Harness.js"
import { inspectorWithFakes } from "./Fakes.js"

const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(effect)

let scope: Scope.CloseableScope
let upstream: FakeUpstream
let gateway: TestGateway
let state: AgentState["Type"]
let events: Subscription

beforeAll(async () => {
  scope = await run(Scope.make())
  const context = await run(Layer.buildWithScope(inspectorWithFakes, scope))
  state = Context.get(context, AgentState)
  events = await run(Scope.extend(Context.get(context, Bus).subscribe("candor.events."), scope))
  upstream = await startUpstream()
  gateway = await startGateway(upstream.url, Context.get(context, Inspector))
})
afterAll(async () => {
  await gateway.close()
  await upstream.close()
  await run(Scope.close(scope, Exit.void))
})

let keyCounter = 0
const newAgent = () => {
  const key = `sk-malformed-${++keyCounter}`
  return { key, agentId: agentIdOf(sha256Hex(key), undefined) }
}

const eventOf = async (agentId: string): Promise<GatewayEvent> => {
  for (;;) {
    const event = Schema.decodeUnknownSync(GatewayEvent)(await nextResponsePayload(events.take))
    if (event.agent_id === agentId) return event
  }
}

/** The upstream answers with exactly these bytes, written in the given pieces. */
const answerWith = (status: number, headers: Record<string, string>, pieces: ReadonlyArray<Buffer>) => {
  upstream.handle = (_r, res: ServerResponse) => {
    res.writeHead(status, headers)
    for (const piece of pieces.slice(0, -1)) res.write(piece)
    res.end(pieces.at(-1))
  }
}

const jsonHeaders = (body: Buffer) => ({
  "content-type": "application/json",
  "content-length": String(body.byteLength)
})
const SSE = { "content-type": "text/event-stream" }

const exchange = async (path: string, key: string, body: string) => {
  const headers = { "content-type": "application/json", ...keyHeader(path, key) }
  return call(`${gateway.url}${path}`, { method: "POST", headers, body })
}

describe("malformed upstream answers", () => {
  it("a truncated JSON body reaches the client unchanged; the event is unanalysed (unparseable_body), the failure policy's clear", async () => {
    const agent = newAgent()
    const body = Buffer.from('{"model":"claude-test","content":[{"type":"thinking","thinking":"half a thou')
    answerWith(200, jsonHeaders(body), [body])
    const res = await exchange("/anthropic/v1/messages", agent.key, '{"model":"claude-test","messages":[]}')
    expect(res.status).toBe(200)
    expect(res.body.equals(body)).toBe(true)
    const event = await eventOf(agent.agentId)
    expect(event.outcome).toMatchObject({ kind: "complete", status: 200, bytes: body.byteLength })
    expect(event.checkpoint).toMatchObject({
      verdict: "clear",
      thinking_block_hash: "none",
      synthetic: true,
      synthetic_reason: "unanalysed",
      analysis_metadata: { unanalysed_reason: "unparseable_body", analysis_model: "none" },
      model: "unknown"
    })
  })

  it("the same in enforce mode, where the response is held: fail_open passes it, fail_closed blocks it (403)", async () => {
    const body = Buffer.from('{"model":"claude-test","content":[{"type":"thinking","thinking":"EXFILTRATE')
    answerWith(200, jsonHeaders(body), [body])
    const open = newAgent()
    await run(state.update(open.agentId, { mode: "enforce" }))
    const passed = await exchange("/anthropic/v1/messages", open.key, '{"model":"claude-test","messages":[]}')
    expect(passed.status).toBe(200) // nothing could be read, and the agent fails open
    expect(passed.body.equals(body)).toBe(true)
    expect((await eventOf(open.agentId)).checkpoint).toMatchObject({
      verdict: "clear",
      synthetic_reason: "unanalysed",
      analysis_metadata: { unanalysed_reason: "unparseable_body" }
    })
    const closed = newAgent()
    await run(state.update(closed.agentId, { mode: "enforce", failurePolicy: "fail_closed" }))
    const blocked = await exchange("/anthropic/v1/messages", closed.key, '{"model":"claude-test","messages":[]}')
    expect(blocked.status).toBe(403)
    const checkpoint = (await eventOf(closed.agentId)).checkpoint
    expect(JSON.parse(blocked.body.toString())).toEqual({
      error: "blocked by Candor: boundary violation",
      checkpoint_id: checkpoint.checkpoint_id
    })
    expect(checkpoint).toMatchObject({
      verdict: "boundary_violation",
      synthetic_reason: "unanalysed",
      analysis_metadata: { unanalysed_reason: "unparseable_body" },
      concerns: [
        {
          category: "reasoning_corruption",
          severity: "critical",
          description: "not analysed (unparseable_body): the agent's failure policy is fail_closed"
        }
      ]
    })
  })

  it("a non-JSON body labelled application/json passes with its status; the event says no_thinking_block", async () => {
    const agent = newAgent()
    const body = Buffer.from("<html><body><h1>502 Bad Gateway</h1></body></html>\n")
    answerWith(502, jsonHeaders(body), [body])
    const res = await exchange("/openai/v1/chat/completions", agent.key, '{"model":"gpt-test","messages":[]}')
    expect(res.status).toBe(502)
    expect(res.headers["content-type"]).toBe("application/json")
    expect(res.body.equals(body)).toBe(true)
    const event = await eventOf(agent.agentId)
    expect(event.outcome).toMatchObject({ kind: "complete", status: 502 })
    expect(event.checkpoint).toMatchObject({ verdict: "clear", synthetic_reason: "no_thinking_block" })
  })

  it("SSE with garbage lines, comments and an unparseable event: bytes unchanged, the readable reasoning judged, the clear unanalysed", async () => {
    const agent = newAgent()
    const stream = Buffer.from(
      "garbage line without a colon\n" +
        ": a comment\n\n" +
        'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}\n\n' +
        "data: {not json at all\n\n" +
        'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"plan A"}}\n\n' +
        "random: field\nid\n\n" +
        'event: message_stop\ndata: {"type":"message_stop"}\n\n'
    )
    answerWith(200, SSE, [stream.subarray(0, 40), stream.subarray(40, 200), stream.subarray(200)])
    const res = await exchange("/anthropic/v1/messages", agent.key, '{"stream":true}')
    expect(res.status).toBe(200)
    expect(res.body.equals(stream)).toBe(true)
    const event = await eventOf(agent.agentId)
    expect(event.outcome.kind).toBe("complete")
    expect(event.checkpoint.thinking_block_hash).toBe(sha256Hex("plan A"))
    // The judge cleared what it read, but an event in the middle went unread: never a silent clear.
    expect(event.checkpoint).toMatchObject({
      verdict: "clear",
      synthetic_reason: "unanalysed",
      analysis_metadata: { unanalysed_reason: "unparseable_body" }
    })
    expect(event.checkpoint.analysis_metadata).not.toHaveProperty("partial")
  })

  it("an SSE stream cut off inside its last event is recorded as partial, with what was read", async () => {
    const agent = newAgent()
    const stream = Buffer.from(
      'event: message_start\ndata: {"type":"message_start","message":{"model":"claude-test"}}\n\n' +
        'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}\n\n' +
        'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"half a thought"}}\n\n' +
        'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":" and mo'
    )
    answerWith(200, SSE, [stream])
    const res = await exchange("/anthropic/v1/messages", agent.key, '{"stream":true}')
    expect(res.body.equals(stream)).toBe(true)
    const event = await eventOf(agent.agentId)
    expect(event.outcome).toMatchObject({ kind: "partial", status: 200, bytes: stream.byteLength })
    expect(event.checkpoint.thinking_block_hash).toBe(sha256Hex("half a thought"))
    expect(event.checkpoint.model).toBe("claude-test")
    expect(event.checkpoint.analysis_metadata).toMatchObject({ partial: true })
    expect(() => Schema.decodeUnknownSync(GatewayEvent)(event)).not.toThrow() // the actors accept it
  })

  it("invalid UTF-8 in an SSE stream passes byte for byte and still yields an event", async () => {
    const agent = newAgent()
    const chunk = (json: string) => Buffer.from(`data: ${json}\n\n`)
    const stream = Buffer.concat([
      Buffer.from(
        'data: {"object":"chat.completion.chunk","model":"gpt-test","choices":[{"index":0,"delta":{"reasoning_content":"weigh '
      ),
      Buffer.from([0xff, 0xfe, 0xc3]), // not UTF-8 at all, then a cut-off two-byte sequence
      Buffer.from(' options"}}]}\n\n'),
      Buffer.from([0x80, 0x81, 0x0a, 0x0a]), // a "line" of continuation bytes only
      chunk(
        '{"object":"chat.completion.chunk","model":"gpt-test","choices":[{"index":0,"delta":{"content":"done"},"finish_reason":"stop"}]}'
      ),
      Buffer.from("data: [DONE]\n\n")
    ])
    // Split inside the invalid bytes too.
    const cut = stream.indexOf(0xfe)
    answerWith(200, SSE, [stream.subarray(0, cut), stream.subarray(cut)])
    const res = await exchange("/openai/v1/chat/completions", agent.key, '{"stream":true}')
    expect(res.status).toBe(200)
    expect(res.body.equals(stream)).toBe(true)
    const event = await eventOf(agent.agentId)
    expect(event.outcome.kind).toBe("complete")
    // Decoded as the WHATWG decoder does: each invalid sequence becomes U+FFFD.
    expect(event.checkpoint.thinking_block_hash).toBe(sha256Hex("weigh \uFFFD\uFFFD\uFFFD options"))
    expect(event.checkpoint.verdict).toBe("clear")
  })

  it("a Gemini JSON-array stream cut off mid-array is partial; its client still gets every byte", async () => {
    const agent = newAgent()
    const part = (text: string, thought: boolean) =>
      JSON.stringify({
        candidates: [{ content: { parts: [{ text, thought }] }, index: 0 }],
        modelVersion: "gemini-test"
      })
    const stream = Buffer.from(`[${part("think first", true)},\r\n${part("answ", false).slice(0, 30)}`)
    answerWith(200, { "content-type": "application/json" }, [stream]) // no length: a stream
    const res = await exchange("/gemini/v1beta/models/gemini-test:streamGenerateContent", agent.key, '{"contents":[]}')
    expect(res.body.equals(stream)).toBe(true)
    const event = await eventOf(agent.agentId)
    expect(event.outcome.kind).toBe("partial")
    expect(event.checkpoint.thinking_block_hash).toBe(sha256Hex("think first"))
  })
})
