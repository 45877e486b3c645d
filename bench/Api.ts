/**
 * `npm run bench:api`: the checkpoints list of the management API at scale. One agent with
 * BENCH_CHECKPOINTS (default 1e6) stored checkpoints in a throwaway PostgreSQL database
 * (BENCH_DATABASE_URL / TEST_DATABASE_URL / postgres://postgres@127.0.0.1:5432/test), then
 * `candor serve --role api` on it, and GET /v1/agents/{id}/checkpoints called over keep-alive HTTP
 * with the service-role key (not rate limited) at concurrency 1 and 16.
 *
 * The rows are made by the database itself (generate_series, in chunks), with the table layout and
 * the per-verdict counters the commit path keeps, and bodies that decode as Integrity Checkpoints:
 * 80% clear, 10% review_needed, 10% boundary_violation; sessions of 100 checkpoints.
 *
 * Per scenario (no filter, deep offsets, verdict filter, session filter, the largest page) it
 * prints requests/s and p50/p99 latency; the target is p99 < 20 ms at limit 20. Each scenario runs
 * BENCH_C1 / BENCH_C16 requests or BENCH_SECONDS (15), whichever ends first: deep offsets cost time
 * in proportion to the offset (an index-only walk), so they get fewer requests. Everything listens on 127.0.0.1.
 */
import * as PgClient from "@effect/sql-pg/PgClient"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { type ChildProcess, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { availableParallelism, loadavg, tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { Pool } from "undici"
import * as StoreDatabase from "../adapters/store/StoreDatabase.js"
import { SERVE_NODE_FLAGS } from "../src/NodeFlags.js"

const root = resolve(fileURLToPath(new URL("..", import.meta.url)))
const CHECKPOINTS = Number(process.env.BENCH_CHECKPOINTS ?? 1_000_000)
const CHUNK = 100_000
const SESSION_SIZE = 100
const REQUESTS = { 1: Number(process.env.BENCH_C1 ?? 1000), 16: Number(process.env.BENCH_C16 ?? 4000) } as const
const WARMUP = 200
const AGENT = "bench-agent"
const SERVICE_ROLE_KEY = randomBytes(24).toString("hex")
const serverUrl =
  process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test"

const withDatabase = (url: string, database: string) => {
  const parsed = new URL(url)
  parsed.pathname = `/${database}`
  return parsed.toString()
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

/** One chunk of checkpoints, positions [from, to): every column and body member computed in SQL. */
const insertChunk = (sql: SqlClient.SqlClient, from: number, to: number) => sql`
  insert into checkpoints (checkpoint_id, agent_id, session_id, verdict, occurred_at, position, body)
  select id, ${AGENT}::text, session_id, verdict, ts, i,
    json_build_object(
      'checkpoint_id', id, 'agent_id', ${AGENT}::text, 'card_id', 'bench-card', 'session_id', session_id,
      'timestamp', to_char(ts at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
      'thinking_block_hash', md5(id) || md5(session_id || id),
      'provider', 'anthropic', 'model', 'claude-bench', 'verdict', verdict,
      'concerns', case verdict
        when 'clear' then '[]'::json
        when 'review_needed' then '[{"category":"undeclared_intent","severity":"medium","description":"d","evidence":"e"}]'::json
        else '[{"category":"prompt_injection","severity":"high","description":"d","evidence":"e"}]'::json end,
      'reasoning_summary', 'summary of checkpoint ' || i,
      'conscience_context', '{"values_checked":[],"conflicts":[],"supports":[],"considerations":[],"consultation_depth":"standard"}'::json,
      'window_position', json_build_object('index', i % 10, 'window_size', 10),
      'analysis_metadata', '{"analysis_model":"rules","analysis_duration_ms":1.5,"thinking_tokens_original":120,"thinking_tokens_analyzed":120,"truncated":false,"extraction_confidence":1}'::json,
      'linked_trace_id', null, 're_evaluated_at', null, 'original_verdict', null
    )
  from (
    select i, 'ic-' || gen_random_uuid()::text as id,
      'bench-session-' || (i / ${SESSION_SIZE}::bigint) as session_id,
      case when i % 10 < 8 then 'clear' when i % 10 = 8 then 'review_needed' else 'boundary_violation' end as verdict,
      timestamptz '2026-01-01T00:00:00Z' + i * interval '1 second' as ts
    from generate_series(${from}::bigint, ${to - 1}::bigint) as i
  ) s`

const seed = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`insert into agents (agent_id) values (${AGENT})`
  for (let from = 0; from < CHECKPOINTS; from += CHUNK) {
    yield* insertChunk(sql, from, Math.min(CHECKPOINTS, from + CHUNK))
    process.stdout.write(`\r  seeded ${Math.min(CHECKPOINTS, from + CHUNK).toLocaleString("en")} checkpoints`)
  }
  process.stdout.write("\n")
  yield* sql`
    insert into checkpoint_counts (agent_id, verdict, count)
    select agent_id, verdict, count(*) from checkpoints where agent_id = ${AGENT} group by agent_id, verdict`
  yield* sql.unsafe("vacuum analyze checkpoints").unprepared
})

const launchApi = (databaseUrl: string, port: number, dataDir: string): ChildProcess =>
  spawn(process.execPath, [...SERVE_NODE_FLAGS, join(root, "bin", "candor.js"), "serve", "--role", "api"], {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      PORT: String(port),
      HOST: "127.0.0.1",
      CANDOR_DATA_DIR: dataDir,
      SERVICE_ROLE_KEY,
      LOG_LEVEL: "warn"
    },
    stdio: ["ignore", "ignore", "inherit"]
  })

const waitReady = async (origin: string) => {
  const deadline = Date.now() + 60_000
  while (Date.now() < deadline) {
    const ok = await fetch(`${origin}/health/live`).then(
      (r) => r.ok,
      () => false
    )
    if (ok) return
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error("the API did not start within 60 s")
}

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!

/** User + system CPU time of a process so far, in ms (Linux /proc; ticks of 10 ms). */
const cpuMs = (pid: number): number => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
  return (Number(fields[11]) + Number(fields[12])) * 10
}

interface Result {
  readonly scenario: string
  readonly concurrency: number
  readonly requests: number
  readonly perSecond: number
  readonly p50: number
  readonly p99: number
  /** CPU time the API process spent per request: steadier than latency on a loaded machine. */
  readonly cpuPerRequest: number
}

/** Each scenario: at most REQUESTS[c] requests or SCENARIO_SECONDS, after a warm-up of WARMUP requests or 2 s. */
const SCENARIO_SECONDS = Number(process.env.BENCH_SECONDS ?? 15)

const run = async (
  pool: Pool,
  apiPid: number,
  scenario: string,
  path: string,
  concurrency: 1 | 16
): Promise<Result> => {
  const call = async () => {
    const started = performance.now()
    const response = await pool.request({
      method: "GET",
      path,
      headers: { authorization: `Bearer ${SERVICE_ROLE_KEY}` }
    })
    const body = await response.body.text()
    if (response.statusCode !== 200) throw new Error(`${path}: ${response.statusCode} ${body.slice(0, 200)}`)
    return performance.now() - started
  }
  const load = async (count: number, seconds: number, latencies: Array<number>) => {
    const deadline = performance.now() + seconds * 1000
    let next = 0
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next++ < count && performance.now() < deadline) latencies.push(await call())
      })
    )
  }
  await load(WARMUP, 2, [])
  const latencies: Array<number> = []
  const started = performance.now()
  const cpuBefore = cpuMs(apiPid)
  await load(REQUESTS[concurrency], SCENARIO_SECONDS, latencies)
  const cpu = cpuMs(apiPid) - cpuBefore
  const seconds = (performance.now() - started) / 1000
  latencies.sort((a, b) => a - b)
  return {
    scenario,
    concurrency,
    requests: latencies.length,
    perSecond: latencies.length / seconds,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    cpuPerRequest: cpu / latencies.length
  }
}

const main = async () => {
  const database = `candor_bench_${randomBytes(6).toString("hex")}`
  const admin = (effect: Effect.Effect<unknown, unknown, SqlClient.SqlClient>) =>
    Effect.runPromise(
      Effect.provide(effect, PgClient.layer({ url: Redacted.make(serverUrl) })) as Effect.Effect<unknown>
    )
  await admin(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`create database ${database}`)))
  const databaseUrl = withDatabase(serverUrl, database)
  const dataDir = mkdtempSync(join(tmpdir(), "candor-bench-api-"))
  let api: ChildProcess | undefined
  try {
    console.log(
      `database ${database}: migrating and seeding ${CHECKPOINTS.toLocaleString("en")} checkpoints of one agent`
    )
    const seedStarted = performance.now()
    await Effect.runPromise(
      Effect.provide(
        seed,
        StoreDatabase.layerSql({ databaseUrl: Option.some(Redacted.make(databaseUrl)), dataDir })
      ).pipe(Effect.scoped) as Effect.Effect<unknown>
    )
    console.log(`  seeded in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s`)

    const port = await freePort()
    api = launchApi(databaseUrl, port, dataDir)
    const origin = `http://127.0.0.1:${port}`
    await waitReady(origin)
    const pool = new Pool(origin, { connections: 16, pipelining: 1 })
    const list = `/v1/agents/${AGENT}/checkpoints`
    const scenarios: ReadonlyArray<readonly [string, string]> = [
      ["limit=20", `${list}?limit=20`],
      ["limit=20 offset=1000", `${list}?limit=20&offset=1000`],
      ["limit=20 offset=100000", `${list}?limit=20&offset=100000`],
      ["limit=20 offset=900000", `${list}?limit=20&offset=${Math.max(0, CHECKPOINTS - 100_000)}`],
      ["limit=20 verdict=boundary_violation", `${list}?limit=20&verdict=boundary_violation`],
      [
        "limit=20 session_id",
        `${list}?limit=20&session_id=bench-session-${Math.floor(CHECKPOINTS / SESSION_SIZE / 2)}`
      ],
      ["limit=1000", `${list}?limit=1000`]
    ]
    // JIT and connection pools warm before anything is recorded, so the first row is not skewed.
    await run(pool, api.pid!, "warm-up", `${list}?limit=20`, 16)
    const results: Array<Result> = []
    for (const concurrency of [1, 16] as const) {
      for (const [name, path] of scenarios) results.push(await run(pool, api.pid!, name, path, concurrency))
    }
    await pool.close()
    console.log(
      `\nGET /v1/agents/{id}/checkpoints, ${CHECKPOINTS.toLocaleString("en")} checkpoints stored (PostgreSQL)`
    )
    // Latencies on a shared machine mean little without the load they were measured under.
    console.log(
      `load average ${loadavg()
        .map((x) => x.toFixed(1))
        .join(" ")} on ${availableParallelism()} cores\n`
    )
    console.log("| scenario | concurrency | requests | req/s | p50 ms | p99 ms | API CPU ms/req |")
    console.log("|---|---|---|---|---|---|---|")
    for (const r of results) {
      console.log(
        `| ${r.scenario} | ${r.concurrency} | ${r.requests} | ${r.perSecond.toFixed(0)} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.cpuPerRequest.toFixed(2)} |`
      )
    }
    const [single, sixteen] = [1, 16].map((c) => results.find((r) => r.scenario === "limit=20" && r.concurrency === c)!)
    console.log(
      `\ntarget p99 < 20 ms at limit 20 (concurrency 1): ${single!.p99.toFixed(2)} ms, ${single!.p99 < 20 ? "met" : "MISSED"}`
    )
    // Little's law: 16 requests in flight at this throughput wait at least this long on average.
    console.log(
      `at concurrency 16 the mean latency is at least 16 / throughput = ${(16_000 / sixteen!.perSecond).toFixed(1)} ms by queueing alone`
    )
  } finally {
    api?.kill("SIGTERM")
    if (api !== undefined && api.exitCode === null) await new Promise((resolve) => api!.once("exit", resolve))
    await admin(
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`drop database if exists ${database} with (force)`))
    )
    rmSync(dataDir, { recursive: true, force: true })
  }
}

await main()
