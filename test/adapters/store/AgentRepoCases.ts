/**
 * Cases of the repositories of an agent's settings and requests, run in the repository conformance
 * suite (RepositoryConformance.ts) on PGlite and PostgreSQL: its display name (AgentNameRepo), its
 * provider key's containment (KeyContainmentRepo), its scoped transactions, its policies and its
 * organization's (PolicyRepo), and its risk assessments (RiskRepo).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { randomUUID } from "node:crypto"
import { expect } from "vitest"
import { AgentNameRepo } from "../../../adapters/store/AgentNameRepo.js"
import { KeyContainmentRepo } from "../../../adapters/store/KeyContainmentRepo.js"
import { agentPolicyOwner, orgPolicyOwner, PolicyRepo } from "../../../adapters/store/PolicyRepo.js"
import { RiskRepo } from "../../../adapters/store/RiskRepo.js"
import { Store } from "../../../adapters/store/Store.js"
import { ScopedTransactionRepo, type StoredTransaction } from "../../../adapters/store/ScopedTransactionRepo.js"
import { policyHash } from "../../../core/Commitments.js"
import { SEVERITIES } from "../../../core/schema/Concern.js"
import type { ContainmentState } from "../../../core/schema/Containment.js"
import { Policy } from "../../../core/schema/Policy.js"
import type { RiskAssessment, TeamRiskAssessment } from "../../../core/schema/Risk.js"
import { fresh, makeInputs, uniqueId } from "./Fixtures.js"

/** An organization and agents claimed into it (`orgId` null: claimed by a user alone). */
export const claimed = (orgId: string | null, agentIds: ReadonlyArray<string>, agentHash = "h") =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    if (orgId !== null)
      yield* sql`insert into orgs (org_id, name, slug, billing_account_id, owner_user_id)
        values (${orgId}, ${orgId}, ${orgId}, ${`ba-${orgId}`}, 'owner') on conflict do nothing`
    for (const agentId of agentIds)
      yield* sql`insert into agent_claims (agent_id, agent_hash, user_id, org_id)
        values (${agentId}, ${agentHash}, 'owner', ${orgId})`
  }).pipe(Effect.orDie)

export const agentNames = Effect.gen(function* () {
  const repo = yield* AgentNameRepo
  const sql = yield* SqlClient.SqlClient
  const agentId = uniqueId("agt-name")
  const defaultName = sql<{ default_name: string | null }>`
    select default_name from agents where agent_id = ${agentId}`.pipe(Effect.map(([row]) => row?.default_name))
  // Named before its first request: the row is made.
  expect(yield* repo.lock(agentId)).toBeNull()
  yield* repo.set(agentId, "Support bot")
  expect(yield* repo.lock(agentId)).toBe("Support bot")
  yield* repo.set(agentId, null)
  expect(yield* repo.lock(agentId)).toBeNull()
  // The first default stays.
  yield* repo.setDefault(agentId, "first")
  yield* repo.setDefault(agentId, "second")
  expect(yield* defaultName).toBe("first")
  const other = uniqueId("agt-name")
  yield* repo.setDefault(other, "only")
  expect(yield* repo.lock(other)).toBeNull()
})

export const keyContainment = Effect.gen(function* () {
  const repo = yield* KeyContainmentRepo
  const keyHash = uniqueId("kh")
  const paused: ContainmentState = {
    status: "paused",
    reason: "leaked key",
    contained_at: "2026-11-01T00:00:00.000Z",
    contained_by: "user-k"
  }
  expect(yield* repo.get(keyHash)).toBeNull()
  expect(yield* repo.lock(keyHash)).toBeNull()
  yield* repo.put(keyHash, paused, "2026-11-01T00:00:00.000Z")
  expect(yield* repo.get(keyHash)).toEqual(paused)
  expect(yield* repo.lock(keyHash)).toEqual(paused)
  yield* repo.put(keyHash, null, "2026-11-02T00:00:00.000Z")
  expect(yield* repo.get(keyHash)).toBeNull()

  // The agents claimed with the key, by id, bounded.
  const agents = ["c", "a", "b"].map((suffix) => `agt-${keyHash}-${suffix}`)
  yield* claimed(null, agents, keyHash)
  yield* claimed(null, [`agt-${keyHash}-other`], `${keyHash}-other`)
  expect(yield* repo.claimedAgents(keyHash, 10)).toEqual([...agents].sort())
  expect(yield* repo.claimedAgents(keyHash, 2)).toEqual([...agents].sort().slice(0, 2))
  expect(yield* repo.claimedAgents(uniqueId("kh"), 10)).toEqual([])
})

const policy = (name: string) =>
  Schema.decodeUnknownSync(Policy)({
    meta: { schema_version: "1.0", name },
    forbidden: [{ pattern: "shell_*", reason: "no shell", severity: "critical" }]
  })

export const scopedTransactions = Effect.gen(function* () {
  const repo = yield* ScopedTransactionRepo
  const agentId = uniqueId("agt-tx")
  const row = (n: number, expiresAt: string): StoredTransaction => ({
    transaction_id: `tx-${randomUUID()}`,
    agent_id: agentId,
    action_type: `deploy-${n}`,
    tools: ["read_file", "write_file"],
    policy: n === 0 ? null : policy(`tx-${n}`),
    merged_policy: policy("merged"),
    created_at: `2026-11-01T00:0${n}:00.000Z`,
    expires_at: expiresAt,
    created_by: "user-tx",
    ended_at: null,
    ended_by: null
  })
  const now = Date.parse("2026-11-01T01:00:00.000Z")
  const expired = row(0, "2026-11-01T00:30:00.000Z")
  const active = row(1, "2026-11-01T02:00:00.000Z")
  const closed = row(2, "2026-11-01T02:00:00.000Z")
  for (const r of [expired, active, closed]) yield* repo.insert(r)
  // Another agent's.
  yield* repo.insert({ ...row(3, "2026-11-01T02:00:00.000Z"), agent_id: uniqueId("agt-tx") })

  expect(yield* repo.get(active.transaction_id)).toEqual(active)
  expect(yield* repo.get(expired.transaction_id)).toEqual(expired)
  expect(yield* repo.get(`tx-${randomUUID()}`)).toBeUndefined()
  expect(yield* repo.close(closed.transaction_id, "2026-11-01T00:45:00.000Z", "user-close")).toBe(true)
  expect(yield* repo.close(closed.transaction_id, "2026-11-01T00:50:00.000Z", "user-late")).toBe(false)
  const ids = (rows: ReadonlyArray<StoredTransaction>) => rows.map((r) => r.transaction_id)
  // Newest first; the status at `now`.
  expect(ids(yield* repo.list(agentId, undefined, now))).toEqual(ids([closed, active, expired]))
  expect(ids(yield* repo.list(agentId, "active", now))).toEqual([active.transaction_id])
  expect(ids(yield* repo.list(agentId, "expired", now))).toEqual([expired.transaction_id])
  expect(yield* repo.list(agentId, "completed", now)).toEqual([
    { ...closed, ended_at: "2026-11-01T00:45:00.000Z", ended_by: "user-close" }
  ])
})

export const policies = Effect.gen(function* () {
  const repo = yield* PolicyRepo
  const orgId = uniqueId("org_pol")
  const agentId = uniqueId("agt-pol")
  const lone = uniqueId("agt-pol")
  yield* claimed(orgId, [agentId])
  const agent = agentPolicyOwner(agentId)
  const put = (owner: typeof agent, name: string, actor: string) =>
    repo.put(owner, { policy: policy(name), policyHash: policyHash(policy(name)), actor })

  expect(yield* repo.current(agent)).toBeUndefined()
  expect(yield* repo.remove(agent, "user-p")).toBeUndefined()
  const first = yield* put(agent, "v1", "user-p")
  expect(first.previous).toBeUndefined()
  expect(first.stored).toMatchObject({ scope: "agent", owner_id: agentId, version: 1, updated_by: "user-p" })
  expect(first.stored.policy).toEqual(policy("v1"))
  const second = yield* put(agent, "v2", "user-q")
  expect(second.previous).toEqual(first.stored)
  expect(second.stored.version).toBe(2)
  expect(yield* repo.current(agent)).toEqual(second.stored)

  // Taken out of force, kept in the history; the next version is numbered on.
  expect(yield* repo.remove(agent, "user-r")).toEqual(second.stored)
  expect(yield* repo.current(agent)).toBeUndefined()
  const third = yield* put(agent, "v3", "user-p")
  expect(third).toMatchObject({ previous: undefined, stored: { version: 3 } })
  const history = yield* repo.history(agent)
  expect(history.map((v) => [v.version, v.meta.name, v.deleted])).toEqual([
    [3, "v3", false],
    [2, "v2", true],
    [1, "v1", false]
  ])
  expect(history[0]!.policy_hash).toBe(policyHash(policy("v3")))

  // What the agent is subject to: its own and its organization's, with the organization's redaction.
  const org = yield* put(orgPolicyOwner(orgId), "org", "user-o")
  expect(yield* repo.forAgent(agentId)).toEqual({
    orgId,
    org: org.stored,
    agent: third.stored,
    evidenceRedaction: "none"
  })
  expect(yield* repo.forAgent(lone)).toEqual({
    orgId: null,
    org: undefined,
    agent: undefined,
    evidenceRedaction: "none"
  })

  // Every agent of the organization, in id order, with its own policy in force (none stored, or
  // the last one taken out of force: none).
  const [bare, removed] = [uniqueId("agt-pol"), uniqueId("agt-pol")]
  yield* claimed(orgId, [bare, removed])
  yield* put(agentPolicyOwner(removed), "gone", "user-p")
  yield* repo.remove(agentPolicyOwner(removed), "user-r")
  const expected = [
    { agentId, agent: third.stored },
    { agentId: bare, agent: undefined },
    { agentId: removed, agent: undefined }
  ].sort((x, y) => (x.agentId < y.agentId ? -1 : 1))
  expect(yield* repo.agentsOfOrg(orgId)).toEqual(expected)
  expect(yield* repo.agentsOfOrg(uniqueId("org_none"))).toEqual([])
  // The organization's policy taken out of force: the agent is subject to its own alone.
  yield* repo.remove(orgPolicyOwner(orgId), "user-o")
  expect(yield* repo.forAgent(agentId)).toMatchObject({ orgId, org: undefined, agent: third.stored })
})

export const riskAssessments = Effect.gen(function* () {
  const repo = yield* RiskRepo
  const agentId = uniqueId("agt-risk")
  const individual = (n: number): RiskAssessment =>
    ({
      assessment_id: `ra-${randomUUID()}`,
      agent_id: agentId,
      result: { risk_score: n / 10, risk_level: "low", decision: "approve" },
      assessed_at: `2026-11-0${n}T00:00:00.000Z`,
      key_id: "k",
      signature: "s"
    }) as unknown as RiskAssessment
  const assessments = [individual(2), individual(1), individual(3)]
  for (const record of assessments) yield* repo.save({ kind: "individual", record })
  const team = {
    assessment_id: `rta-${randomUUID()}`,
    agent_ids: [agentId, "agt-other"],
    assessed_at: "2026-11-04T00:00:00.000Z"
  } as unknown as TeamRiskAssessment
  yield* repo.save({ kind: "team", record: team })

  expect(yield* repo.get(assessments[0]!.assessment_id)).toEqual({ kind: "individual", record: assessments[0] })
  expect(yield* repo.get(team.assessment_id)).toEqual({ kind: "team", record: team })
  expect(yield* repo.get(`ra-${randomUUID()}`)).toBeUndefined()
  // The agent's own, newest first, paged; a team's assessment is not among them.
  expect(yield* repo.history(agentId, 2, 0)).toEqual({ items: [assessments[2], assessments[0]], total: 3 })
  expect(yield* repo.history(agentId, 2, 2)).toEqual({ items: [assessments[1]], total: 3 })
  expect(yield* repo.history("agt-other", 10, 0)).toEqual({ items: [], total: 0 })
})

export const riskViolations = Effect.gen(function* () {
  const repo = yield* RiskRepo
  const store = yield* Store
  const agentId = uniqueId("agt-risk-v")
  const { inputs } = makeInputs(agentId, fresh(agentId), 9)
  expect(yield* store.commitBatch(inputs)).toEqual({ _tag: "Committed" })
  const violations = inputs
    .map((input) => input.checkpoint)
    .filter((checkpoint) => checkpoint.verdict === "boundary_violation")
    .reverse()
  expect(violations.length).toBeGreaterThan(1)
  const since = violations.at(-1)!.timestamp
  const found = yield* repo.violations(agentId, since)
  expect(found.map((v) => v.occurred_at)).toEqual(violations.map((c) => c.timestamp))
  for (const v of found) expect(SEVERITIES).toContain(v.severity)
  // Only those at or after `since`.
  expect(yield* repo.violations(agentId, violations[0]!.timestamp)).toHaveLength(1)
  expect(yield* repo.violations(uniqueId("agt-risk-v"), since)).toEqual([])
})
