/**
 * Cases of the repositories of scores, run in the repository conformance suite
 * (RepositoryConformance.ts) on PGlite and PostgreSQL: an agent's stored reputation and its
 * history (ReputationRepo), the members' scores a team is assessed on (MemberScores), a team's
 * reputation bookkeeping (TeamReputationRepo), and the team intelligence's reads of its members'
 * logs (TeamIntelligenceInputs).
 */
import * as Effect from "effect/Effect"
import { randomUUID } from "node:crypto"
import { expect } from "vitest"
import { MemberScores } from "../../../adapters/store/MemberScores.js"
import { ReputationRepo, type StoredScore } from "../../../adapters/store/ReputationRepo.js"
import { Store } from "../../../adapters/store/Store.js"
import { TeamIntelligenceInputs } from "../../../adapters/store/TeamIntelligenceInputs.js"
import { TeamRepo } from "../../../adapters/store/TeamRepo.js"
import { TeamReputationRepo } from "../../../adapters/store/TeamReputationRepo.js"
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
