/**
 * `npm run bench:reputation`: the reputation recomputation and read path on PostgreSQL (a throwaway
 * database on TEST_DATABASE_URL), the tables seeded with SQL `generate_series`, not through the
 * gateway (the figures are the recomputation's, not the pipeline's).
 *
 * (a) recomputing many agents' scores from their stored tallies (a sweep of agents whose logs did not
 *     move: score, history, webhooks), and from a cold tally of a few hundred checkpoints each;
 * (b) one agent of a million checkpoints: its cold recomputation, an incremental one after 100 more,
 *     and `GET /v1/reputation/{id}` over HTTP (p50/p99).
 *
 * Env: BENCH_TALLY_AGENTS (10000), BENCH_COLD_AGENTS (500), BENCH_COLD_CHECKPOINTS (300),
 * BENCH_BIG_CHECKPOINTS (1000000), BENCH_READS (2000), BENCH_CONCURRENCY (4).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as ReputationRepo from "../adapters/store/ReputationRepo.js"
import { recomputeReputation } from "../services/ReputationRecompute.js"
import { ApiHarness, layer as harness } from "../test/api/Support.js"

const tallyAgents = Number(process.env.BENCH_TALLY_AGENTS ?? 10_000)
const coldAgents = Number(process.env.BENCH_COLD_AGENTS ?? 500)
const coldCheckpoints = Number(process.env.BENCH_COLD_CHECKPOINTS ?? 300)
const bigCheckpoints = Number(process.env.BENCH_BIG_CHECKPOINTS ?? 1_000_000)
const reads = Number(process.env.BENCH_READS ?? 2_000)
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 4)

const BIG = "bench-big"

const timeMs = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const start = performance.now()
    const result = yield* effect
    return [performance.now() - start, result] as const
  })

const percentile = (sorted: ReadonlyArray<number>, p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!

const fmtMs = (ms: number): string => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(2)} ms`)

const table = (title: string, header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>) =>
  [
    `\n${title}\n`,
    `| ${header.join(" | ")} |`,
    `|${header.map(() => "---").join("|")}|`,
    ...rows.map((row) => `| ${row.join(" | ")} |`)
  ].join("\n")

/**
 * Checkpoint rows `from` … `to − 1` of an agent as the commit stores them, for what the tally reads:
 * sessions of 50, one violation in 20, one not analysed in 10, times every 20 s back from now.
 */
const seedCheckpoints = (sql: SqlClient.SqlClient, agentIds: string, from: number, to: number, span: number) =>
  sql.unsafe(`
    insert into checkpoints (checkpoint_id, agent_id, session_id, verdict, occurred_at, position, body)
    select 'ic-' || a.agent_id || '-' || g, a.agent_id, a.agent_id || '-s' || (g / 50),
      case when g % 20 = 19 then 'boundary_violation' when g % 7 = 3 then 'review_needed' else 'clear' end,
      now() - (${span} - g) * interval '20 seconds', g,
      json_build_object('analysis_metadata',
        json_build_object('analysis_model', case when g % 10 = 9 then 'none' else 'rules' end))
    from (${agentIds}) a(agent_id), generate_series(${from}, ${to - 1}) g;
    insert into agents (agent_id) select agent_id from (${agentIds}) a(agent_id) on conflict do nothing;
    insert into chain_heads (agent_id, position, hash, frontier)
    select agent_id, ${to}, decode(repeat('00', 32), 'hex'), '[]'::jsonb from (${agentIds}) a(agent_id)
    on conflict (agent_id) do update set position = excluded.position;
    insert into tree_heads (agent_id, tree_size, root, note)
    select agent_id, ${to}, decode(repeat('ab', 32), 'hex'), 'candor.bench/agents/' || agent_id || E'\\n${to}\\n' from (${agentIds}) a(agent_id);
  `).unprepared

/** Agents whose tallies already cover their logs (sessions with violations over the last weeks). */
const seedTallies = (sql: SqlClient.SqlClient, count: number) =>
  sql.unsafe(`
    insert into agents (agent_id) select 'bench-t-' || g from generate_series(0, ${count - 1}) g;
    insert into chain_heads (agent_id, position, hash, frontier)
    select 'bench-t-' || g, 1000, decode(repeat('00', 32), 'hex'), '[]'::jsonb from generate_series(0, ${count - 1}) g;
    insert into tree_heads (agent_id, tree_size, root, note)
    select 'bench-t-' || g, 1000, decode(repeat('ab', 32), 'hex'), E'candor.bench\\n1000\\n'
    from generate_series(0, ${count - 1}) g;
    insert into reputation_tallies (agent_id, tree_size, certified, analysed, analysed_clear, long_sessions, stable_sessions)
    select 'bench-t-' || g, 1000, 1000, 900, 800 + g % 100, 40, 35 + g % 6 from generate_series(0, ${count - 1}) g;
    insert into reputation_sessions (agent_id, session_id, checkpoints, last_violation_at, drifted)
    select 'bench-t-' || g, 's' || s, 25, case when s % 4 = 0 then now() - s * interval '3 days' end, s % 9 = 0
    from generate_series(0, ${count - 1}) g, generate_series(0, 39) s;
  `).unprepared

const recompute = (agentId: string) => recomputeReputation(agentId).pipe(Effect.provide(ReputationRepo.layer))

/** Recomputes every agent (`concurrency` at once); ms per agent, wall-clock. */
const recomputeAll = (agentIds: ReadonlyArray<string>, n: number) =>
  Effect.map(
    timeMs(Effect.forEach(agentIds, recompute, { concurrency: n, discard: true })),
    ([ms]) => ms / agentIds.length
  )

const program = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const api = yield* ApiHarness

  // (a) from tallies: the hourly sweep's work once logs stand still.
  yield* seedTallies(sql, tallyAgents)
  const tallied = Array.from({ length: tallyAgents }, (_, i) => `bench-t-${i}`)
  const firstMs = yield* recomputeAll(tallied, 1)
  const againMs = yield* recomputeAll(tallied, concurrency)

  // (a) from cold tallies of `coldCheckpoints` each.
  const cold = `select 'bench-c-' || g from generate_series(0, ${coldAgents - 1}) g`
  const [coldSeedMs] = yield* timeMs(seedCheckpoints(sql, cold, 0, coldCheckpoints, coldCheckpoints))
  const coldIds = Array.from({ length: coldAgents }, (_, i) => `bench-c-${i}`)
  const coldMs = yield* recomputeAll(coldIds, 1)

  // (b) a million checkpoints.
  const big = `select '${BIG}'`
  const [bigSeedMs] = yield* timeMs(seedCheckpoints(sql, big, 0, bigCheckpoints, bigCheckpoints + 100))
  yield* sql`analyze`
  const [bigColdMs] = yield* timeMs(recompute(BIG))
  yield* seedCheckpoints(sql, big, bigCheckpoints, bigCheckpoints + 100, bigCheckpoints + 100)
  const [bigIncrementMs, incremented] = yield* timeMs(recompute(BIG))
  const [bigStaleMs] = yield* timeMs(recompute(BIG))

  const latencies: Array<number> = []
  for (let i = 0; i < reads; i++) {
    const [ms, res] = yield* timeMs(api.call("GET", `/v1/reputation/${BIG}`))
    if (res.status !== 200) return yield* Effect.dieMessage(`GET /v1/reputation/${BIG}: ${res.status}`)
    latencies.push(ms)
  }
  latencies.sort((x, y) => x - y)

  console.log(`reputation bench on PostgreSQL (${process.env.TEST_DATABASE_URL ?? "postgres://127.0.0.1:5432"})`)
  console.log(
    table(
      "(a) Recomputation, per agent",
      ["agents", "tally", "concurrency", "per agent", "agents/s"],
      [
        [String(tallyAgents), "stored, covers the log (first score)", "1", fmtMs(firstMs), (1000 / firstMs).toFixed(0)],
        [
          String(tallyAgents),
          "stored, covers the log (unchanged score)",
          String(concurrency),
          fmtMs(againMs),
          (1000 / againMs).toFixed(0)
        ],
        [
          String(coldAgents),
          `cold: ${coldCheckpoints} checkpoints each (seeded in ${fmtMs(coldSeedMs)})`,
          "1",
          fmtMs(coldMs),
          (1000 / coldMs).toFixed(0)
        ]
      ]
    )
  )
  console.log(
    table(
      `(b) One agent of ${bigCheckpoints.toLocaleString("en")} checkpoints (seeded in ${fmtMs(bigSeedMs)})`,
      ["measure", "time"],
      [
        ["cold recomputation (whole log)", fmtMs(bigColdMs)],
        [`incremental recomputation (+100, counted ${incremented.counted})`, fmtMs(bigIncrementMs)],
        ["recomputation, log unchanged", fmtMs(bigStaleMs)],
        [`GET /v1/reputation/{id} over HTTP, p50 (${reads} reads)`, fmtMs(percentile(latencies, 50))],
        ["GET /v1/reputation/{id} over HTTP, p99", fmtMs(percentile(latencies, 99))]
      ]
    )
  )
})

Effect.runPromise(Effect.scoped(Effect.provide(program, harness({ database: "postgres" })))).catch((error) => {
  console.error(error)
  process.exit(1)
})
