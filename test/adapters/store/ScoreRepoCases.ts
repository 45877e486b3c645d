/**
 * Cases of the repositories of scores, run in the repository conformance suite
 * (RepositoryConformance.ts) on PGlite and PostgreSQL: an agent's stored reputation and its
 * history (ReputationRepo), the members' scores a team is assessed on (MemberScores), a team's
 * reputation bookkeeping (TeamReputationRepo), and the team intelligence's reads of its members'
 * logs (TeamIntelligenceInputs).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import { randomUUID } from "node:crypto"
import { expect } from "vitest"
import { CoherenceRepo } from "../../../adapters/store/CoherenceRepo.js"
import { MemberScores } from "../../../adapters/store/MemberScores.js"
import { ReclassificationRepo } from "../../../adapters/store/ReclassificationRepo.js"
import { ReputationRepo, type StoredScore } from "../../../adapters/store/ReputationRepo.js"
import { Store } from "../../../adapters/store/Store.js"
import { TeamIntelligenceInputs } from "../../../adapters/store/TeamIntelligenceInputs.js"
import { TeamRepo } from "../../../adapters/store/TeamRepo.js"
import { TeamReputationRepo } from "../../../adapters/store/TeamReputationRepo.js"
import { TrustEdgeRepo } from "../../../adapters/store/TrustEdgeRepo.js"
import { agentGovernanceLog, governanceLogKey } from "../../../core/Governance.js"
import type { ReputationHistoryItem } from "../../../core/schema/Reputation.js"
import { ratedAgent } from "../../support/ReputationFixtures.js"
import { claimed } from "./AgentRepoCases.js"
import { fresh, makeInputs, uniqueId } from "./Fixtures.js"

const storedScore = (agentId: string, baseScore: number): StoredScore => {
  const { visibility: _, ...record } = ratedAgent
  return { record: { ...record, agent_id: agentId }, notified_score: null, notified_grade: null, base_score: baseScore }
}

const historyItem = (computedAt: string, kind: ReputationHistoryItem["kind"]): ReputationHistoryItem => ({
  score: ratedAgent.score,
  grade: ratedAgent.grade,
  confidence: ratedAgent.confidence,
  checkpoint_count: 10,
  tree_size: 10,
  kind,
  computed_at: computedAt
})

export const reputationScores = Effect.gen(function* () {
  const repo = yield* ReputationRepo
  const orgId = uniqueId("org_rep")
  const [agentId, unknown] = [uniqueId("agt-rep"), uniqueId("agt-rep")]
  yield* claimed(orgId, [agentId])
  expect(yield* repo.stored(agentId)).toBeUndefined()
  const score = storedScore(agentId, 640)
  yield* repo.saveScore(agentId, score)
  expect(yield* repo.stored(agentId)).toEqual(score)
  yield* repo.saveScore(agentId, { ...score, notified_score: score.record.score, notified_grade: score.record.grade })
  expect((yield* repo.stored(agentId))?.notified_grade).toBe(score.record.grade)
  expect(yield* repo.baseScores([agentId, unknown])).toEqual(
    new Map([[agentId, { score: 640, eligible: score.record.is_eligible }]])
  )
  expect(yield* repo.orgOf(agentId)).toBe(orgId)
  expect(yield* repo.orgOf(unknown)).toBeNull()
  expect(yield* repo.visibility(agentId)).toBe("unlisted")
  expect(yield* repo.visibility(unknown)).toBeUndefined()
})

/** The recomputation's reads in one statement equal the six reads they replace; the checks say when the others have anything. */
export const recomputationReads = Effect.gen(function* () {
  const repo = yield* ReputationRepo
  const store = yield* Store
  const sql = yield* SqlClient.SqlClient
  const orgId = uniqueId("org_rr")
  const agentId = uniqueId("agt-rr")
  const { inputs } = makeInputs(agentId, fresh(agentId), 4)
  expect(yield* store.commitBatch(inputs)).toEqual({ _tag: "Committed" })
  yield* claimed(orgId, [agentId])
  yield* repo.lockTally(agentId)
  const session = (id: string, last: string | null) =>
    [id, { checkpoints: 2, last_violation_at: last, drifted: false }] as const
  yield* repo.saveTally(
    agentId,
    { tree_size: 4, certified: 4, analysed: 4, analysed_clear: 3, long_sessions: 0, stable_sessions: 0 },
    new Map([
      session("s-b", "2026-11-20T10:00:00.000Z"),
      session("s-a", "2026-11-21T10:00:00.000Z"),
      session("s-old", "2026-09-01T00:00:00.000Z"),
      session("s-clear", null)
    ]),
    "2026-11-22T00:00:00.000Z"
  )
  yield* repo.saveScore(agentId, { ...storedScore(agentId, 610), notified_score: 600, notified_grade: "A" })
  yield* repo.appendHistory(agentId, historyItem("2026-10-01T00:00:00.000Z", "recomputation"))
  yield* repo.appendHistory(agentId, { ...historyItem("2026-10-20T00:00:00.000Z", "recomputation"), score: 555 })

  const separately = (id: string, at: { since: string; trendAt: string; treeSize: number }) =>
    Effect.gen(function* () {
      const head = yield* store.treeHead(id, at.treeSize)
      const org = yield* repo.orgOf(id)
      return {
        orgId: org,
        fleetVersion: org === null ? undefined : yield* (yield* CoherenceRepo).fleetVersion(org),
        violationSessions: yield* repo.violationSessions(id, at.since),
        stored: yield* repo.stored(id),
        scoreAt: yield* repo.scoreAt(id, at.trendAt),
        treeHead: head === undefined ? undefined : { root: head.root, note: head.note }
      }
    })
  const at = { since: "2026-10-30T00:00:00.000Z", trendAt: "2026-10-25T00:00:00.000Z", treeSize: 4 }
  const reads = yield* repo.recomputationReads(agentId, at)
  expect(reads).toEqual({
    ...(yield* separately(agentId, at)),
    mayHaveCardGaps: false,
    mayHaveReevaluations: false,
    mayHaveTrusters: false,
    mayTrustOthers: false
  })
  // Each member holds something here, so the comparison above compares values, not absences.
  expect(reads.orgId).toBe(orgId)
  expect(reads.fleetVersion).toMatch(/^[0-9]+$/)
  expect(reads.violationSessions.map((v) => v.session_id)).toEqual(["s-a", "s-b"])
  expect(reads.stored?.notified_grade).toBe("A")
  expect(reads.scoreAt).toBe(555)
  expect(reads.treeHead?.note).toContain(`\n4\n`)
  // Before the history and at a size with no signed head.
  const earlier = { since: "2026-11-21T00:00:00.000Z", trendAt: "2026-09-01T00:00:00.000Z", treeSize: 3 }
  expect(yield* repo.recomputationReads(agentId, earlier)).toEqual({
    ...(yield* separately(agentId, earlier)),
    mayHaveCardGaps: false,
    mayHaveReevaluations: false,
    mayHaveTrusters: false,
    mayTrustOthers: false
  })

  const violation = inputs.find((input) => input.checkpoint.verdict === "boundary_violation")!
  yield* (yield* ReclassificationRepo).insert({
    reclassification_id: `rc-${randomUUID()}`,
    agent_id: agentId,
    checkpoint_id: violation.checkpoint.checkpoint_id,
    session_id: violation.checkpoint.session_id,
    original_verdict: "boundary_violation",
    new_type: "card_gap",
    reason: "the card lacked the action",
    approved_by: "user-rr",
    chain_hash: violation.attestation.certificate.chain.hash,
    governance_index: 0,
    created_at: "2026-11-02T00:00:00.000Z"
  })
  expect((yield* repo.recomputationReads(agentId, at)).mayHaveCardGaps).toBe(true)
  const record = { action: "aip.reevaluation", new_state: { changed: [] } }
  yield* sql`insert into governance_entries (log_id, idx, leaf_hash, record)
    values (${governanceLogKey(agentGovernanceLog(agentId))}, 0, ${new Uint8Array(32)}, ${JSON.stringify(record)}::json)`
  expect((yield* repo.recomputationReads(agentId, at)).mayHaveReevaluations).toBe(true)
  const trust = yield* TrustEdgeRepo
  const edge = (source: string, target: string) => ({
    id: `te-${randomUUID()}`,
    source_agent_id: source,
    target_agent_id: target,
    trust_level: "high" as const,
    reason: "recomputation reads",
    created_by: "user-rr",
    created_at: "2026-11-02T00:00:00.000Z"
  })
  const [truster, trusted] = [uniqueId("agt-rr"), uniqueId("agt-rr")]
  yield* trust.create(edge(truster, agentId))
  expect(yield* repo.recomputationReads(agentId, at)).toMatchObject({ mayHaveTrusters: true, mayTrustOthers: false })
  const out = edge(agentId, trusted)
  yield* trust.create(out)
  expect(yield* repo.recomputationReads(agentId, at)).toMatchObject({ mayHaveTrusters: true, mayTrustOthers: true })
  // A deleted edge is no edge.
  yield* trust.remove(agentId, out.id, "user-rr")
  expect((yield* repo.recomputationReads(agentId, at)).mayTrustOthers).toBe(false)

  const unknown = uniqueId("agt-rr")
  expect(yield* repo.recomputationReads(unknown, at)).toStrictEqual({
    orgId: null,
    fleetVersion: undefined,
    violationSessions: [],
    stored: undefined,
    scoreAt: undefined,
    treeHead: undefined,
    mayHaveCardGaps: false,
    mayHaveReevaluations: false,
    mayHaveTrusters: false,
    mayTrustOthers: false
  })
})

export const reputationHistory = Effect.gen(function* () {
  const repo = yield* ReputationRepo
  const agentId = uniqueId("agt-rep-h")
  const week = "2026-10-26T00:00:00.000Z"
  expect(yield* repo.appendHistory(agentId, historyItem("2026-11-01T00:00:00.000Z", "recomputation"))).toBe(true)
  expect(yield* repo.appendHistory(agentId, historyItem("2026-11-01T06:00:00.000Z", "weekly_snapshot"), week)).toBe(
    true
  )
  // One weekly snapshot per week.
  expect(yield* repo.appendHistory(agentId, historyItem("2026-11-01T07:00:00.000Z", "weekly_snapshot"), week)).toBe(
    false
  )
  yield* repo.appendHistory(agentId, { ...historyItem("2026-11-02T00:00:00.000Z", "recomputation"), score: 500 })
  const history = yield* repo.history(agentId, "2026-11-01T00:00:00.000Z", 10)
  expect(history.map((item) => [item.computed_at, item.kind])).toEqual([
    ["2026-11-02T00:00:00.000Z", "recomputation"],
    ["2026-11-01T06:00:00.000Z", "weekly_snapshot"],
    ["2026-11-01T00:00:00.000Z", "recomputation"]
  ])
  expect(history[2]).toEqual(historyItem("2026-11-01T00:00:00.000Z", "recomputation"))
  expect(yield* repo.history(agentId, "2026-11-01T00:00:00.001Z", 1)).toHaveLength(1)
  expect(yield* repo.scoreAt(agentId, "2026-11-01T12:00:00.000Z")).toBe(ratedAgent.score)
  expect(yield* repo.scoreAt(agentId, "2026-11-03T00:00:00.000Z")).toBe(500)
  expect(yield* repo.scoreAt(agentId, "2026-10-31T00:00:00.000Z")).toBeUndefined()
})

export const memberScores = Effect.gen(function* () {
  const scores = yield* MemberScores
  const reputation = yield* ReputationRepo
  const store = yield* Store
  const [scored, paused, unknown] = [uniqueId("agt-ms"), uniqueId("agt-ms"), uniqueId("agt-ms")]
  yield* reputation.saveScore(scored, storedScore(scored, 600))
  yield* store.putAgentSettings(paused, {
    mode: "observe",
    containment: { status: "paused", reason: "r", contained_at: "2026-11-01T00:00:00.000Z", contained_by: "system" }
  })
  // In the order given, an unknown agent with nothing.
  expect(yield* scores.memberScoresOf([unknown, paused, scored])).toEqual([
    { agent_id: unknown, score: 0, eligible: false, status: "active" },
    { agent_id: paused, score: 0, eligible: false, status: "paused" },
    { agent_id: scored, score: ratedAgent.score, eligible: ratedAgent.is_eligible, status: "active" }
  ])
  expect(yield* scores.memberScoresOf([])).toEqual([])
})

export const teamReputationBookkeeping = Effect.gen(function* () {
  const repo = yield* TeamReputationRepo
  const teams = yield* TeamRepo
  const orgId = uniqueId("org_trep")
  const agents = [uniqueId("agt-trep"), uniqueId("agt-trep")]
  yield* claimed(orgId, agents)
  const teamId = `team-${randomUUID()}`
  yield* teams.create(
    { team_id: teamId, org_id: orgId, name: "Rep", description: null, metadata: {} },
    agents,
    "u",
    "2026-11-01T00:00:00.000Z"
  )
  expect((yield* repo.plan(orgId))?.plan_id).toBe("free")
  expect(yield* repo.plan(uniqueId("org_none"))).toBeUndefined()
  expect(yield* repo.stored(teamId)).toBeUndefined()
  expect(yield* repo.rosterChanges(teamId)).toEqual([])
  yield* teams.removeMember(teamId, agents[0]!, "u", "2026-11-02T00:00:00.000Z")
  expect(yield* repo.rosterChanges(teamId)).toEqual(["2026-11-02T00:00:00.000Z"])

  // The automatic recomputation's hour: the earliest wait is kept, cleared by a run.
  expect(yield* repo.triggerState(teamId)).toEqual({ last_automatic_at: null, pending_since: null })
  yield* repo.markPending(teamId, "2026-11-01T10:00:00.000Z")
  yield* repo.markPending(teamId, "2026-11-01T11:00:00.000Z")
  expect(yield* repo.triggerState(teamId)).toEqual({
    last_automatic_at: null,
    pending_since: "2026-11-01T10:00:00.000Z"
  })
  yield* repo.markAutomatic(teamId, "2026-11-01T12:00:00.000Z")
  expect(yield* repo.triggerState(teamId)).toEqual({
    last_automatic_at: "2026-11-01T12:00:00.000Z",
    pending_since: null
  })
  yield* repo.markPending(teamId, "2026-11-01T12:30:00.000Z")
  yield* repo.clearPending(teamId)
  expect((yield* repo.triggerState(teamId)).pending_since).toBeNull()

  // A month's notice is sent once.
  expect(yield* repo.claimNotice(orgId, "2026-11", "warning", "2026-11-03T00:00:00.000Z")).toBe(true)
  expect(yield* repo.claimNotice(orgId, "2026-11", "warning", "2026-11-04T00:00:00.000Z")).toBe(false)
  expect(yield* repo.claimNotice(orgId, "2026-11", "exceeded", "2026-11-04T00:00:00.000Z")).toBe(true)
  expect(yield* repo.claimNotice(orgId, "2026-12", "warning", "2026-12-01T00:00:00.000Z")).toBe(true)
})

export const teamIntelligenceInputs = Effect.gen(function* () {
  const inputs = yield* TeamIntelligenceInputs
  const store = yield* Store
  const [agentId, idle] = [uniqueId("agt-ti"), uniqueId("agt-ti")]
  const committed = makeInputs(agentId, fresh(agentId), 7).inputs
  expect(yield* store.commitBatch(committed)).toEqual({ _tag: "Committed" })
  const counts = yield* inputs.verdictCounts([agentId, idle])
  expect(counts.get(agentId)).toEqual({ clear: 3, review_needed: 2, boundary_violation: 2 })
  expect(counts.get(idle)?.clear ?? 0).toBe(0)
  const since = committed[4]!.trace.timestamp
  const outcomes = yield* inputs.policyOutcomesSince([agentId], since)
  expect(outcomes.get(agentId)?.traces).toBe(3)
})
