/**
 * The realistic shape's other parties, in a process of their own so that their CPU is counted apart
 * from the deployment's and the load generator's: the organizations' webhook receivers (one HTTP
 * server on loopback, a path per organization, answering 200 to every POST once its body is read)
 * and one unfiltered live stream client (`GET /v1/stream` with the service-role key, Server-Sent
 * Events read as they come and counted).
 *
 * Protocol on stdin/stdout, one line each: it prints its port once listening; `stream <url> <key>`
 * opens the stream (answers `stream 200` once its first heartbeat came, or `stream <status>`);
 * `count` answers `{"webhooks": n, "stream": n, "streamOpen": bool}` (deliveries received, stream
 * events received, whether the stream is still open).
 */
import { createServer } from "node:http"
import { createInterface } from "node:readline"

let webhooks = 0
let streamEvents = 0
/** Whether the live stream is open: a stream that ends during a run is reported by `count`. */
let streamOpen = false

const server = createServer((req, res) => {
  req.on("data", () => {})
  req.on("end", () => {
    if (req.method === "POST") webhooks++
    res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}')
  })
})
server.keepAliveTimeout = 60_000

const say = (line: string) => process.stdout.write(`${line}\n`)

/** Reads the stream's SSE frames, counting their `event:` lines (heartbeats are comments). */
const openStream = async (url: string, key: string) => {
  const response = await fetch(url, { headers: { authorization: `Bearer ${key}`, accept: "text/event-stream" } })
  if (!response.ok || response.body === null) return say(`stream ${response.status}`)
  let ready = false
  let pending = ""
  const decoder = new TextDecoder()
  const reader = response.body.getReader()
  for (;;) {
    const { done, value } = await reader.read()
    if (done) {
      if (!ready) say("stream ended before its first heartbeat")
      streamOpen = false
      return
    }
    pending += decoder.decode(value, { stream: true })
    let end = pending.indexOf("\n")
    while (end >= 0) {
      const line = pending.slice(0, end)
      pending = pending.slice(end + 1)
      if (line.startsWith("event:")) streamEvents++
      // The first heartbeat (an SSE comment) says the stream's position is fixed.
      else if (!ready && line.startsWith(":")) {
        ready = true
        streamOpen = true
        say("stream 200")
      }
      end = pending.indexOf("\n")
    }
  }
}

server.listen(0, "127.0.0.1", () => {
  const address = server.address()
  say(String(typeof address === "object" && address !== null ? address.port : 0))
})

createInterface({ input: process.stdin }).on("line", (line) => {
  const [command, ...args] = line.trim().split(" ")
  if (command === "count") say(JSON.stringify({ webhooks, stream: streamEvents, streamOpen }))
  else if (command === "stream")
    openStream(args[0]!, args[1]!).catch((error: unknown) => {
      // Before the first heartbeat this answers the command; after it, `count` says the stream closed.
      if (streamOpen) streamOpen = false
      else say(`stream error ${String(error)}`)
    })
})
process.on("SIGTERM", () => process.exit(0))
