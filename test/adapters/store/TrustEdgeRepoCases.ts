/**
 * The trust edge repository's cases, run in the repository conformance suite
 * (RepositoryConformance.ts) on PGlite and PostgreSQL: one active edge per pair, soft deletes kept
 * on record, listing by direction, the outgoing limit, concurrent creates of one pair, and the
 * recursive-CTE graphs, which must give the pure walk (core/TrustPropagation.ts) the same answer as the whole graph does, also
 * where the 50-agent limit cuts a hop and for ids outside ASCII (the walk orders by code point).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import { FastCheck } from "effect"
import { randomUUID } from "node:crypto"
import { expect } from "vitest"
import { TRUST_MAX_OUTGOING, TrustEdgeRepo, type TrustEdgeDraft } from "../../../adapters/store/TrustEdgeRepo.js"
import { downstreamOf, trustAdjustmentOf, type TrustLink } from "../../../core/TrustPropagation.js"
import type { TrustLevel } from "../../../core/schema/Trust.js"

const AT = "2026-03-01T12:00:00.000Z"

const draft = (source: string, target: string, level: TrustLevel = "high"): TrustEdgeDraft => ({
  id: `te-${randomUUID()}`,
  source_agent_id: source,
  target_agent_id: target,
  trust_level: level,
  reason: `${source} trusts ${target}`,
  created_by: "user-t",
  created_at: AT
})

const created = (repo: TrustEdgeRepo["Type"], source: string, target: string, level: TrustLevel = "high") =>
  Effect.flatMap(repo.create(draft(source, target, level)), (result) =>
    result._tag === "Created" ? Effect.succeed(result.edge) : Effect.dieMessage(`${source}→${target}: ${result._tag}`)
  )

export const lifecycle = Effect.gen(function* () {
  const repo = yield* TrustEdgeRepo
  const sql = yield* SqlClient.SqlClient
  const first = yield* created(repo, "lc-a", "lc-b", "medium")
  expect(first).toMatchObject({ source_agent_id: "lc-a", target_agent_id: "lc-b", trust_level: "medium" })
  expect(first.created_at).toBe(AT)

  // a second edge of the pair, whatever its level, is refused while the first is active
  const again = yield* repo.create(draft("lc-a", "lc-b", "low"))
  expect(again).toEqual({ _tag: "Exists", edge: first })
  const reverse = yield* created(repo, "lc-b", "lc-a", "low")
  const other = yield* created(repo, "lc-c", "lc-a", "high")

  const ids = (rows: ReadonlyArray<{ id: string; direction: string }>) => rows.map((r) => [r.id, r.direction])
  const page = { limit: 100, offset: 0 }
  expect(ids(yield* repo.list("lc-a", ["outgoing"], page))).toEqual([[first.id, "outgoing"]])
  expect(ids(yield* repo.list("lc-a", ["incoming"], page)).sort()).toEqual(
    [
      [reverse.id, "incoming"],
      [other.id, "incoming"]
    ].sort()
  )
  expect((yield* repo.list("lc-a", ["outgoing", "incoming"], page)).length).toBe(3)
  expect((yield* repo.list("lc-a", ["outgoing", "incoming"], { limit: 2, offset: 2 })).length).toBe(1)

  // only the source deletes, only an active edge, once; the row stays with its deletion recorded
  expect(yield* repo.remove("lc-b", first.id, "user-t")).toBeUndefined()
  expect(yield* repo.remove("lc-a", "te-unknown", "user-t")).toBeUndefined()
  expect(yield* repo.remove("lc-a", first.id, "user-x")).toEqual(first)
  expect(yield* repo.remove("lc-a", first.id, "user-x")).toBeUndefined()
  const [kept] = yield* sql<{ deleted_by: string; deleted: boolean }>`
    select deleted_by, deleted_at is not null as deleted from trust_edges where edge_id = ${first.id}`
  expect(kept).toEqual({ deleted_by: "user-x", deleted: true })
  expect(ids(yield* repo.list("lc-a", ["outgoing"], page))).toEqual([])

  // delete and recreate: the way to change a level
  const relevelled = yield* created(repo, "lc-a", "lc-b", "low")
  expect(relevelled.id).not.toBe(first.id)
  expect(ids(yield* repo.list("lc-a", ["outgoing"], page))).toEqual([[relevelled.id, "outgoing"]])

  // the table refuses a self edge and an unknown level, whatever the API checks
  const refused = yield* sql`insert into trust_edges (edge_id, source_agent_id, target_agent_id, trust_level,
    reason, created_by) values ('te-self', 'lc-a', 'lc-a', 'high', 'r', 'u')`.pipe(Effect.flip)
  expect(refused._tag).toBe("SqlError")
  const badLevel = yield* sql`insert into trust_edges (edge_id, source_agent_id, target_agent_id, trust_level,
    reason, created_by) values ('te-lvl', 'lc-a', 'lc-z', 'total', 'r', 'u')`.pipe(Effect.flip)
  expect(badLevel._tag).toBe("SqlError")

  yield* sql`insert into agent_claims (agent_id, agent_hash, user_id) values ('lc-claimed', 'h', 'u')`
  yield* sql`insert into agents (agent_id) values ('lc-seen')`
  expect(yield* repo.agentExists("lc-claimed")).toBe(true)
  expect(yield* repo.agentExists("lc-seen")).toBe(true)
  expect(yield* repo.agentExists("lc-nobody")).toBe(false)
}).pipe(Effect.orDie)

export const outgoingLimit = Effect.gen(function* () {
  const repo = yield* TrustEdgeRepo
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    insert into trust_edges (edge_id, source_agent_id, target_agent_id, trust_level, reason, created_by)
    select 'te-bulk-' || i, 'ol-source', 'ol-target-' || i, 'low', 'bulk', 'u'
    from generate_series(1, ${TRUST_MAX_OUTGOING - 1}) as i`
  yield* created(repo, "ol-source", "ol-last")
  expect(yield* repo.create(draft("ol-source", "ol-one-too-many"))).toEqual({ _tag: "Full" })
  const last = (yield* repo.list("ol-source", ["outgoing"], { limit: 1, offset: TRUST_MAX_OUTGOING - 1 }))[0]!
  yield* repo.remove("ol-source", last.id, "u")
  expect((yield* repo.create(draft("ol-source", "ol-one-too-many")))._tag).toBe("Created")
}).pipe(Effect.orDie)

export const concurrentCreates = Effect.gen(function* () {
  const repo = yield* TrustEdgeRepo
  const results = yield* Effect.all(
    Array.from({ length: 8 }, (_, i) => repo.create(draft("cc-a", "cc-b", i % 2 === 0 ? "low" : "high"))),
    { concurrency: "unbounded" }
  )
  expect(results.filter((r) => r._tag === "Created")).toHaveLength(1)
  expect(results.filter((r) => r._tag === "Exists")).toHaveLength(7)
  expect(yield* repo.list("cc-a", ["outgoing"], { limit: 10, offset: 0 })).toHaveLength(1)
}).pipe(Effect.orDie)

/** Every active edge, straight from the table. */
const allActive = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) =>
    sql<TrustLink>`select source_agent_id, target_agent_id, trust_level from trust_edges where deleted_at is null`
)

/** The graphs read for `agents` give the pure rule the answers the whole graph gives. */
const sameAsWholeGraph = (
  agents: ReadonlyArray<string>,
  baseOf: (id: string) => { score: number; eligible: boolean }
) =>
  Effect.gen(function* () {
    const repo = yield* TrustEdgeRepo
    const whole = yield* allActive
    for (const agent of agents) {
      const incoming = yield* repo.incomingGraph(agent)
      expect(incoming.length).toBeLessThanOrEqual(50 * 51)
      expect(trustAdjustmentOf(agent, incoming, baseOf), `incoming of ${agent}`).toEqual(
        trustAdjustmentOf(agent, whole, baseOf)
      )
      const outgoing = yield* repo.outgoingGraph(agent)
      expect(downstreamOf(agent, outgoing), `outgoing of ${agent}`).toEqual(downstreamOf(agent, whole))
    }
  })

const baseOf = (id: string) => ({
  score: 600 + ((id.length * 97 + id.charCodeAt(id.length - 1)) % 401),
  eligible: true
})

export const graphsOfRandomGraphs = Effect.gen(function* () {
  const repo = yield* TrustEdgeRepo
  const sql = yield* SqlClient.SqlClient
  // Upper before lower case, é and 😀 after ASCII, \uffff before 😀 (UTF-16 order would put it after).
  const agents = ["rg-A", "rg-b", "rg-C", "rg-d", "rg-é", "rg-F", "rg-😀", "rg-\uffff", "rg-i", "rg-J"]
  const level = FastCheck.constantFrom<TrustLevel>("low", "medium", "high")
  const graphs = FastCheck.sample(
    FastCheck.array(
      FastCheck.tuple(FastCheck.constantFrom(...agents), FastCheck.constantFrom(...agents), level, FastCheck.boolean()),
      { maxLength: 30 }
    ),
    { numRuns: 12, seed: 15 }
  )
  for (const edges of graphs) {
    yield* sql`delete from trust_edges where source_agent_id like 'rg-%'`
    for (const [source, target, l, deleted] of edges) {
      if (source === target) continue
      const result = yield* repo.create(draft(source, target, l))
      if (deleted && result._tag === "Created") yield* repo.remove(source, result.edge.id, "u")
    }
    yield* sameAsWholeGraph(agents, baseOf)
  }
}).pipe(Effect.orDie)

export const graphsWhereTheLimitCuts = Effect.gen(function* () {
  const repo = yield* TrustEdgeRepo
  const n = (prefix: string, i: number) => `${prefix}${String(i).padStart(2, "0")}`
  // 30 direct trusters of lc-y; 60 at hop 2 of which 20 fit; hop 3 never reached; a hub with 70 targets.
  for (let i = 0; i < 30; i++) {
    yield* created(repo, n("cut-h1-", i), "cut-y", i % 3 === 0 ? "high" : "low")
    yield* created(repo, n("cut-h2-", 2 * i), n("cut-h1-", i), "medium")
    yield* created(repo, n("cut-h2-", 2 * i + 1), n("cut-h1-", (i + 1) % 30), "high")
    yield* created(repo, n("cut-h3-", i), n("cut-h2-", 2 * i), "high")
  }
  for (let i = 0; i < 70; i++) yield* created(repo, "cut-hub", n("cut-t", i), "low")
  yield* created(repo, "cut-t00", "cut-y", "high")
  const walked = trustAdjustmentOf("cut-y", yield* repo.incomingGraph("cut-y"), baseOf).contributions
  expect(walked).toHaveLength(50)
  expect(walked.filter((c) => c.hops === 2)).toHaveLength(19)
  expect(yield* repo.outgoingGraph("cut-hub")).toHaveLength(50)
  expect(downstreamOf("cut-hub", yield* repo.outgoingGraph("cut-hub"))).toHaveLength(50)
  yield* sameAsWholeGraph(["cut-y", "cut-h1-00", "cut-h2-00", "cut-hub", "cut-t00", "cut-h3-05"], baseOf)
}).pipe(Effect.orDie)
