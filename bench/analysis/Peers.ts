/**
 * The analysis bench's other machines, in a process of their own so that they never share an event
 * loop with the gateway: a fake LLM judge (Anthropic Messages API) answering a clear verdict after
 * the latency it is given, a fake provider answering every call at once with reasoning long enough
 * to be judged (above the 100-token evidence threshold), and the agents sending to the gateway.
 *
 * IPC: sends `{ judgeUrl, providerUrl }` once listening; on `{ gatewayUrl, agents, periodMs, durationMs }`
 * runs the agents (each one response per period, from a random phase) and answers `{ sent, judgeCalls }`.
 */
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { setTimeout as sleep } from "node:timers/promises"
import { Agent, request } from "undici"

const JUDGE_LATENCY_MS = Number(process.argv[2] ?? 800)

const THINKING = Array.from(
  { length: 12 },
  (_, i) =>
    `Step ${i + 1}: the user asked for a summary of the quarterly report, which is a bounded action under the card; ` +
    "I will read the sections in order and cite each one."
).join(" ")

const listen = (server: Server) =>
  new Promise<string>((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`))
  )

const reply = (body: string) => {
  const length = Buffer.byteLength(body)
  return (res: import("node:http").ServerResponse) => {
    res.writeHead(200, { "content-type": "application/json", "content-length": length })
    res.end(body)
  }
}

let judgeCalls = 0
const judgeAnswer = reply(
  JSON.stringify({
    id: "msg_judge",
    type: "message",
    content: [
      {
        type: "text",
        text: JSON.stringify({ verdict: "clear", concerns: [], reasoning_summary: "Bounded summarising." })
      }
    ]
  })
)
const judge = createServer((req, res) => {
  req.resume()
  req.on("end", () => {
    judgeCalls++
    setTimeout(() => judgeAnswer(res), JUDGE_LATENCY_MS)
  })
})

const providerAnswer = reply(
  JSON.stringify({
    id: "msg_bench",
    type: "message",
    role: "assistant",
    model: "claude-bench",
    content: [
      { type: "thinking", thinking: THINKING, signature: "c2ln" },
      { type: "text", text: "Here is the summary." }
    ],
    stop_reason: "end_turn"
  })
)
const provider = createServer((req, res) => {
  req.resume()
  req.on("end", () => providerAnswer(res))
})

interface Run {
  readonly gatewayUrl: string
  readonly agents: number
  readonly periodMs: number
  readonly durationMs: number
}

const run = async ({ agents, durationMs, gatewayUrl, periodMs }: Run) => {
  const client = new Agent({ connections: 64, keepAliveTimeout: 30_000 })
  const before = judgeCalls
  const started = performance.now()
  const stopAt = started + durationMs
  let sent = 0
  const body = JSON.stringify({
    model: "claude-bench",
    max_tokens: 64,
    messages: [{ role: "user", content: "Summarise the report." }]
  })
  const agent = async (i: number) => {
    let next = started + Math.random() * periodMs
    for (;;) {
      const wait = next - performance.now()
      if (wait > 0) await sleep(wait)
      if (performance.now() >= stopAt) return
      next += periodMs
      const res = await request(`${gatewayUrl}/anthropic/v1/messages`, {
        dispatcher: client,
        method: "POST",
        headers: {
          "content-type": "application/json",
          "x-api-key": "sk-ant-bench",
          "x-candor-agent": `bench-agent-${i}`
        },
        body
      })
      await res.body.text()
      if (res.statusCode !== 200) throw new Error(`gateway answered ${res.statusCode}`)
      sent++
    }
  }
  await Promise.all(Array.from({ length: agents }, (_, i) => agent(i)))
  await client.close()
  return { sent, judgeCalls: judgeCalls - before }
}

process.on("message", (message: Run) => {
  run(message).then(
    (result) => process.send!(result),
    (error) => {
      console.error(error)
      process.exit(1)
    }
  )
})
process.on("disconnect", () => process.exit(0))

Promise.all([listen(judge), listen(provider)]).then(([judgeUrl, providerUrl]) =>
  process.send!({ judgeUrl, providerUrl })
)
