/**
 * Teams over HTTP: creation and its limits (2..50 agents, distinct, all of the organization, a name
 * unique among active teams ignoring case, metadata ≤ 16 KiB), reading, renaming, archiving (final,
 * idempotent, read-only afterwards), the roster and its history, listing, who may do what, team
 * cards (versions, history with RFC 6902 diffs, the derived card's worked example, derive not
 * persisting), and what each write leaves beside it: governance entries and outbox events.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { randomUUID } from "node:crypto"
import { GovernanceLog } from "../../adapters/store/GovernanceLog.js"
import { Store } from "../../adapters/store/Store.js"
import { teamCardHash } from "../../core/Commitments.js"
import { orgGovernanceLog } from "../../core/Governance.js"
import type { AlignmentCard } from "../../core/schema/Card.js"
import type { TeamCard } from "../../core/schema/TeamCard.js"
import { card as baseCard } from "../adapters/store/Fixtures.js"
import { outboxEvents } from "../support/EventOutbox.js"
import { ApiHarness, freshOrganization, layer as harness } from "./Support.js"

/** A new organization (the fixtures' owner, admin and member in it) with `agents` agents claimed into it. */
const freshOrg = (agents = 3) =>
  Effect.gen(function* () {
    const api = yield* ApiHarness
    const { owner } = api.fixtures
    const orgId = yield* freshOrganization("Teams")
    const agentIds: Array<string> = []
    for (let i = 0; i < agents; i++) agentIds.push(yield* api.claimAgent({ userId: owner.userId, orgId }))
    return { orgId, agentIds }
  })

const createTeam = (orgId: string, agentIds: ReadonlyArray<string>, extra: Record<string, unknown> = {}) =>
  Effect.gen(function* () {
    const api = yield* ApiHarness
    const res = yield* api.call("POST", "/v1/teams", {
      token: api.fixtures.owner.token,
      body: { org_id: orgId, name: `team-${randomUUID().slice(0, 8)}`, agent_ids: agentIds, ...extra }
    })
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    return res.body as { team: any; members: ReadonlyArray<any> }
  })

const teamCard = (declared: ReadonlyArray<string> = ["honesty"]): Record<string, unknown> => ({
  principal: { type: "organization", relationship: "delegated_authority" },
  values: { declared },
  autonomy_envelope: { bounded_actions: ["reply"], escalation_triggers: [] },
  audit_commitment: { retention_days: 30, queryable: true }
})

const teamEntries = (orgId: string) =>
  Effect.gen(function* () {
    const { entries } = yield* Effect.orDie((yield* GovernanceLog).entries(orgGovernanceLog(orgId), 0, 1000))
    return entries.filter((entry) => entry.record.action.startsWith("team.")).map((entry) => entry.record)
  })

const putAgentCard = (agentId: string, edit: (card: AlignmentCard) => AlignmentCard) =>
  Effect.flatMap(Store, (store) =>
    Effect.orDie(store.putCard(agentId, edit(baseCard(agentId, 90, `card-${randomUUID().slice(0, 8)}`))))
  )

layer(harness(), { timeout: "120 seconds" })("teams", (it) => {
  it.effect(
    "create: 201 {team, members}; read by every member of the organization; roster history of the founders",
    () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const { admin, member, owner } = api.fixtures
        const { agentIds, orgId } = yield* freshOrg(3)
        const res = yield* api.call("POST", "/v1/teams", {
          token: admin.token,
          body: {
            org_id: orgId,
            name: "  Support squad  ",
            description: "Front line",
            agent_ids: agentIds,
            metadata: { cost_center: 42 }
          }
        })
        expect(res.status).toBe(201)
        const team = res.body.team
        expect(team).toEqual({
          team_id: expect.stringMatching(/^team-[0-9a-f-]{36}$/),
          org_id: orgId,
          name: "Support squad",
          description: "Front line",
          status: "active",
          metadata: { cost_center: 42 },
          member_count: 3,
          created_at: expect.any(String),
          updated_at: team.created_at,
          archived_at: null
        })
        expect(res.body.members).toEqual(
          agentIds.map((agent_id) => ({ agent_id, agent_name: null, added_at: team.created_at, removed_at: null }))
        )
        for (const token of [owner.token, admin.token, member.token, api.serviceRoleKey]) {
          const read = yield* api.call("GET", `/v1/teams/${team.team_id}`, { token })
          expect(read.status).toBe(200)
          expect(read.body).toEqual(res.body)
        }
        const history = yield* api.call("GET", `/v1/teams/${team.team_id}/roster-history`, { token: member.token })
        expect(history.body).toEqual({
          team_id: team.team_id,
          changes: [...agentIds].reverse().map((agent_id) => ({
            change_type: "agent_added",
            agent_id,
            actor_id: admin.userId,
            created_at: team.created_at
          })),
          total: 3,
          limit: 100,
          offset: 0
        })
        const paged = yield* api.call("GET", `/v1/teams/${team.team_id}/roster-history?limit=1&offset=1`, {
          token: member.token
        })
        expect(paged.body.changes.map((c: any) => c.agent_id)).toEqual([agentIds[1]])
      })
  )

  it.effect("create refuses: fewer than 2 or more than 50 agents, duplicates, agents outside the organization", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { agentA, agentB, owner } = api.fixtures
      const { agentIds, orgId } = yield* freshOrg(2)
      const post = (body: Record<string, unknown>) =>
        api.call("POST", "/v1/teams", { token: owner.token, body: { org_id: orgId, name: "n", ...body } })
      const one = yield* post({ agent_ids: [agentIds[0]] })
      expect(one).toMatchObject({ status: 400, body: { error: "agent_ids: must list 2 to 50 agent ids" } })
      const many = yield* post({ agent_ids: Array.from({ length: 51 }, (_, i) => `agt-${i}`) })
      expect(many).toMatchObject({ status: 400, body: { error: "agent_ids: must list 2 to 50 agent ids" } })
      const twice = yield* post({ agent_ids: [agentIds[0], agentIds[1], agentIds[0]] })
      expect(twice).toMatchObject({ status: 400, body: { error: `agent_ids: duplicated ids: ${agentIds[0]}` } })
      // Another organization's agent, a personal agent and an unknown id are reported alike.
      const foreign = yield* post({ agent_ids: [agentIds[0], agentB, agentA, "agt-nobody"] })
      expect(foreign).toMatchObject({
        status: 400,
        body: { error: `agent_ids: not agents of organization ${orgId}: ${agentB}, ${agentA}, agt-nobody` }
      })
      const missing = yield* post({ agent_ids: undefined })
      expect(missing.status).toBe(400)
      expect(missing.body.error).toContain("agent_ids")
      const longName = yield* post({ name: "x".repeat(101), agent_ids: agentIds })
      expect(longName).toMatchObject({ status: 400, body: { error: "name: must be 1 to 100 characters" } })
      const bigMetadata = yield* post({ agent_ids: agentIds, metadata: { blob: "x".repeat(16 * 1024) } })
      expect(bigMetadata).toMatchObject({
        status: 400,
        body: { error: "metadata: must be at most 16384 bytes of JSON" }
      })
      const notObject = yield* post({ agent_ids: agentIds, metadata: [1] })
      expect(notObject.status).toBe(400)
      // Nothing was created by any of these.
      const list = yield* api.call("GET", `/v1/orgs/${orgId}/teams`, { token: owner.token })
      expect(list.body.total).toBe(0)
    })
  )

  it.effect("names are unique among active teams, ignoring case; an archived team's name is free again", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { owner } = api.fixtures
      const { agentIds, orgId } = yield* freshOrg(2)
      const first = yield* createTeam(orgId, agentIds, { name: "Red Team" })
      const clash = yield* api.call("POST", "/v1/teams", {
        token: owner.token,
        body: { org_id: orgId, name: "red team", agent_ids: agentIds }
      })
      expect(clash).toMatchObject({
        status: 409,
        body: { error: 'an active team named "red team" already exists in this organization' }
      })
      // Another organization may use it.
      const other = yield* freshOrg(2)
      yield* createTeam(other.orgId, other.agentIds, { name: "Red Team" })
      const second = yield* createTeam(orgId, agentIds, { name: "Blue" })
      const rename = yield* api.call("PATCH", `/v1/teams/${second.team.team_id}`, {
        token: owner.token,
        body: { name: "RED TEAM" }
      })
      expect(rename.status).toBe(409)
      // A team may change the case of its own name.
      const own = yield* api.call("PATCH", `/v1/teams/${first.team.team_id}`, {
        token: owner.token,
        body: { name: "RED team" }
      })
      expect(own.body.team.name).toBe("RED team")
      yield* api.call("DELETE", `/v1/teams/${first.team.team_id}`, { token: owner.token })
      yield* createTeam(orgId, agentIds, { name: "red team" })
    })
  )

  it.effect("PATCH changes name, description and metadata; a Member is refused (403)", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { admin, member } = api.fixtures
      const { agentIds, orgId } = yield* freshOrg(2)
      const { team } = yield* createTeam(orgId, agentIds, { description: "old", metadata: { a: 1 } })
      const path = `/v1/teams/${team.team_id}`
      const patched = yield* api.call("PATCH", path, {
        token: admin.token,
        body: { name: "Renamed", metadata: { b: 2 } }
      })
      expect(patched.status).toBe(200)
      expect(patched.body.team).toMatchObject({ name: "Renamed", description: "old", metadata: { b: 2 } })
      const cleared = yield* api.call("PATCH", path, { token: admin.token, body: { description: null } })
      expect(cleared.body.team.description).toBeNull()
      const refused = yield* api.call("PATCH", path, { token: member.token, body: { name: "Mine" } })
      expect(refused).toMatchObject({
        status: 403,
        body: { error: "this needs the admin role in the organization; you are member" }
      })
      const big = yield* api.call("PATCH", path, { token: admin.token, body: { metadata: { x: "y".repeat(17000) } } })
      expect(big.status).toBe(400)
      expect((yield* api.call("GET", path, { token: member.token })).body.team.name).toBe("Renamed")
    })
  )

  it.effect("who may do what: other organization 404, Member reads but may not write, unauthenticated 401", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { member, userB } = api.fixtures
      const { agentIds, orgId } = yield* freshOrg(3)
      const { team } = yield* createTeam(orgId, agentIds.slice(0, 2))
      const root = `/v1/teams/${team.team_id}`
      const notFound = { status: 404, body: { error: `team ${team.team_id} not found` } }
      for (const [method, path, body] of [
        ["GET", root, undefined],
        ["PATCH", root, { name: "x" }],
        ["DELETE", root, undefined],
        ["POST", `${root}/members`, { agent_ids: [agentIds[2]] }],
        ["DELETE", `${root}/members/${agentIds[0]}`, undefined],
        ["GET", `${root}/roster-history`, undefined],
        ["GET", `${root}/card`, undefined],
        ["PUT", `${root}/card`, { card_json: teamCard() }],
        ["POST", `${root}/card/derive`, undefined],
        ["GET", `${root}/card/history`, undefined]
      ] as const) {
        expect(yield* api.call(method, path, { token: userB.token, body }), `${method} ${path}`).toMatchObject(notFound)
        expect((yield* api.call(method, path, { body })).status, `${method} ${path} anonymous`).toBe(401)
      }
      const unknown = yield* api.call("GET", `/v1/teams/team-${randomUUID()}`, { token: member.token })
      expect(unknown.status).toBe(404)
      expect((yield* api.call("GET", `/v1/orgs/${orgId}/teams`, { token: userB.token })).status).toBe(404)
      const intoOther = yield* api.call("POST", "/v1/teams", {
        token: userB.token,
        body: { org_id: orgId, name: "n", agent_ids: agentIds }
      })
      expect(intoOther).toMatchObject({ status: 404, body: { error: `organization ${orgId} not found` } })
      const byMember = yield* api.call("POST", "/v1/teams", {
        token: member.token,
        body: { org_id: orgId, name: "n", agent_ids: agentIds }
      })
      expect(byMember.status).toBe(403)
      const memberKey = yield* api.createApiKey(api.fixtures.owner.userId, { orgId, role: "member" })
      expect((yield* api.call("GET", root, { apiKey: memberKey })).status).toBe(200)
      expect((yield* api.call("PATCH", root, { apiKey: memberKey, body: { name: "k" } })).status).toBe(403)
      const adminKey = yield* api.createApiKey(api.fixtures.owner.userId, { orgId, role: "admin" })
      expect((yield* api.call("PATCH", root, { apiKey: adminKey, body: { name: "by key" } })).status).toBe(200)
      const service = yield* api.call("POST", "/v1/teams", {
        token: api.serviceRoleKey,
        body: { org_id: orgId, name: "by service", agent_ids: agentIds }
      })
      expect(service.status).toBe(201)
      const noOrg = yield* api.call("POST", "/v1/teams", {
        token: api.serviceRoleKey,
        body: { org_id: `org_${randomUUID()}`, name: "n", agent_ids: agentIds }
      })
      expect(noOrg.status).toBe(404)
    })
  )

  it.effect(
    "members: add (some already in), exceed 50 (400), remove, keep at least 2 (400), remove a non-member (404)",
    () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const { owner } = api.fixtures
        const { agentIds, orgId } = yield* freshOrg(5)
        const [a, b, c, d, e] = agentIds as [string, string, string, string, string]
        const { team } = yield* createTeam(orgId, [a, b])
        const root = `/v1/teams/${team.team_id}`
        const added = yield* api.call("POST", `${root}/members`, { token: owner.token, body: { agent_ids: [c, a, d] } })
        expect(added.status).toBe(200)
        expect(added.body.added.map((m: any) => m.agent_id)).toEqual([c, d])
        expect(added.body.added[0]).toMatchObject({ agent_name: null, removed_at: null })
        expect(added.body.already_members).toEqual([a])
        expect(added.body.members.map((m: any) => m.agent_id)).toEqual([a, b, c, d])
        // A name given to an agent is its member's name, in the lists and when it leaves.
        const named = yield* api.call("PATCH", `/v1/agents/${c}`, {
          token: owner.token,
          body: { display_name: "Billing Bot" }
        })
        expect(named.status).toBe(200)
        const listed = yield* api.call("GET", root, { token: owner.token })
        expect(listed.body.members.find((m: any) => m.agent_id === c)).toMatchObject({ agent_name: "Billing Bot" })
        const dup = yield* api.call("POST", `${root}/members`, { token: owner.token, body: { agent_ids: [e, e] } })
        expect(dup).toMatchObject({ status: 400, body: { error: `agent_ids: duplicated ids: ${e}` } })
        const none = yield* api.call("POST", `${root}/members`, { token: owner.token, body: { agent_ids: [] } })
        expect(none).toMatchObject({ status: 400, body: { error: "agent_ids: must list 1 to 50 agent ids" } })
        const foreign = yield* api.call("POST", `${root}/members`, {
          token: owner.token,
          body: { agent_ids: [api.fixtures.agentB] }
        })
        expect(foreign.status).toBe(400)
        expect(foreign.body.error).toContain(api.fixtures.agentB)

        const removed = yield* api.call("DELETE", `${root}/members/${c}`, { token: owner.token })
        expect(removed.status).toBe(200)
        expect(removed.body.removed).toMatchObject({ agent_id: c, agent_name: "Billing Bot" })
        expect(removed.body.removed).toMatchObject({ agent_id: c, removed_at: expect.any(String) })
        expect(removed.body.members.map((m: any) => m.agent_id)).toEqual([a, b, d])
        const again = yield* api.call("DELETE", `${root}/members/${c}`, { token: owner.token })
        expect(again).toMatchObject({
          status: 404,
          body: { error: `agent ${c} is not a member of team ${team.team_id}` }
        })
        yield* api.call("DELETE", `${root}/members/${d}`, { token: owner.token })
        const last = yield* api.call("DELETE", `${root}/members/${b}`, { token: owner.token })
        expect(last.status).toBe(400)
        expect(last.body.error).toContain("at least 2 members")
        // Back again: a new membership; the roster history has every step, newest first.
        yield* api.call("POST", `${root}/members`, { token: owner.token, body: { agent_ids: [c] } })
        const history = yield* api.call("GET", `${root}/roster-history`, { token: owner.token })
        expect(history.body.changes.map((ch: any) => [ch.change_type, ch.agent_id])).toEqual([
          ["agent_added", c],
          ["agent_removed", d],
          ["agent_removed", c],
          ["agent_added", d],
          ["agent_added", c],
          ["agent_added", b],
          ["agent_added", a]
        ])
        const got = yield* api.call("GET", root, { token: owner.token })
        expect(got.body.team.member_count).toBe(3)
        // An agent may be in several teams at once.
        const other = yield* createTeam(orgId, [a, b])
        expect(other.members.map((m: any) => m.agent_id)).toEqual([a, b])
      })
  )

  it.effect("a team holds at most 50 agents: adding past it is 400", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { agentIds, orgId } = yield* freshOrg(52)
      const { team } = yield* createTeam(orgId, agentIds.slice(0, 50))
      expect(team.member_count).toBe(50)
      const over = yield* api.call("POST", `/v1/teams/${team.team_id}/members`, {
        token: api.fixtures.owner.token,
        body: { agent_ids: agentIds.slice(50) }
      })
      expect(over).toMatchObject({
        status: 400,
        body: { error: "agent_ids: a team has at most 50 members; it has 50, adding 2 would make 52" }
      })
      // Already a member only: nothing to add, not over the limit.
      const same = yield* api.call("POST", `/v1/teams/${team.team_id}/members`, {
        token: api.fixtures.owner.token,
        body: { agent_ids: [agentIds[0]] }
      })
      expect(same).toMatchObject({ status: 200, body: { added: [], already_members: [agentIds[0]] } })
    })
  )

  it.effect("archive: status archived with archived_at, idempotent, final, and every write after it is 409", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { member, owner } = api.fixtures
      const { agentIds, orgId } = yield* freshOrg(3)
      const { team } = yield* createTeam(orgId, agentIds.slice(0, 2))
      const root = `/v1/teams/${team.team_id}`
      yield* api.call("PUT", `${root}/card`, { token: owner.token, body: { card_json: teamCard() } })
      expect((yield* api.call("DELETE", root, { token: member.token })).status).toBe(403)
      const archived = yield* api.call("DELETE", root, { token: owner.token })
      expect(archived.status).toBe(200)
      expect(archived.body.team).toMatchObject({ status: "archived", archived_at: expect.any(String) })
      expect(archived.body.members).toHaveLength(2)
      const again = yield* api.call("DELETE", root, { token: owner.token })
      expect(again.status).toBe(200)
      expect(again.body).toEqual(archived.body)
      const conflict = { status: 409, body: { error: `team ${team.team_id} is archived` } }
      for (const [method, path, body] of [
        ["PATCH", root, { name: "back" }],
        ["POST", `${root}/members`, { agent_ids: [agentIds[2]] }],
        ["DELETE", `${root}/members/${agentIds[0]}`, undefined],
        ["PUT", `${root}/card`, { card_json: teamCard() }]
      ] as const) {
        expect(yield* api.call(method, path, { token: owner.token, body }), `${method} ${path}`).toMatchObject(conflict)
      }
      // Reads still answer.
      expect((yield* api.call("GET", root, { token: member.token })).body.team.status).toBe("archived")
      expect((yield* api.call("GET", `${root}/card`, { token: member.token })).status).toBe(200)
      expect((yield* api.call("GET", `${root}/card/history`, { token: member.token })).body.total).toBe(1)
      const events = yield* outboxEvents({ orgId, type: "team.archived" })
      expect(events.map((e) => e.data)).toEqual([{ team_id: team.team_id, org_id: orgId, name: team.name }])
      expect((yield* teamEntries(orgId)).filter((r) => r.action === "team.archive")).toHaveLength(1)
    })
  )

  it.effect("GET /v1/orgs/{org_id}/teams: both statuses by default, ?status filters, paged, oldest first", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { member, owner } = api.fixtures
      const { agentIds, orgId } = yield* freshOrg(2)
      const one = yield* createTeam(orgId, agentIds)
      const two = yield* createTeam(orgId, agentIds)
      const three = yield* createTeam(orgId, agentIds)
      yield* api.call("DELETE", `/v1/teams/${two.team.team_id}`, { token: owner.token })
      const ids = (body: any) => body.teams.map((t: any) => t.team_id)
      const all = yield* api.call("GET", `/v1/orgs/${orgId}/teams`, { token: member.token })
      expect(all.body).toMatchObject({ org_id: orgId, total: 3, limit: 100, offset: 0 })
      expect(ids(all.body)).toEqual([one.team.team_id, two.team.team_id, three.team.team_id])
      const active = yield* api.call("GET", `/v1/orgs/${orgId}/teams?status=active`, { token: member.token })
      expect(ids(active.body)).toEqual([one.team.team_id, three.team.team_id])
      expect(active.body.total).toBe(2)
      const archived = yield* api.call("GET", `/v1/orgs/${orgId}/teams?status=archived`, { token: member.token })
      expect(ids(archived.body)).toEqual([two.team.team_id])
      const page = yield* api.call("GET", `/v1/orgs/${orgId}/teams?limit=1&offset=2`, { token: member.token })
      expect(ids(page.body)).toEqual([three.team.team_id])
      expect(page.body.total).toBe(3)
      const bad = yield* api.call("GET", `/v1/orgs/${orgId}/teams?status=gone`, { token: member.token })
      expect(bad.status).toBe(400)
      expect(bad.body.error).toContain("status")
      expect((yield* api.call("GET", `/v1/orgs/${orgId}/teams?limit=0`, { token: member.token })).status).toBe(400)
    })
  )

  it.effect("team cards: 404 before any; PUT makes a new active version each time; history with JSON Patch diffs", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { admin, member, owner } = api.fixtures
      const { agentIds, orgId } = yield* freshOrg(2)
      const { team } = yield* createTeam(orgId, agentIds)
      const root = `/v1/teams/${team.team_id}/card`
      expect(yield* api.call("GET", root, { token: member.token })).toMatchObject({
        status: 404,
        body: { error: `team ${team.team_id} has no card` }
      })
      const first = yield* api.call("PUT", root, {
        token: owner.token,
        body: { card_json: { ...teamCard(), team_mission: "Answer customers", coordination_mode: "collaborative" } }
      })
      expect(first.status).toBe(200)
      expect(first.body).toEqual({
        card_id: expect.stringMatching(/^tcard-[0-9a-f-]{36}$/),
        team_id: team.team_id,
        version: 1,
        card_json: {
          aap_version: "0.5.0",
          ...teamCard(),
          audit_commitment: { trace_format: "ap-trace-v1", retention_days: 30, queryable: true },
          team_mission: "Answer customers",
          coordination_mode: "collaborative"
        },
        card_source: "manual",
        issued_at: expect.any(String),
        is_active: true
      })
      const second = yield* api.call("PUT", root, {
        token: admin.token,
        body: {
          card_json: { ...first.body.card_json, values: { declared: ["honesty", "privacy"] }, team_id: team.team_id },
          card_source: "hybrid"
        }
      })
      expect(second.body).toMatchObject({ version: 2, card_source: "hybrid", is_active: true })
      expect((yield* api.call("GET", root, { token: member.token })).body).toEqual(second.body)

      const history = yield* api.call("GET", `${root}/history`, { token: member.token })
      expect(history.status).toBe(200)
      expect(history.body).toMatchObject({ team_id: team.team_id, total: 2, limit: 100, offset: 0 })
      const [v2, v1] = history.body.versions
      expect(v2).toEqual({
        version: 2,
        card_id: second.body.card_id,
        card_source: "hybrid",
        issued_at: second.body.issued_at,
        is_active: true,
        actor_id: admin.userId,
        diff: [
          { op: "add", path: "/team_id", value: team.team_id },
          { op: "add", path: "/values/declared/1", value: "privacy" }
        ]
      })
      expect(v1).toMatchObject({ version: 1, is_active: false, actor_id: owner.userId, card_source: "manual" })
      // The first version's diff is from {}: one add per member of the card.
      expect(v1.diff.every((op: any) => op.op === "add")).toBe(true)
      expect(Object.fromEntries(v1.diff.map((op: any) => [op.path.slice(1), op.value]))).toEqual(first.body.card_json)
      // A page's oldest version is still diffed against the one before it.
      const paged = yield* api.call("GET", `${root}/history?limit=1&offset=0`, { token: member.token })
      expect(paged.body.versions).toEqual([v2])

      const events = yield* outboxEvents({ orgId, type: "team.card_updated" })
      expect(events.map((e) => e.data)).toEqual([
        { team_id: team.team_id, card_id: first.body.card_id, card_source: "manual", actor_id: owner.userId },
        { team_id: team.team_id, card_id: second.body.card_id, card_source: "hybrid", actor_id: admin.userId }
      ])
      const puts = (yield* teamEntries(orgId)).filter((r) => r.action === "team.card_put")
      expect(puts.map((r) => r.hashes.card_hash)).toEqual([
        teamCardHash(first.body.card_json as TeamCard),
        teamCardHash(second.body.card_json as TeamCard)
      ])
      expect(puts[1]!.previous_state).toMatchObject({ version: 1, card_hash: puts[0]!.hashes.card_hash })
    })
  )

  it.effect("team card bodies: the four parts are required, no agent_id, team_id of the path, Member 403", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { member, owner } = api.fixtures
      const { agentIds, orgId } = yield* freshOrg(2)
      const { team } = yield* createTeam(orgId, agentIds)
      const put = (body: unknown, token = owner.token) =>
        api.call("PUT", `/v1/teams/${team.team_id}/card`, { token, body })
      for (const part of ["principal", "values", "autonomy_envelope", "audit_commitment"]) {
        const { [part]: _dropped, ...rest } = teamCard()
        const res = yield* put({ card_json: rest })
        expect(res.status, part).toBe(400)
        expect(res.body.error, part).toContain(part)
      }
      const noDeclared = yield* put({ card_json: { ...teamCard(), values: {} } })
      expect(noDeclared.status).toBe(400)
      expect(noDeclared.body.error).toContain("declared")
      const withAgent = yield* put({ card_json: { ...teamCard(), agent_id: agentIds[0] } })
      expect(withAgent.status).toBe(400)
      expect(withAgent.body.error).toContain("a team card has no agent_id")
      const otherTeam = yield* put({ card_json: { ...teamCard(), team_id: "team-other" } })
      expect(otherTeam.status).toBe(400)
      expect(otherTeam.body.error).toContain("card_json.team_id")
      const mode = yield* put({ card_json: { ...teamCard(), coordination_mode: "anarchic" } })
      expect(mode.status).toBe(400)
      expect(mode.body.error).toContain("coordination_mode")
      const source = yield* put({ card_json: teamCard(), card_source: "guessed" })
      expect(source.status).toBe(400)
      const huge = yield* put({ card_json: { ...teamCard(), extensions: { blob: "x".repeat(70 * 1024) } } })
      expect(huge).toMatchObject({ status: 400, body: { error: "card_json: must be at most 65536 bytes of JSON" } })
      expect((yield* put({ card_json: teamCard() }, member.token)).status).toBe(403)
      expect(
        (yield* api.call("GET", `/v1/teams/${team.team_id}/card/history`, { token: owner.token })).body.total
      ).toBe(0)
    })
  )

  it.effect("derive: the worked example; needs 2 members with cards; does not persist; PUT back as auto_derived", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { member, owner } = api.fixtures
      const { agentIds, orgId } = yield* freshOrg(4)
      const [a1, a2, a3, a4] = agentIds as [string, string, string, string]
      const { team } = yield* createTeam(orgId, [a1, a2, a3, a4])
      const derive = () => api.call("POST", `/v1/teams/${team.team_id}/card/derive`, { token: member.token })

      yield* putAgentCard(a1, (c) => ({
        ...c,
        principal: { type: "human", relationship: "delegated_authority", escalation_contact: "ops@example.test" },
        values: { declared: ["honesty", "transparency", "privacy"], conflicts_with: ["deception"] },
        autonomy_envelope: {
          bounded_actions: ["reply", "search"],
          forbidden_actions: ["delete_data"],
          escalation_triggers: [{ condition: "amount > 100", action: "escalate", reason: "large" }]
        },
        audit_commitment: { trace_format: "ap-trace-v1", retention_days: 90, queryable: true }
      }))
      const tooFew = yield* derive()
      expect(tooFew).toMatchObject({
        status: 400,
        body: { error: `team ${team.team_id} has 1 member(s) with a card; deriving needs at least 2` }
      })
      yield* putAgentCard(a2, (c) => ({
        ...c,
        principal: { type: "organization", relationship: "advisory" },
        values: { declared: ["privacy", "honesty", "fairness"], conflicts_with: ["manipulation", "deception"] },
        autonomy_envelope: {
          bounded_actions: ["reply", "summarize"],
          forbidden_actions: ["send_email", "delete_data"],
          escalation_triggers: [
            { condition: "pii detected", action: "deny", reason: "privacy" },
            { condition: "amount > 100", action: "escalate", reason: "large" }
          ]
        },
        audit_commitment: { trace_format: "ap-trace-v1", retention_days: 365, queryable: false }
      }))
      yield* putAgentCard(a3, (c) => ({
        ...c,
        values: { declared: ["honesty", "minimal_data"] },
        audit_commitment: { trace_format: "ap-trace-v1", retention_days: 30, queryable: true }
      }))
      // a4 has no card.
      const derived = yield* derive()
      expect(derived.status).toBe(200)
      expect(derived.body).toEqual({
        derived_card: {
          aap_version: "0.5.0",
          team_id: team.team_id,
          principal: {
            type: "organization",
            identifier: orgId,
            relationship: "delegated_authority",
            escalation_contact: "ops@example.test"
          },
          values: {
            declared: ["honesty", "privacy", "fairness", "minimal_data", "transparency"],
            conflicts_with: ["deception", "manipulation"]
          },
          autonomy_envelope: {
            bounded_actions: ["reply", "search", "summarize"],
            forbidden_actions: ["delete_data", "send_email"],
            escalation_triggers: [
              { condition: "amount > 100", action: "escalate", reason: "large" },
              { condition: "pii detected", action: "deny", reason: "privacy" }
            ]
          },
          audit_commitment: { trace_format: "ap-trace-v1", retention_days: 365, queryable: false }
        },
        member_count: 4,
        members_with_cards: 3
      })
      // Nothing stored, nothing sent.
      expect((yield* api.call("GET", `/v1/teams/${team.team_id}/card`, { token: member.token })).status).toBe(404)
      expect(yield* outboxEvents({ orgId, type: "team.card_updated" })).toEqual([])
      const put = yield* api.call("PUT", `/v1/teams/${team.team_id}/card`, {
        token: owner.token,
        body: { card_json: derived.body.derived_card, card_source: "auto_derived" }
      })
      expect(put.status).toBe(200)
      expect(put.body).toMatchObject({ version: 1, card_source: "auto_derived", card_json: derived.body.derived_card })
      // A removed member's card no longer counts.
      yield* api.call("DELETE", `/v1/teams/${team.team_id}/members/${a2}`, { token: owner.token })
      const after = yield* derive()
      expect(after.body).toMatchObject({ member_count: 3, members_with_cards: 2 })
      expect(after.body.derived_card.audit_commitment.retention_days).toBe(90)
    })
  )

  it.effect("every write: one governance entry on the organization's log and its events in the outbox", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { owner } = api.fixtures
      const { agentIds, orgId } = yield* freshOrg(4)
      const [a, b, c, d] = agentIds as [string, string, string, string]
      const { team } = yield* createTeam(orgId, [a, b])
      const root = `/v1/teams/${team.team_id}`
      yield* api.call("PATCH", root, { token: owner.token, body: { description: "new" } })
      yield* api.call("POST", `${root}/members`, { token: owner.token, body: { agent_ids: [c, d] } })
      // Only an agent already in it: nothing changes, nothing is recorded.
      yield* api.call("POST", `${root}/members`, { token: owner.token, body: { agent_ids: [a] } })
      yield* api.call("DELETE", `${root}/members/${c}`, { token: owner.token })
      yield* api.call("PUT", `${root}/card`, { token: owner.token, body: { card_json: teamCard() } })
      yield* api.call("DELETE", root, { token: owner.token })
      yield* api.call("DELETE", root, { token: owner.token })

      const records = yield* teamEntries(orgId)
      expect(records.map((r) => r.action)).toEqual([
        "team.create",
        "team.update",
        "team.member_add",
        "team.member_remove",
        "team.card_put",
        "team.archive"
      ])
      expect(records.every((r) => r.actor === owner.userId)).toBe(true)
      expect(records[0]!.new_state).toEqual({
        team_id: team.team_id,
        name: team.name,
        status: "active",
        agent_ids: [a, b]
      })
      expect(records[2]!.new_state).toMatchObject({ agent_ids: [a, b, c, d], added: [c, d] })
      expect(records[3]!.new_state).toMatchObject({ agent_ids: [a, b, d], removed: c })
      expect(records[4]!.hashes.card_hash).toMatch(/^[0-9a-f]{64}$/)
      expect(records[5]!.new_state).toMatchObject({ status: "archived" })

      const events = (yield* outboxEvents({ orgId })).filter((e) => e.type.startsWith("team."))
      expect(events.map((e) => [e.type, e.agent_id ?? null])).toEqual([
        ["team.created", null],
        ["team.member_added", c],
        ["team.member_added", d],
        ["team.member_removed", c],
        ["team.card_updated", null],
        ["team.archived", null]
      ])
      expect(events[0]!.data).toEqual({
        team_id: team.team_id,
        org_id: orgId,
        name: team.name,
        member_count: 2,
        agent_ids: [a, b]
      })
      expect(events[1]!.data).toEqual({ team_id: team.team_id, agent_id: c, actor_id: owner.userId, member_count: 4 })
      expect(events[3]!.data).toEqual({ team_id: team.team_id, agent_id: c, actor_id: owner.userId, member_count: 3 })
      expect(new Set(events.map((e) => e.id)).size).toBe(events.length)
    })
  )

  it.effect("a write that fails leaves nothing: no team, no entry, no event", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { agentIds, orgId } = yield* freshOrg(2)
      yield* createTeam(orgId, agentIds, { name: "Taken" })
      const before = (yield* outboxEvents({ orgId })).length
      const entries = (yield* teamEntries(orgId)).length
      const clash = yield* api.call("POST", "/v1/teams", {
        token: api.fixtures.owner.token,
        body: { org_id: orgId, name: "TAKEN", agent_ids: agentIds }
      })
      expect(clash.status).toBe(409)
      expect((yield* outboxEvents({ orgId })).length).toBe(before)
      expect((yield* teamEntries(orgId)).length).toBe(entries)
    })
  )
})
