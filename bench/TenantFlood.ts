/**
 * `npm run bench:flood`: one tenant flooding the gateway beside another (issue 24: a policy of 5,000
 * globs and requests of 20,000 tools took another agent's p50 from 6.5 ms to 20 s).
 *
 * Processes: the fake provider (bench/gateway/FakeUpstream.ts), Candor as `npm start` runs it
 * (`candor serve`, every role, embedded database and bus, the `rules` judge: bench/gateway/
 * Embedded.ts) with a service-role key to set policies, and this load generator.
 *
 * - The victim: its own key, a usual policy (`enforce`, a dozen rules), Anthropic JSON requests
 *   offering 5 tools, one at a time.
 * - The attacker: its own key, the largest policy the API accepts (POLICY_MAX_RULES: 1,000 distinct
 *   globs like `*a?b*c*z`, which no trie can index, `warn`), and two floods at once: 4 connections
 *   sending requests of 20,000 tools (refused 413 by the caps) and 8 sending requests at the caps
 *   (512 tools of 128 characters, new names every time, so nothing is remembered: each one costs the
 *   gateway tens of milliseconds of evaluation, done in slices).
 *
 * It measures the victim alone, then beside both floods, then (the control) beside the same floods
 * sent to a sink that reads and refuses them (bench/gateway/Sink.ts): on a shared 2-core machine,
 * producing and moving the floods' bytes slows everything, and the control says how much of the
 * victim's loss is that rather than the gateway. It prints p50/p99 of each phase, the ratio, the
 * issue's bar (p50 beside the floods ≤ 3 × alone + 25 ms), what the floods got, and Candor's CPU (all
 * threads, /proc) per phase. BENCH_VICTIM_REQUESTS sets the victim's requests per phase (default
 * 300); BENCH_FLOODS=tools or caps runs one flood only.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { readFileSync } from "node:fs"
import { createServer } from "node:net"
import { resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { Pool } from "undici"
import { agentIdOf } from "../adapters/gateway/AgentIdentity.js"
import { sha256Hex } from "../adapters/providers/Identity.js"
import type { PolicyEncoded } from "../core/schema/Policy.js"
import { embeddedCommand } from "./gateway/Embedded.js"

const root = resolve(fileURLToPath(new URL("..", import.meta.url)))
const VICTIM_REQUESTS = Number(process.env.BENCH_VICTIM_REQUESTS ?? 300)
const FLOOD_CONNECTIONS = 4
const AT_CAPS_CONNECTIONS = 8

const children: Array<ChildProcess> = []
process.on("exit", () => children.forEach((child) => child.kill("SIGTERM")))

const launch = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv = {}): ChildProcess => {
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  children.push(child)
  // Drained, or a process that logs blocks once the pipe is full.
  child.stderr?.on("data", (data: Buffer) => {
    if (process.env.BENCH_DEBUG !== undefined) process.stderr.write(data)
  })
  return child
}

const freePort = (): Promise<number> =>
  new Promise((ok, fail) => {
    const server = createServer()
    server.once("error", fail)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => ok(typeof address === "object" && address !== null ? address.port : 0))
    })
  })

const firstLine = (child: ChildProcess): Promise<string> =>
  new Promise((ok, fail) => {
    let text = ""
    child.stdout?.on("data", (data: Buffer) => {
      text += data.toString("utf8")
      const end = text.indexOf("\n")
      if (end >= 0) ok(text.slice(0, end).trim())
    })
    child.once("exit", (code) => fail(new Error(`process exited with ${code} before it was ready`)))
  })

const waitFor = async (url: string): Promise<void> => {
  const deadline = Date.now() + 300_000
  for (;;) {
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(5_000) })
      if (res.status === 200) return
      if (process.env.BENCH_DEBUG !== undefined) console.error(`${url}: ${res.status} ${await res.text()}`)
    } catch (error) {
      // not listening yet
      if (process.env.BENCH_DEBUG !== undefined) console.error(`${url}: ${String(error)}`)
    }
    if (Date.now() > deadline) throw new Error(`${url} did not come up`)
    await new Promise((ok) => setTimeout(ok, 1000))
  }
}

const cpuTicks = (pid: number | undefined): number => {
  if (pid === undefined) return 0
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
  return Number(fields[11]) + Number(fields[12])
}

const percentile = (values: ReadonlyArray<number>, p: number): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN
}

const TEN = "abcdefghij"

/** `tools`, `caps` or both (the default): which floods run beside the victim. */
const FLOODS = (process.env.BENCH_FLOODS ?? "tools,caps").split(",")

/** The largest policy the API accepts, as costly as globs get: 1,000 distinct unanchored globs. */
const ATTACKER_POLICY: PolicyEncoded = {
  forbidden: Array.from({ length: 1000 }, (_, i) => ({
    pattern: `*${TEN[i % 10]}?${TEN[Math.floor(i / 10) % 10]}*${TEN[Math.floor(i / 100) % 10]}*z`,
    reason: `rule ${i}`
  })),
  defaults: { enforcement_mode: "warn", unmapped_tool_action: "allow" }
}

const VICTIM_POLICY: PolicyEncoded = {
  capability_mappings: {
    files: { tools: ["mcp__fs__read*", "mcp__fs__list*"], card_actions: ["read"] },
    search: { tools: ["web_search", "mcp__search__*"], card_actions: ["web_fetch"] }
  },
  forbidden: [
    { pattern: "shell_*", reason: "no shells" },
    { pattern: "*_delete*", reason: "no deletes" }
  ],
  escalation_triggers: [{ condition: "tool_matches('payments_*')", action: "escalate", reason: "money" }],
  defaults: { enforcement_mode: "enforce", unmapped_tool_action: "allow" }
}

const anthropicBody = (tools: ReadonlyArray<string>) =>
  JSON.stringify({
    model: "claude-bench",
    max_tokens: 256,
    messages: [{ role: "user", content: "Summarise the report." }],
    tools: tools.map((name) => ({ name, description: "a tool", input_schema: { type: "object", properties: {} } }))
  })

const VICTIM_BODY = anthropicBody([
  "mcp__fs__read_file",
  "mcp__fs__list_dir",
  "web_search",
  "mcp__search__query",
  "notes_add"
])

const post = async (pool: Pool, key: string, body: string) => {
  const start = performance.now()
  const response = await pool.request({
    method: "POST",
    path: "/anthropic/v1/messages",
    headers: { "content-type": "application/json", "x-api-key": key, "anthropic-version": "2023-06-01" },
    body
  })
  await response.body.arrayBuffer()
  return { status: response.statusCode, ms: performance.now() - start }
}

const debug = (stage: string) => {
  if (process.env.BENCH_DEBUG !== undefined) console.error(`${new Date().toISOString()} ${stage}`)
}

const victimPhase = async (pool: Pool, key: string) => {
  const latencies: Array<number> = []
  for (let i = 0; i < VICTIM_REQUESTS; i++) {
    const { ms, status } = await post(pool, key, VICTIM_BODY)
    if (status !== 200) throw new Error(`the victim got ${status}`)
    latencies.push(ms)
  }
  return latencies
}

const main = async () => {
  const upstream = launch(["--import", "tsx", "bench/gateway/FakeUpstream.ts"])
  const upstreamOrigin = `http://127.0.0.1:${Number(await firstLine(upstream))}`
  const [apiPort, gatewayPort] = [await freePort(), await freePort()]
  const serviceRoleKey = `srk-bench-${randomBytes(16).toString("hex")}`
  const { args, env } = embeddedCommand({ apiPort, gatewayPort, upstreamOrigin })
  const candor = launch(args, { ...env, SERVICE_ROLE_KEY: serviceRoleKey })
  candor.stdout?.on("data", () => {})
  const exited = new Promise<never>((_, fail) =>
    candor.once("exit", (code) =>
      fail(new Error(`candor serve exited with ${code} (a port taken? BENCH_DEBUG=1 shows its log)`))
    )
  )
  exited.catch(() => {})
  const api = `http://127.0.0.1:${apiPort}`
  debug("waiting for Candor")
  await Promise.race([waitFor(`${api}/health/ready`), exited])
  debug("Candor ready: setting policies")
  const gateway = `http://127.0.0.1:${gatewayPort}`

  const victimKey = "sk-ant-bench-victim"
  const attackerKey = "sk-ant-bench-attacker"
  for (const [key, policy] of [
    [victimKey, VICTIM_POLICY],
    [attackerKey, ATTACKER_POLICY]
  ] as const) {
    const agentId = agentIdOf(sha256Hex(key), undefined)
    const res = await fetch(`${api}/v1/agents/${agentId}/policy`, {
      method: "PUT",
      headers: { authorization: `Bearer ${serviceRoleKey}`, "content-type": "application/json" },
      body: JSON.stringify(policy)
    })
    if (res.status !== 200) throw new Error(`PUT policy answered ${res.status}: ${await res.text()}`)
  }

  const victim = new Pool(gateway, { connections: 1, pipelining: 1 })
  // Warm: the connection, JIT, the victim's policy compiled.
  for (let i = 0; i < 20; i++) await post(victim, victimKey, VICTIM_BODY)

  debug("the victim alone")
  const ticks = cpuTicks(candor.pid)
  const started = performance.now()
  const alone = await victimPhase(victim, victimKey)
  const aloneCpu = { ticks: cpuTicks(candor.pid) - ticks, ms: performance.now() - started }

  /** The victim's phase beside both floods sent to `target`, each flood in a process of its own. */
  const besideFloods = async (target: string) => {
    const floods = [
      ["tools", FLOOD_CONNECTIONS, "20,000 tools"],
      ["caps", AT_CAPS_CONNECTIONS, "512 tools of 128, new names"]
    ]
      .filter(([kind]) => FLOODS.includes(kind as string))
      .map(([kind, connections, label]) => {
        const child = launch([
          "--import",
          "tsx",
          "bench/gateway/Flood.ts",
          target,
          attackerKey,
          String(kind),
          String(connections)
        ])
        return { child, label: `${label} (${connections} at once)`, ready: firstLine(child) }
      })
    await Promise.all(floods.map((flood) => flood.ready))
    const ticks = cpuTicks(candor.pid)
    const started = performance.now()
    const latencies = await victimPhase(victim, victimKey)
    const cpu = { ticks: cpuTicks(candor.pid) - ticks, ms: performance.now() - started }
    const reports = await Promise.all(
      floods.map(async (flood) => {
        const line = new Promise<string>((ok) => {
          let text = ""
          flood.child.stdout?.on("data", (data: Buffer) => {
            text += data.toString("utf8")
            if (text.endsWith("\n")) ok(text.trim().split("\n").at(-1)!)
          })
        })
        flood.child.kill("SIGTERM")
        const report = JSON.parse(await line) as { statuses: Record<string, number>; latencies: Array<number> }
        return { label: flood.label, ...report }
      })
    )
    return { latencies, cpu, reports }
  }
  debug("the victim beside the floods sent to Candor")
  const { latencies: beside, cpu: besideCpu, reports } = await besideFloods(gateway)
  debug("the victim beside the same floods sent to a sink")
  const sink = launch(["--import", "tsx", "bench/gateway/Sink.ts"])
  const control = await besideFloods(`http://127.0.0.1:${Number(await firstLine(sink))}`)

  const p50 = { alone: percentile(alone, 50), beside: percentile(beside, 50) }
  const bar = 3 * p50.alone + 25
  const fmt = (n: number) => n.toFixed(2)
  const cores = (cpu: { ticks: number; ms: number }) => ((cpu.ticks * 10) / cpu.ms).toFixed(2)
  console.log(`Node ${process.version}, ${VICTIM_REQUESTS} victim requests per phase, ${new Date().toISOString()}`)
  console.log("")
  console.log("| victim | p50 ms | p99 ms | Candor CPU (cores busy) |")
  console.log("|---|---:|---:|---:|")
  console.log(`| alone | ${fmt(p50.alone)} | ${fmt(percentile(alone, 99))} | ${cores(aloneCpu)} |`)
  console.log(`| beside the floods | ${fmt(p50.beside)} | ${fmt(percentile(beside, 99))} | ${cores(besideCpu)} |`)
  console.log(
    `| beside the same floods sent to a sink (control: this machine's contention alone) | ${fmt(percentile(control.latencies, 50))} | ${fmt(percentile(control.latencies, 99))} | ${cores(control.cpu)} |`
  )
  console.log("")
  console.log(
    `p50 ratio ${(p50.beside / p50.alone).toFixed(2)}; bar: p50 ≤ 3 × ${fmt(p50.alone)} + 25 = ${fmt(bar)} ms: ${p50.beside <= bar ? "met" : "NOT MET"}`
  )
  console.log("")
  console.log("| the attacker's flood, during the victim's phase | answers | latency p50 / p99 ms |")
  console.log("|---|---|---:|")
  for (const report of reports) {
    const answers = Object.entries(report.statuses)
      .map(([status, count]) => `${count} × ${status}`)
      .join(", ")
    console.log(
      `| ${report.label} | ${answers} | ${fmt(percentile(report.latencies, 50))} / ${fmt(percentile(report.latencies, 99))} |`
    )
  }
  await victim.close()
  process.exit(0)
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
