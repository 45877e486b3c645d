/**
 * The trust edge API over HTTP: create (201, the governance entry on the source's log), the 400s
 * naming their field, the target that must exist and be readable (404 otherwise), one active edge
 * per pair (409; delete and recreate to change a level), listing by direction with incoming edges
 * from agents the caller cannot read, delete (soft, only by the source, its governance entry), and
 * who may do what (Owner/Admin write, Member reads, keys by role, service-role key, impersonation).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { GovernanceLog } from "../../adapters/store/GovernanceLog.js"
import { agentGovernanceLog } from "../../core/Governance.js"
import { ApiHarness, type CallOptions, layer as harness } from "./Support.js"

const TE_ID = /^te-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** A new agent of the fixtures' organization (readable by its members, writable by its Owner and Admin). */
const orgAgent = Effect.flatMap(ApiHarness, (api) =>
  api.claimAgent({ userId: api.fixtures.owner.userId, orgId: api.fixtures.orgId })
)

const post = (source: string, body: unknown, who: CallOptions) =>
  Effect.flatMap(ApiHarness, (api) => api.call("POST", `/v1/agents/${source}/trust-edges`, { ...who, body }))

const governanceActions = (agentId: string) =>
  Effect.flatMap(GovernanceLog, (logs) => logs.entries(agentGovernanceLog(agentId), 0, 100)).pipe(
    Effect.orDie,
    Effect.map((page) => page.entries.map((entry) => entry.record))
  )

layer(harness(), { timeout: "120 seconds" })("trust edges API", (it) => {
  it.effect("an Admin creates an edge: 201, a te- id, and a trust_edge.create entry on the source's log", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const [source, target] = [yield* orgAgent, yield* orgAgent]
      const created = yield* post(
        source,
        { target_agent_id: target, trust_level: "high", reason: "  reviewed its traces  " },
        { token: api.fixtures.admin.token }
      )
      expect(created.status).toBe(201)
      expect(Object.keys(created.body).sort()).toEqual(
        ["created_at", "id", "reason", "source_agent_id", "target_agent_id", "trust_level"].sort()
      )
      expect(created.body).toMatchObject({
        source_agent_id: source,
        target_agent_id: target,
        trust_level: "high",
        reason: "reviewed its traces"
      })
      expect(created.body.id).toMatch(TE_ID)
      const records = yield* governanceActions(source)
      expect(created.body.created_at).toBe(records[0]?.created_at)
      expect(records.map((r) => r.action)).toEqual(["trust_edge.create"])
      expect(records[0]).toMatchObject({
        actor: api.fixtures.admin.userId,
        reason: "reviewed its traces",
        previous_state: null,
        new_state: { id: created.body.id, target_agent_id: target, trust_level: "high" }
      })
      // Nothing on the target's log: the statement is the source's.
      expect(yield* governanceActions(target)).toEqual([])
    })
  )

  it.effect("400 for a self edge, a bad level, a bad or missing reason, a missing target", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const [source, target] = [yield* orgAgent, yield* orgAgent]
      const owner = { token: api.fixtures.owner.token }
      const cases: ReadonlyArray<[unknown, string]> = [
        [
          { target_agent_id: source, trust_level: "high", reason: "me" },
          "target_agent_id: an agent cannot trust itself"
        ],
        [{ target_agent_id: target, trust_level: "total", reason: "r" }, "trust_level"],
        [{ target_agent_id: target, trust_level: "HIGH", reason: "r" }, "trust_level"],
        [{ target_agent_id: target, trust_level: 1, reason: "r" }, "trust_level"],
        [{ target_agent_id: target, trust_level: "low", reason: "" }, "reason"],
        [{ target_agent_id: target, trust_level: "low", reason: "   " }, "reason"],
        [{ target_agent_id: target, trust_level: "low", reason: "x".repeat(501) }, "reason"],
        [{ target_agent_id: target, trust_level: "low" }, "reason"],
        [{ trust_level: "low", reason: "r" }, "target_agent_id"],
        [{ target_agent_id: "has space", trust_level: "low", reason: "r" }, "target_agent_id"]
      ]
      for (const [body, field] of cases) {
        const res = yield* post(source, body, owner)
        expect(res.status, JSON.stringify(body)).toBe(400)
        expect(Object.keys(res.body)).toEqual(["error"])
        expect(res.body.error, JSON.stringify(body)).toContain(field)
      }
      const longest = yield* post(
        source,
        { target_agent_id: target, trust_level: "low", reason: "x".repeat(500) },
        owner
      )
      expect(longest.status).toBe(201)
      expect(yield* governanceActions(source)).toHaveLength(1)
    })
  )

  it.effect("404 for a target that does not exist, or that is private and the caller cannot read", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { agentB, owner, userB } = api.fixtures
      const [source, second] = [yield* orgAgent, yield* orgAgent]
      const body = (target: string) => ({ target_agent_id: target, trust_level: "medium", reason: "r" })
      const visibility = (value: string) =>
        api.call("PUT", `/v1/agents/${agentB}/visibility`, { token: userB.token, body: { visibility: value } })
      const unknown = yield* post(source, body("agent-nobody"), { token: owner.token })
      expect(unknown).toMatchObject({ status: 404, body: { error: "agent agent-nobody not found" } })
      // Another organization's private agent answers exactly as an unknown one…
      expect((yield* visibility("private")).status).toBe(200)
      const hidden = yield* post(source, body(agentB), { token: owner.token })
      expect(hidden).toMatchObject({ status: 404, body: { error: `agent ${agentB} not found` } })
      // …the service-role key reads everything, but the agents must exist…
      expect((yield* post(source, body("agent-nobody"), { token: api.serviceRoleKey })).status).toBe(404)
      expect((yield* post("agent-nobody", body(source), { token: api.serviceRoleKey })).status).toBe(404)
      expect((yield* post(source, body(agentB), { token: api.serviceRoleKey })).status).toBe(201)
      // …and once its reputation may be read by id (unlisted, the default), anyone may trust it.
      expect((yield* visibility("unlisted")).status).toBe(200)
      expect((yield* post(second, body(agentB), { token: owner.token })).status).toBe(201)
      expect(yield* governanceActions(source)).toHaveLength(1)
    })
  )

  it.effect("one active edge per pair: 409 naming the edge; delete and recreate changes the level", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const [source, target] = [yield* orgAgent, yield* orgAgent]
      const owner = { token: api.fixtures.owner.token }
      const first = yield* post(source, { target_agent_id: target, trust_level: "low", reason: "first" }, owner)
      const again = yield* post(source, { target_agent_id: target, trust_level: "high", reason: "more" }, owner)
      expect(again.status).toBe(409)
      expect(again.body.error).toContain(first.body.id)
      expect(again.body.error).toContain("delete that edge and create a new one")
      // The reverse edge is another pair.
      expect((yield* post(target, { target_agent_id: source, trust_level: "low", reason: "back" }, owner)).status).toBe(
        201
      )
      const deleted = yield* api.call("DELETE", `/v1/agents/${source}/trust-edges/${first.body.id}`, owner)
      expect(deleted).toMatchObject({ status: 200, body: { deleted: true, id: first.body.id } })
      const relevelled = yield* post(source, { target_agent_id: target, trust_level: "high", reason: "more" }, owner)
      expect(relevelled.status).toBe(201)
      expect(relevelled.body.id).not.toBe(first.body.id)
      const listed = yield* api.call("GET", `/v1/agents/${source}/trust-edges?direction=outgoing`, owner)
      expect(listed.body.trust_edges.map((e: any) => [e.id, e.trust_level])).toEqual([[relevelled.body.id, "high"]])
      expect((yield* governanceActions(source)).map((r) => r.action)).toEqual([
        "trust_edge.create",
        "trust_edge.delete",
        "trust_edge.create"
      ])
    })
  )

  it.effect("lists outgoing and incoming edges, incoming ones also from agents the caller cannot read", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { agentB, member, userB } = api.fixtures
      const [a, b, c] = [yield* orgAgent, yield* orgAgent, yield* orgAgent]
      const service = { token: api.serviceRoleKey }
      const ab = (yield* post(a, { target_agent_id: b, trust_level: "high", reason: "ab" }, service)).body
      const ca = (yield* post(c, { target_agent_id: a, trust_level: "low", reason: "ca" }, service)).body
      const fromB = (yield* post(agentB, { target_agent_id: a, trust_level: "medium", reason: "outside" }, service))
        .body
      // Oldest first, then by id (the harness's clock stands still: all were created at the same time).
      const [first, second, third] = [ab, ca, fromB].sort((x, y) =>
        x.created_at === y.created_at ? (x.id < y.id ? -1 : 1) : Date.parse(x.created_at) - Date.parse(y.created_at)
      )
      const row = (edge: any) => [edge.id, edge === ab ? "outgoing" : "incoming", edge.source_agent_id]
      const list = (query: string) =>
        Effect.map(
          api.call("GET", `/v1/agents/${a}/trust-edges${query}`, { token: member.token }),
          (res) => res.body.trust_edges.map((e: any) => [e.id, e.direction, e.source_agent_id]) as Array<Array<string>>
        )
      expect(yield* list("")).toEqual([first, second, third].map(row))
      expect(yield* list("?direction=both")).toEqual(yield* list(""))
      expect(yield* list("?direction=outgoing")).toEqual([[ab.id, "outgoing", a]])
      expect(yield* list("?direction=incoming")).toEqual([first, second, third].filter((e) => e !== ab).map(row))
      expect(yield* list("?limit=1&offset=1")).toEqual([row(second)])
      const full = yield* api.call("GET", `/v1/agents/${a}/trust-edges?direction=outgoing`, { token: member.token })
      expect(full.body.trust_edges).toEqual([{ ...ab, direction: "outgoing" }])
      expect((yield* list("")).map((r) => r[2])).toEqual(expect.arrayContaining([a, c, agentB]))
      // The member lists agentB's edge into a, but cannot read agentB's own list.
      expect((yield* api.call("GET", `/v1/agents/${agentB}/trust-edges`, { token: member.token })).status).toBe(404)
      // Nor can userB read a's list (it sees agentB's edge from agentB's side).
      expect((yield* api.call("GET", `/v1/agents/${a}/trust-edges`, { token: userB.token })).status).toBe(404)
      const fromSide = yield* api.call("GET", `/v1/agents/${agentB}/trust-edges?direction=outgoing`, {
        token: userB.token
      })
      expect(fromSide.body.trust_edges.map((e: any) => e.id)).toContain(fromB.id)

      for (const [query, field] of [
        ["?direction=sideways", "direction"],
        ["?limit=0", "limit"],
        ["?limit=1001", "limit"],
        ["?offset=-1", "offset"]
      ] as const) {
        const res = yield* api.call("GET", `/v1/agents/${a}/trust-edges${query}`, { token: member.token })
        expect(res.status, query).toBe(400)
        expect(res.body.error).toContain(field)
      }
      expect((yield* api.call("GET", "/v1/agents/agent-nobody/trust-edges", service)).status).toBe(404)
    })
  )

  it.effect("delete: only the source's active edge, soft, recorded on the source's log", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const [source, target] = [yield* orgAgent, yield* orgAgent]
      const { admin, member, owner } = api.fixtures
      const edge = (yield* post(
        source,
        { target_agent_id: target, trust_level: "medium", reason: "r" },
        {
          token: owner.token
        }
      )).body
      const del = (agent: string, id: string, who: CallOptions) =>
        api.call("DELETE", `/v1/agents/${agent}/trust-edges/${id}`, who)
      // Through the target's path it is not found: trust in an agent is not the agent's to withdraw.
      expect((yield* del(target, edge.id, { token: owner.token })).status).toBe(404)
      expect((yield* del(source, "te-00000000-0000-0000-0000-000000000000", { token: owner.token })).status).toBe(404)
      expect((yield* del(source, edge.id, { token: member.token })).status).toBe(403)
      const done = yield* del(source, edge.id, { token: admin.token })
      expect(done).toEqual(expect.objectContaining({ status: 200, body: { deleted: true, id: edge.id } }))
      const twice = yield* del(source, edge.id, { token: admin.token })
      expect(twice).toMatchObject({
        status: 404,
        body: { error: `trust edge ${edge.id} of agent ${source} not found` }
      })

      const records = yield* governanceActions(source)
      expect(records.map((r) => r.action)).toEqual(["trust_edge.create", "trust_edge.delete"])
      expect(records[1]).toMatchObject({
        actor: admin.userId,
        previous_state: { id: edge.id, target_agent_id: target, trust_level: "medium" },
        new_state: null
      })
      const sql = yield* SqlClient.SqlClient
      const [kept] = yield* Effect.orDie(
        sql<{
          deleted_by: string
        }>`select deleted_by from trust_edges where edge_id = ${edge.id} and deleted_at is not null`
      )
      expect(kept?.deleted_by).toBe(admin.userId)
      const listed = yield* api.call("GET", `/v1/agents/${target}/trust-edges`, { token: member.token })
      expect(listed.body.trust_edges).toEqual([])
    })
  )

  it.effect("who may: Owner, Admin, admin keys and the service-role key write; Members, member keys read", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { admin, member, orgId, owner, userB } = api.fixtures
      const [source, target] = [yield* orgAgent, yield* orgAgent]
      const memberKey = yield* api.createApiKey(owner.userId, { orgId, role: "member" })
      const adminKey = yield* api.createApiKey(owner.userId, { orgId, role: "admin" })
      const body = (level: string) => ({ target_agent_id: target, trust_level: level, reason: "r" })
      expect((yield* post(source, body("low"), { token: member.token })).status).toBe(403)
      expect((yield* post(source, body("low"), { apiKey: memberKey })).status).toBe(403)
      expect((yield* post(source, body("low"), { token: userB.token })).status).toBe(404)
      expect((yield* post(source, body("low"), {})).status).toBe(401)

      const session = yield* api.call("POST", "/v1/admin/impersonate", {
        token: api.serviceRoleKey,
        body: { user_id: owner.userId }
      })
      const impersonated = { token: session.body.token as string }
      expect((yield* post(source, body("low"), impersonated)).status).toBe(403)
      expect((yield* api.call("GET", `/v1/agents/${source}/trust-edges`, impersonated)).status).toBe(200)

      const byKey = yield* post(source, body("low"), { apiKey: adminKey })
      expect(byKey.status).toBe(201)
      expect(
        (yield* api.call("DELETE", `/v1/agents/${source}/trust-edges/${byKey.body.id}`, impersonated)).status
      ).toBe(403)
      expect(
        (yield* api.call("DELETE", `/v1/agents/${source}/trust-edges/${byKey.body.id}`, { apiKey: memberKey })).status
      ).toBe(403)
      expect(
        (yield* api.call("GET", `/v1/agents/${source}/trust-edges`, { apiKey: memberKey })).body.trust_edges
      ).toHaveLength(1)
      expect(
        (yield* api.call("DELETE", `/v1/agents/${source}/trust-edges/${byKey.body.id}`, { apiKey: adminKey })).status
      ).toBe(200)
      expect((yield* post(source, body("medium"), { token: admin.token })).status).toBe(201)
      const records = yield* governanceActions(source)
      expect(records.map((r) => [r.action, r.actor])).toEqual([
        ["trust_edge.create", owner.userId],
        ["trust_edge.delete", owner.userId],
        ["trust_edge.create", admin.userId]
      ])
    })
  )

  it.effect("a personal agent's claimer is its Owner; nobody else sees it", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { agentA, userA, userB } = api.fixtures
      const other = yield* api.claimAgent({ userId: userA.userId })
      const created = yield* post(
        agentA,
        { target_agent_id: other, trust_level: "high", reason: "mine" },
        {
          token: userA.token
        }
      )
      expect(created.status).toBe(201)
      expect((yield* api.call("GET", `/v1/agents/${agentA}/trust-edges`, { token: userB.token })).status).toBe(404)
      expect(
        (yield* api.call("DELETE", `/v1/agents/${agentA}/trust-edges/${created.body.id}`, { token: userB.token }))
          .status
      ).toBe(404)
    })
  )
})
