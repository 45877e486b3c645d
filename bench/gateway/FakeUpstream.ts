/**
 * The bench's fake LLM provider, in its own process so that it never shares an event loop with the
 * gateways or the load generator. Anthropic `/v1/messages` and OpenAI `/v1/chat/completions`, JSON
 * and SSE (`"stream": true`), with reasoning in the answer so that the gateway's analysis runs.
 * Every answer carries `x-request-sha256`, the hash of the body it received, so the bench can check
 * that a gateway forwarded the request bytes unchanged. A request with `x-bench-answer: clear |
 * injection | review` gets the realistic shape's Anthropic JSON answer of that kind instead
 * (bench/pipeline/RealisticContent.ts: ~600 characters of thinking, a text block and a tool call).
 */
import { createHash } from "node:crypto"
import { createServer } from "node:http"
import { ANSWER_HEADER, ANSWER_KINDS, ANSWERS, type AnswerKind } from "../pipeline/RealisticContent.js"

const THINKING =
  "Let me check the request against the card. The user wants a summary of the report; summarising is a bounded action. I will summarise it and cite the sections."

const anthropicJson = JSON.stringify({
  id: "msg_bench",
  type: "message",
  role: "assistant",
  model: "claude-bench",
  content: [
    { type: "thinking", thinking: THINKING, signature: "c2lnbmF0dXJl" },
    { type: "text", text: "Here is the summary of the report." }
  ],
  stop_reason: "end_turn",
  usage: { input_tokens: 12, output_tokens: 40 }
})

const sse = (events: ReadonlyArray<readonly [string | undefined, unknown]>, eol = "\n"): Array<string> =>
  events.map(
    ([event, data]) =>
      `${event === undefined ? "" : `event: ${event}${eol}`}data: ${typeof data === "string" ? data : JSON.stringify(data)}${eol}${eol}`
  )

const anthropicSse = (eol: string) =>
  sse(
    [
      [
        "message_start",
        {
          type: "message_start",
          message: {
            id: "msg_bench",
            type: "message",
            role: "assistant",
            model: "claude-bench",
            content: [],
            usage: { input_tokens: 12, output_tokens: 1 }
          }
        }
      ],
      [
        "content_block_start",
        { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "" } }
      ],
      ...THINKING.split(". ").map(
        (part) =>
          [
            "content_block_delta",
            { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: `${part}. ` } }
          ] as const
      ),
      ["content_block_stop", { type: "content_block_stop", index: 0 }],
      ["content_block_start", { type: "content_block_start", index: 1, content_block: { type: "text", text: "" } }],
      [
        "content_block_delta",
        { type: "content_block_delta", index: 1, delta: { type: "text_delta", text: "Here is the summary." } }
      ],
      ["content_block_stop", { type: "content_block_stop", index: 1 }],
      ["message_delta", { type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 40 } }],
      ["message_stop", { type: "message_stop" }]
    ],
    eol
  )

const openaiJson = JSON.stringify({
  id: "chatcmpl-bench",
  object: "chat.completion",
  created: 1763700000,
  model: "gpt-bench",
  choices: [
    {
      index: 0,
      message: { role: "assistant", content: "Here is the summary of the report.", reasoning_content: THINKING },
      finish_reason: "stop"
    }
  ],
  usage: { prompt_tokens: 12, completion_tokens: 40, total_tokens: 52 }
})

const openaiSse = (eol: string) => {
  const chunk = (delta: unknown, finish: string | null = null) => ({
    id: "chatcmpl-bench",
    object: "chat.completion.chunk",
    created: 1763700000,
    model: "gpt-bench",
    choices: [{ index: 0, delta, finish_reason: finish }]
  })
  return sse(
    [
      [undefined, chunk({ role: "assistant", content: "" })],
      ...THINKING.split(". ").map((part) => [undefined, chunk({ reasoning_content: `${part}. ` })] as const),
      [undefined, chunk({ content: "Here is the summary." })],
      [undefined, chunk({}, "stop")],
      [undefined, "[DONE]"]
    ],
    eol
  )
}

const server = createServer((req, res) => {
  const parts: Array<Buffer> = []
  req.on("data", (part: Buffer) => parts.push(part))
  req.on("end", () => {
    const body = Buffer.concat(parts)
    const digest = createHash("sha256").update(body).digest("hex")
    let stream = false
    try {
      stream = (JSON.parse(body.toString("utf8")) as { stream?: boolean }).stream === true
    } catch {
      res.writeHead(400, { "content-type": "application/json" }).end('{"error":"bad json"}')
      return
    }
    const anthropic = req.url?.endsWith("/messages") === true
    const openai = req.url?.endsWith("/chat/completions") === true
    if (!anthropic && !openai) {
      res.writeHead(404, { "content-type": "application/json" }).end('{"error":"not found"}')
      return
    }
    const kind = req.headers[ANSWER_HEADER]
    if (!stream && anthropic && ANSWER_KINDS.includes(kind as AnswerKind)) {
      res
        .writeHead(200, { "content-type": "application/json", "x-request-sha256": digest })
        .end(ANSWERS[kind as AnswerKind])
      return
    }
    if (!stream) {
      res
        .writeHead(200, { "content-type": "application/json", "x-request-sha256": digest })
        .end(anthropic ? anthropicJson : openaiJson)
      return
    }
    // CRLF streams when asked: the peer holds those back until the end.
    const eol = req.headers["x-bench-eol"] === "crlf" ? "\r\n" : "\n"
    const events = anthropic ? anthropicSse(eol) : openaiSse(eol)
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", "x-request-sha256": digest })
    // One write per event, each flushed as its own chunk, as a provider streams them.
    let i = 0
    const next = () => {
      if (i === events.length) return void res.end()
      res.write(events[i++]!)
      setImmediate(next)
    }
    next()
  })
})
server.keepAliveTimeout = 60_000
server.listen(0, "127.0.0.1", () => {
  const address = server.address()
  process.stdout.write(`${typeof address === "object" && address !== null ? address.port : 0}\n`)
})
process.on("SIGTERM", () => server.close(() => process.exit(0)))
