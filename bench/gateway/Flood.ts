/**
 * The flooding tenant of bench/TenantFlood.ts, in its own process so that producing the flood costs
 * the load generator that times the victim nothing: `tsx bench/gateway/Flood.ts <gateway> <key>
 * <kind> <connections>`, `kind` `tools` (requests of 20,000 tools) or `caps` (512 new tools of 128
 * characters each time). It sends until SIGTERM, then prints one JSON line: the answers it got by
 * status and the latencies of the last 1,000.
 */
import { Pool } from "undici"

const [gateway, key, kind, connections] = process.argv.slice(2)
if (gateway === undefined || key === undefined || (kind !== "tools" && kind !== "caps")) {
  throw new Error("usage: Flood.ts <gateway> <key> tools|caps <connections>")
}

const TEN = "abcdefghij"
let seed = 42
const letter = () => TEN[((seed = (seed * 1103515245 + 12345) % 2147483648) >>> 16) % 10]!

const body = (tools: ReadonlyArray<string>) =>
  Buffer.from(
    JSON.stringify({
      model: "claude-bench",
      max_tokens: 256,
      messages: [{ role: "user", content: "Summarise the report." }],
      tools: tools.map((name) => ({ name, description: "a tool", input_schema: { type: "object", properties: {} } }))
    })
  )

const TOOLS = body(Array.from({ length: 20_000 }, (_, i) => `tool_${i}`))
/** Half the names end in "z", where the attacker's globs are anchored. */
const atCaps = () =>
  body(Array.from({ length: 512 }, (_, i) => Array.from({ length: 127 }, letter).join("") + (i % 2 === 0 ? "z" : "y")))

const pool = new Pool(gateway, { connections: Number(connections ?? 1), pipelining: 1 })
const statuses: Record<string, number> = {}
const latencies: Array<number> = []
let running = true

const loop = async () => {
  while (running) {
    const start = performance.now()
    try {
      const response = await pool.request({
        method: "POST",
        path: "/anthropic/v1/messages",
        headers: { "content-type": "application/json", "x-api-key": key, "anthropic-version": "2023-06-01" },
        body: kind === "tools" ? TOOLS : atCaps()
      })
      await response.body.arrayBuffer()
      statuses[response.statusCode] = (statuses[response.statusCode] ?? 0) + 1
    } catch {
      statuses["error"] = (statuses["error"] ?? 0) + 1
    }
    latencies.push(performance.now() - start)
    if (latencies.length > 1000) latencies.shift()
  }
}

const loops = Array.from({ length: Number(connections ?? 1) }, loop)
process.stdout.write("ready\n")
process.on("SIGTERM", () => {
  running = false
  void Promise.all(loops).then(() => {
    process.stdout.write(`${JSON.stringify({ statuses, latencies })}\n`)
    process.exit(0)
  })
})
