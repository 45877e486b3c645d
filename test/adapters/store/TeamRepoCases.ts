/**
 * The team repository's cases, run in the repository conformance suite (RepositoryConformance.ts)
 * on PGlite and PostgreSQL: concurrent creations of one name under the organization's row lock
 * (exactly one wins, as the API decides it), the unique index behind it, membership periods read
 * back at any time (`membersAt`), the roster history in order, concurrent card versions (distinct,
 * consecutive, one active), the history's diffs, and the members' active cards.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { expect } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { randomUUID } from "node:crypto"
import { Store } from "../../../adapters/store/Store.js"
import * as TeamRepo from "../../../adapters/store/TeamRepo.js"
import { transaction } from "../../../adapters/store/Transaction.js"
import type { TeamCard } from "../../../core/schema/TeamCard.js"
import { card } from "./Fixtures.js"

const newOrg = (agents: number) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const orgId = `org_${randomUUID()}`
    yield* sql`
      insert into orgs (org_id, name, slug, billing_account_id, owner_user_id)
      values (${orgId}, 'Org', ${orgId}, 'ba', 'owner')`
    const agentIds = Array.from({ length: agents }, () => `agt-${randomUUID()}`)
    for (const agentId of agentIds) {
      yield* sql`insert into agent_claims (agent_id, agent_hash, user_id, org_id) values (${agentId}, 'h', 'owner', ${orgId})`
    }
    return { orgId, agentIds }
  })

const teamCard = (declared: ReadonlyArray<string>): TeamCard => ({
  aap_version: "0.5.0",
  principal: { type: "organization", relationship: "delegated_authority" },
  values: { declared },
  autonomy_envelope: { bounded_actions: ["reply"], escalation_triggers: [] },
  audit_commitment: { trace_format: "ap-trace-v1", retention_days: 30, queryable: true }
})

const iso = (ms: number) => new Date(ms).toISOString()

export const concurrentCreations = Effect.gen(function* () {
  const repo = yield* TeamRepo.TeamRepo
  const sql = yield* SqlClient.SqlClient
  const { agentIds, orgId } = yield* newOrg(2)
  const attempt = (i: number) =>
    transaction(
      sql,
      Effect.gen(function* () {
        expect(yield* repo.lockOrg(orgId)).toBe(true)
        if (yield* repo.nameTaken(orgId, i % 2 === 0 ? "Ops" : "OPS")) return false
        const teamId = `team-${randomUUID()}`
        yield* repo.create(
          { team_id: teamId, org_id: orgId, name: "Ops", description: null, metadata: {} },
          agentIds,
          "u",
          iso(0)
        )
        return true
      })
    )
  const results = yield* Effect.all(
    Array.from({ length: 8 }, (_, i) => attempt(i)),
    { concurrency: "unbounded" }
  )
  expect(results.filter(Boolean)).toHaveLength(1)
  const listed = yield* repo.list(orgId, "active", 10, 0)
  expect(listed.total).toBe(1)
  expect(listed.items[0]).toMatchObject({ name: "Ops", member_count: 2, status: "active" })
  const duplicate = yield* Effect.either(
    repo.create(
      { team_id: `team-${randomUUID()}`, org_id: orgId, name: "oPs", description: null, metadata: {} },
      agentIds,
      "u",
      iso(0)
    )
  )
  expect(duplicate._tag).toBe("Left")
  expect(yield* repo.lockOrg(`org_${randomUUID()}`)).toBe(false)
})

export const membershipPeriods = Effect.gen(function* () {
  const repo = yield* TeamRepo.TeamRepo
  const { agentIds, orgId } = yield* newOrg(3)
  const [a, b, c] = agentIds as [string, string, string]
  expect([...(yield* repo.agentsOfOrg(orgId, [a, "agt-elsewhere", c]))].sort()).toEqual([a, c].sort())
  const teamId = `team-${randomUUID()}`
  yield* repo.create(
    { team_id: teamId, org_id: orgId, name: "T", description: "d", metadata: { k: [1] } },
    [a, b],
    "u1",
    iso(1_000)
  )
  const added = yield* repo.addMembers(teamId, [c], "u2", iso(2_000))
  expect(added.map((x) => x.agent_id)).toEqual([c])
  const removed = yield* repo.removeMember(teamId, a, "u3", iso(3_000))
  expect(removed?.member).toEqual({ agent_id: a, agent_name: null, added_at: iso(1_000), removed_at: iso(3_000) })
  expect(yield* repo.removeMember(teamId, a, "u3", iso(3_500))).toBeUndefined()
  yield* repo.addMembers(teamId, [a], "u4", iso(4_000))

  expect(yield* repo.membersAt(teamId, iso(500))).toEqual([])
  expect(yield* repo.membersAt(teamId, iso(1_500))).toEqual([a, b].sort())
  expect(yield* repo.membersAt(teamId, iso(2_500))).toEqual([a, b, c].sort())
  expect(yield* repo.membersAt(teamId, iso(3_000))).toEqual([b, c].sort())
  expect(yield* repo.membersAt(teamId, iso(4_000))).toEqual([a, b, c].sort())

  const history = yield* repo.rosterHistory(teamId, 10, 0)
  expect(history.total).toBe(5)
  expect(history.items.map((ch) => [ch.change_type, ch.agent_id, ch.actor_id])).toEqual([
    ["agent_added", a, "u4"],
    ["agent_removed", a, "u3"],
    ["agent_added", c, "u2"],
    ["agent_added", b, "u1"],
    ["agent_added", a, "u1"]
  ])
  const got = yield* repo.get(teamId)
  expect(got?.team).toMatchObject({
    member_count: 3,
    description: "d",
    metadata: { k: [1] },
    updated_at: iso(4_000)
  })
  expect(got?.members.map((m) => m.agent_id)).toEqual([b, c, a])

  const other = `team-${randomUUID()}`
  yield* repo.create(
    { team_id: other, org_id: orgId, name: "U", description: null, metadata: {} },
    [a, c],
    "u",
    iso(5_000)
  )
  expect(yield* repo.teamsOfAgent(a)).toEqual([teamId, other].sort())
  expect(yield* repo.teamsOfAgent(b)).toEqual([teamId])
  yield* repo.archive(other, iso(6_000))
  const archived = yield* repo.get(other)
  expect(archived?.team).toMatchObject({ status: "archived", archived_at: iso(6_000) })
  // An archived team's name may be taken again.
  expect(yield* repo.nameTaken(orgId, "u")).toBe(false)
  expect(yield* repo.nameTaken(orgId, "t")).toBe(true)
  expect(yield* repo.nameTaken(orgId, "t", teamId)).toBe(false)
})

export const cardVersions = Effect.gen(function* () {
  const repo = yield* TeamRepo.TeamRepo
  const sql = yield* SqlClient.SqlClient
  const store = yield* Store
  const { agentIds, orgId } = yield* newOrg(3)
  const teamId = `team-${randomUUID()}`
  yield* repo.create(
    { team_id: teamId, org_id: orgId, name: "C", description: null, metadata: {} },
    agentIds,
    "u",
    iso(0)
  )
  const put = (i: number) =>
    transaction(
      sql,
      Effect.gen(function* () {
        yield* repo.lockOrg(orgId)
        yield* repo.lock(teamId)
        return yield* repo.putCard(teamId, teamCard([`v${i}`]), "manual", `tcard-${randomUUID()}`, `u${i}`, iso(i))
      })
    )
  const records = yield* Effect.all(
    Array.from({ length: 10 }, (_, i) => put(i)),
    { concurrency: "unbounded" }
  )
  expect(records.map((r) => r.version).sort((x, y) => x - y)).toEqual(Array.from({ length: 10 }, (_, i) => i + 1))
  const [active] = yield* sql<{
    n: unknown
  }>`select count(*) as n from team_cards where team_id = ${teamId} and active`
  expect(Number(active!.n)).toBe(1)
  const newest = records.find((r) => r.version === 10)!
  expect(yield* repo.activeCard(teamId)).toEqual(newest)

  const history = yield* repo.cardHistory(teamId, 3, 0)
  expect(history.total).toBe(10)
  expect(history.items.map((v) => [v.version, v.is_active])).toEqual([
    [10, true],
    [9, false],
    [8, false]
  ])
  const byVersion = new Map(records.map((r) => [r.version, r]))
  for (const item of history.items) {
    expect(item.diff).toEqual([
      {
        op: "replace",
        path: "/values/declared/0",
        value: byVersion.get(item.version)!.card_json.values.declared[0]
      }
    ])
    expect(item.actor_id).toBe(`u${byVersion.get(item.version)!.card_json.values.declared[0]!.slice(1)}`)
  }
  const first = yield* repo.cardHistory(teamId, 5, 9)
  expect(first.items.map((v) => v.version)).toEqual([1])
  expect(first.items[0]!.diff.map((op) => op.op)).toEqual(["add", "add", "add", "add", "add"])

  // Active agent cards of current members only.
  yield* store.putCard(agentIds[0]!, card(agentIds[0]!, 30, "c-0"))
  yield* store.putCard(agentIds[1]!, card(agentIds[1]!, 30, "c-1"))
  yield* store.putCard(agentIds[1]!, card(agentIds[1]!, 60, "c-1b"))
  const cards = yield* repo.memberCards(teamId)
  expect(cards.map((c) => [c.agent_id, c.card.card_id])).toEqual(
    [
      [agentIds[0], "c-0"],
      [agentIds[1], "c-1b"]
    ].sort(([x], [y]) => (x! < y! ? -1 : 1))
  )
  yield* repo.removeMember(teamId, agentIds[0]!, "u", iso(100))
  expect((yield* repo.memberCards(teamId)).map((c) => c.agent_id)).toEqual([agentIds[1]])
})
