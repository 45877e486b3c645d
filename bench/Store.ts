/**
 * `npx tsx bench/Store.ts [pglite|postgres]`: `commitBatch` throughput of the store alone (the
 * attestations are made before the clock starts), then the latency of the reads the API serves.
 * PostgreSQL runs in a throwaway database on TEST_DATABASE_URL; PGlite in memory.
 *
 * Env: BENCH_CHECKPOINTS (default 20000), BENCH_AGENTS (50), BENCH_BATCH (250 inputs per commit).
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type { AgentLogState } from "../core/Attestation.js"
import * as PgliteClient from "../adapters/store/PgliteClient.js"
import * as SqlStore from "../adapters/store/SqlStore.js"
import { type CommitInput, Store } from "../adapters/store/Store.js"
import * as StoreDatabase from "../adapters/store/StoreDatabase.js"
import { fresh, makeInput } from "../test/adapters/store/Fixtures.js"
import { throwawayDatabase } from "../test/support/Postgres.js"
import * as SecretKeys from "../adapters/keys/SecretKeys.js"

const total = Number(process.env.BENCH_CHECKPOINTS ?? 20_000)
const agentCount = Number(process.env.BENCH_AGENTS ?? 50)
const batchSize = Number(process.env.BENCH_BATCH ?? 250)
const backend = process.argv[2] === "postgres" ? "postgres" : "pglite"

const layer =
  backend === "postgres"
    ? Layer.unwrapScoped(
        Effect.map(throwawayDatabase, (url) =>
          StoreDatabase.layer({ databaseUrl: Option.some(url), dataDir: "unused" }).pipe(
            Layer.provide(SecretKeys.layerEphemeral)
          )
        )
      )
    : SqlStore.layer.pipe(
        Layer.provide(SecretKeys.layerEphemeral),
        Layer.provideMerge(StoreDatabase.migrated(PgliteClient.layer()))
      )

/** Batches in which each agent appears with consecutive inputs, as a partition consumer sends them. */
const makeBatches = (): ReadonlyArray<ReadonlyArray<CommitInput>> => {
  const agents = Array.from({ length: agentCount }, (_, i) => `bench-agent-${i}`)
  const states = new Map<string, AgentLogState>(agents.map((agent) => [agent, fresh(agent)]))
  const perAgent = Math.max(1, Math.floor(batchSize / agentCount))
  const batches: Array<Array<CommitInput>> = []
  for (let made = 0; made < total;) {
    const batch: Array<CommitInput> = []
    for (const agent of agents) {
      for (let i = 0; i < perAgent && made < total; i++, made++) {
        const input = makeInput(agent, states.get(agent)!, { sessionId: (p) => `${agent}-s${Math.floor(p / 20)}` })
        states.set(agent, input.attestation.state)
        batch.push(input)
      }
    }
    batches.push(batch)
  }
  return batches
}

const timeMs = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const start = performance.now()
    const result = yield* effect
    return [performance.now() - start, result] as const
  })

const program = Effect.gen(function* () {
  const store = yield* Store
  const batches = makeBatches()
  const [commitMs] = yield* timeMs(
    Effect.forEach(batches, (batch) =>
      Effect.flatMap(store.commitBatch(batch), (result) =>
        result._tag === "Committed" ? Effect.void : Effect.die(new Error(`conflict ${result.agentIds.join(",")}`))
      )
    )
  )
  const agent = "bench-agent-0"
  const size = (yield* store.loadLogState(agent)).frontier.size
  const reads = 200
  const [listMs] = yield* timeMs(
    Effect.forEach(Array.from({ length: reads }), (_, i) =>
      store.listCheckpoints({ agentId: agent, limit: 20, offset: i % 5, verdict: i % 2 === 0 ? "clear" : undefined })
    )
  )
  const [proofMs] = yield* timeMs(
    Effect.forEach(Array.from({ length: reads }), (_, i) => store.inclusionProof(agent, (i * 7919) % size, size))
  )
  console.log(
    `store bench on ${backend}: ${total} checkpoints, ${agentCount} agents, ${batches.length} batches of ~${batchSize}`
  )
  console.log(
    `  commitBatch      ${Math.round((total / commitMs) * 1000)} checkpoints/s (${(commitMs / batches.length).toFixed(1)} ms per batch)`
  )
  console.log(`  listCheckpoints  ${(listMs / reads).toFixed(2)} ms per page`)
  console.log(`  inclusionProof   ${(proofMs / reads).toFixed(2)} ms per proof (tree size ${size})`)
})

Effect.runPromise(Effect.scoped(Effect.provide(program, layer))).catch((error) => {
  console.error(error)
  process.exit(1)
})
