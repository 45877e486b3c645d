/**
 * `npm run bench:governance`: what governance costs and how fast it travels.
 *
 * 1. The tool policy on the gateway's request path: `evaluatePolicy` for a request declaring 8 tools,
 *    against policies of 10, 100 and 1,000 rules (half exact names, half globs). Mnemom's
 *    service claims "under 5 ms for fewer than 100 rules".
 * 2. A governance log append (entry, Merkle nodes, signed tree head, in one transaction) on embedded
 *    PGlite and, with TEST_DATABASE_URL or DATABASE_URL, on PostgreSQL: sequential latency, and the
 *    rate with 8 appends in flight on 8 logs.
 * 3. With NATS_URL or TEST_NATS_URL: how long an agent-state change (a pause, a policy, values) takes
 *    from one process's write to another connection's copy (two connections stand for two processes),
 *    the path a pause takes from the API to every gateway. The bar is 1 s.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type * as SqlClient from "@effect/sql/SqlClient"
import * as KvAgentState from "../adapters/bus/KvAgentState.js"
import { NatsConnection } from "../adapters/bus/NatsConnection.js"
import { SigningKeys } from "../adapters/keys/SigningKeys.js"
import * as GovernanceLog from "../adapters/store/GovernanceLog.js"
import * as PgliteClient from "../adapters/store/PgliteClient.js"
import * as StoreDatabase from "../adapters/store/StoreDatabase.js"
import { agentGovernanceLog } from "../core/Governance.js"
import { evaluatePolicy } from "../core/Policy.js"
import { decodePolicy, type Policy } from "../core/schema/Policy.js"
import { generateSigningKey } from "../core/Signing.js"

const percentile = (sorted: ReadonlyArray<number>, p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!

const fmtMs = (ms: number): string => (ms < 1 ? `${(ms * 1000).toFixed(1)} µs` : `${ms.toFixed(2)} ms`)

// ---- 1. policy evaluation ----------------------------------------------------------------------

const policyOf = (rules: number): Policy => {
  const forbidden = Array.from({ length: rules / 2 }, (_, i) => ({
    pattern: i % 2 === 0 ? `danger_${i}` : `danger_${i}_*`,
    reason: "forbidden"
  }))
  const mappings = Object.fromEntries(
    Array.from({ length: rules / 2 }, (_, i) => [
      `capability_${i}`,
      { tools: [i % 2 === 0 ? `tool_${i}` : `tool_${i}_?x*`], card_actions: ["read"] }
    ])
  )
  const decoded = decodePolicy({
    meta: { schema_version: "1.0", name: "bench" },
    forbidden,
    capability_mappings: mappings,
    defaults: { enforcement_mode: "enforce" }
  })
  if (decoded._tag === "Left") throw new Error(String(decoded.left))
  return decoded.right
}

const TOOLS = ["search_web", "tool_4", "tool_7_ax1", "read_file", "danger_9_rm", "send_email", "tool_100", "calc"].map(
  (name) => ({ name })
)

/** Mean time per call over at least 300 ms after a warm-up. */
const timePerCall = (op: () => void): number => {
  for (let i = 0; i < 2_000; i++) op()
  let calls = 0
  const start = performance.now()
  while (performance.now() - start < 300) {
    for (let i = 0; i < 1_000; i++) op()
    calls += 1_000
  }
  return (performance.now() - start) / calls
}

const policyRows = (): ReadonlyArray<ReadonlyArray<string>> => {
  const now = new Date()
  const never = () => undefined
  const rows: Array<ReadonlyArray<string>> = [
    ["no policy (the check that skips it)", fmtMs(timePerCall(() => never()))]
  ]
  for (const rules of [10, 100, 1_000]) {
    const policy = policyOf(rules)
    rows.push([
      `${rules} rules, 8 tools`,
      fmtMs(timePerCall(() => evaluatePolicy(policy, undefined, TOOLS, never, now)))
    ])
  }
  return rows
}

// ---- 2. governance appends ----------------------------------------------------------------------

const appendRows = (label: string) =>
  Effect.gen(function* () {
    const logs = yield* GovernanceLog.GovernanceLog
    const draft = {
      action: "enforcement.mode" as const,
      actor: "bench",
      previous_state: { mode: "observe" },
      new_state: { mode: "enforce" }
    }
    const run = `bench-${Date.now()}`
    const latencies: Array<number> = []
    for (let i = 0; i < 300; i++) {
      const start = performance.now()
      yield* logs.append(agentGovernanceLog(`${run}-seq`), draft)
      latencies.push(performance.now() - start)
    }
    latencies.sort((a, b) => a - b)
    const total = 800
    const start = performance.now()
    yield* Effect.forEach(
      Array.from({ length: total }, (_, i) => i),
      (i) => logs.append(agentGovernanceLog(`${run}-${i % 8}`), draft),
      { concurrency: 8 }
    )
    const rate = total / ((performance.now() - start) / 1000)
    return [
      [
        `${label}: append, sequential`,
        `p50 ${fmtMs(percentile(latencies, 50))}`,
        `p99 ${fmtMs(percentile(latencies, 99))}`
      ],
      [`${label}: appends/s, 8 in flight on 8 logs`, `${rate.toFixed(0)}/s`, ""]
    ]
  })

const governanceOn = (database: Layer.Layer<SqlClient.SqlClient, unknown>) =>
  GovernanceLog.layer({ logOrigin: "bench.local" }).pipe(
    Layer.provideMerge(database),
    Layer.provide(SigningKeys.fromKey(generateSigningKey()))
  )

// ---- 3. agent-state propagation ------------------------------------------------------------------

const propagationRows = (url: string) =>
  Effect.gen(function* () {
    const prefix = `bench${Date.now()}`
    // Two connections, as two processes have; built in this scope so they outlive each `make`.
    const connect = (name: string) => Layer.build(NatsConnection.layer(url, { name }))
    const writer = yield* KvAgentState.make({ prefix }).pipe(Effect.provide(yield* connect("bench-writer")))
    const reader = yield* KvAgentState.make({ prefix }).pipe(Effect.provide(yield* connect("bench-reader")))
    const latencies: Array<number> = []
    for (let i = 0; i < 200; i++) {
      const agentId = `agent-${i}`
      const contained_at = new Date().toISOString()
      const start = performance.now()
      yield* writer.update(agentId, {
        containment: { status: "paused", reason: "bench", contained_at, contained_by: "bench" }
      })
      while ((yield* reader.get(agentId)).containment === undefined) yield* Effect.yieldNow()
      latencies.push(performance.now() - start)
    }
    latencies.sort((a, b) => a - b)
    return [
      [
        "pause written → seen by another connection (NATS KV watch)",
        `p50 ${fmtMs(percentile(latencies, 50))}`,
        `p99 ${fmtMs(percentile(latencies, 99))} (bar: 1 s)`
      ]
    ]
  }).pipe(Effect.scoped)

// ---- the tables ----------------------------------------------------------------------------------

const table = (title: string, header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>) =>
  [
    `\n${title}\n`,
    `| ${header.join(" | ")} |`,
    `|${header.map(() => "---").join("|")}|`,
    ...rows.map((row) => `| ${row.join(" | ")} |`)
  ].join("\n")

const program = Effect.gen(function* () {
  console.log(table("Tool policy on the request path (per request)", ["policy", "time"], policyRows()))

  const rows: Array<ReadonlyArray<string>> = []
  rows.push(
    ...(yield* appendRows("PGlite").pipe(Effect.provide(governanceOn(StoreDatabase.migrated(PgliteClient.layer())))))
  )
  const databaseUrl = process.env["TEST_DATABASE_URL"] ?? process.env["DATABASE_URL"]
  if (databaseUrl !== undefined) {
    rows.push(
      ...(yield* appendRows("PostgreSQL").pipe(
        Effect.provide(
          governanceOn(
            StoreDatabase.layerSql({ databaseUrl: Option.some(Redacted.make(databaseUrl)), dataDir: "unused" })
          )
        )
      ))
    )
  }
  console.log(
    table(
      "Governance log appends (entry, nodes, signed tree head, one transaction)",
      ["store", "p50 / rate", "p99"],
      rows
    )
  )

  const natsUrl = process.env["TEST_NATS_URL"] ?? process.env["NATS_URL"]
  if (natsUrl !== undefined) {
    console.log(table("Propagation to the gateways", ["path", "p50", "p99"], yield* propagationRows(natsUrl)))
  } else {
    console.log("\n(no NATS_URL / TEST_NATS_URL: propagation not measured)")
  }
})

Effect.runPromise(program.pipe(Effect.provide(Logger.minimumLogLevel(LogLevel.Warning)))).catch((error) => {
  console.error(error)
  process.exit(1)
})
