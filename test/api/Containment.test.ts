/**
 * Containment over real HTTP on the embedded default (PGlite, in-memory agent state), on both path
 * families (`/v1/agents/{id}` and `/v1/orgs/{org}/agents/{id}`):
 *
 * - every transition and every refused transition, each refusal leaving the state as it was;
 * - the role × action matrix: only the intended callers succeed, and a refused call changes nothing
 *   (settings, gateway state, containment log, governance log);
 * - validation of the reason and of the threshold;
 * - the containment log, the governance entries (with verifying inclusion proofs) and the catalogue
 *   events in the outbox;
 * - a gateway on the same agent state refuses the agent's next request at once;
 * - scope `key` (issue 24): every agent of the provider key is refused, names not seen yet included,
 *   while scope `agent` leaves the rest of a fleet alone; roles, agents of the key out of the caller's
 *   reach, unclaimed agents and unknown scopes are refused and change nothing.
 */
import { describe, expect, layer } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { randomBytes } from "node:crypto"
import { AgentState } from "../../adapters/bus/AgentState.js"
import { Bus } from "../../adapters/bus/Bus.js"
import { agentIdOf } from "../../adapters/gateway/AgentIdentity.js"
import * as GatewayInspector from "../../adapters/gateway/GatewayInspector.js"
import { Inspector } from "../../adapters/gateway/Inspector.js"
import { ProviderAdapters } from "../../adapters/gateway/ProviderAdapters.js"
import { SigningKeys } from "../../adapters/keys/SigningKeys.js"
import { keyHashOf } from "../../adapters/providers/Identity.js"
import { providerAdapters } from "../../adapters/providers/Registry.js"
import { GovernanceLog } from "../../adapters/store/GovernanceLog.js"
import { Store } from "../../adapters/store/Store.js"
import { eventId } from "../../core/Events.js"
import { agentGovernanceLog, verifyGovernanceEntry } from "../../core/Governance.js"
import { call, startGateway, startUpstream } from "../adapters/gateway/Harness.js"
import { FakeJudge } from "../adapters/gateway/Fakes.js"
import { outboxEvents } from "../support/EventOutbox.js"
import { type ApiResponse, ApiHarness, type CallOptions, layer as harness } from "./Support.js"

type Family = "agent" | "org"
const FAMILIES: ReadonlyArray<Family> = ["agent", "org"]
type Status = "active" | "paused" | "killed"
type Action = "pause" | "resume" | "kill" | "reactivate"

const api = ApiHarness

/** A new agent of the fixtures' organization (claimed by its owner), with its provider key. */
const orgAgent = Effect.gen(function* () {
  const { claimAgent, fixtures } = yield* api
  const providerKey = `sk-ant-test-${randomBytes(12).toString("hex")}`
  const agentId = yield* claimAgent({ userId: fixtures.owner.userId, orgId: fixtures.orgId }, providerKey)
  return { agentId, providerKey }
})

const base = (family: Family, agentId: string) =>
  Effect.map(api, ({ fixtures }) =>
    family === "agent" ? `/v1/agents/${agentId}` : `/v1/orgs/${fixtures.orgId}/agents/${agentId}`
  )

const act = (family: Family, agentId: string, action: Action | "containment", options: CallOptions = {}) =>
  Effect.gen(function* () {
    const path = `${yield* base(family, agentId)}/${action}`
    return yield* (yield* api).call(action === "containment" ? "GET" : "POST", path, options)
  })

/** What the store and the gateways hold for the agent, and how long its logs are. */
const snapshot = (agentId: string) =>
  Effect.gen(function* () {
    const settings = yield* (yield* Store).agentSettings(agentId)
    const gateway = yield* (yield* AgentState).get(agentId)
    const log = yield* (yield* Store).containmentLog(agentId, 1000)
    const governance = yield* (yield* GovernanceLog).entries(agentGovernanceLog(agentId), 0, 1000)
    return {
      status: settings.containment?.status ?? "active",
      containment: settings.containment,
      threshold: settings.auto_containment_threshold,
      gateway: gateway.containment ?? null,
      log: log.length,
      governance: governance.size
    }
  })

/** Puts the agent in `status` through the API, as its owner. */
const bring = (family: Family, agentId: string, status: Status) =>
  Effect.gen(function* () {
    const { fixtures } = yield* api
    if (status === "active") return
    const res = yield* act(family, agentId, status === "paused" ? "pause" : "kill", {
      token: fixtures.owner.token,
      body: {}
    })
    expect(res.status).toBe(200)
  })

const expectOnlyError = (res: ApiResponse, status: number, error?: string) => {
  expect(res.status, JSON.stringify(res.body)).toBe(status)
  expect(Object.keys(res.body)).toEqual(["error"])
  if (error !== undefined) expect(res.body.error).toBe(error)
}

/**
 * A gateway on the API's own agent state (as on the embedded default) in front of an upstream that
 * answers 200: `send(key, name?)` is one request of the agent with that provider key and name.
 */
const gatewayOnState = Effect.gen(function* () {
  const state = yield* AgentState
  const context = yield* Layer.build(
    GatewayInspector.layer().pipe(
      Layer.provide(
        Layer.mergeAll(
          Layer.succeed(AgentState, state),
          Bus.layerMemory,
          Layer.succeed(ProviderAdapters, providerAdapters),
          FakeJudge
        )
      )
    )
  )
  const upstream = yield* Effect.acquireRelease(
    Effect.promise(() =>
      startUpstream((_r, res) => {
        const body = JSON.stringify({ model: "claude-test", content: [{ type: "text", text: "ok" }] })
        res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
        res.end(body)
      })
    ),
    (upstream) => Effect.promise(() => upstream.close())
  )
  const gateway = yield* Effect.acquireRelease(
    Effect.promise(() => startGateway(upstream.url, Context.get(context, Inspector))),
    (gateway) => Effect.promise(() => gateway.close())
  )
  const send = (providerKey: string, name?: string) =>
    Effect.promise(() =>
      call(`${gateway.url}/anthropic/v1/messages`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "x-api-key": providerKey,
          "anthropic-version": "2023-06-01",
          ...(name === undefined ? {} : { "x-candor-agent": name })
        },
        body: JSON.stringify({ model: "claude-test", max_tokens: 8, messages: [{ role: "user", content: "hi" }] })
      })
    )
  return { send, upstream }
})

layer(harness(), { timeout: "180 seconds" })("containment API", (it) => {
  describe.each(FAMILIES)("on the %s path", (family) => {
    it.effect("walks every transition; every other request is 400 naming the state and changes nothing", () =>
      Effect.gen(function* () {
        const { fixtures } = yield* api
        const { agentId } = yield* orgAgent
        const owner = { token: fixtures.owner.token }
        const refused = (action: Action, error: string) =>
          Effect.gen(function* () {
            const before = yield* snapshot(agentId)
            expectOnlyError(yield* act(family, agentId, action, { ...owner, body: {} }), 400, error)
            expect(yield* snapshot(agentId)).toEqual(before)
          })

        yield* refused("resume", "cannot resume: agent is active")
        yield* refused("reactivate", "cannot reactivate: agent is active")

        const paused = yield* act(family, agentId, "pause", { ...owner, body: { reason: "investigating" } })
        expect(paused.status).toBe(200)
        expect(paused.body).toEqual({
          agent_id: agentId,
          containment_scope: "agent",
          containment_status: "paused",
          contained_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
          contained_by: fixtures.owner.userId,
          containment_reason: "investigating"
        })
        // The gateways know before the answer.
        expect((yield* snapshot(agentId)).gateway).toEqual({
          status: "paused",
          reason: "investigating",
          contained_at: paused.body.contained_at,
          contained_by: fixtures.owner.userId
        })
        yield* refused("pause", "agent is already paused")
        yield* refused("reactivate", "cannot reactivate: agent is paused (resume it)")

        const resumed = yield* act(family, agentId, "resume", owner)
        expect(resumed).toMatchObject({ status: 200, body: { agent_id: agentId, containment_status: "active" } })
        expect(Object.keys(resumed.body).sort()).toEqual(["agent_id", "containment_scope", "containment_status"])
        expect(yield* snapshot(agentId)).toMatchObject({ status: "active", containment: null, gateway: null })

        // Kill without a body: no reason.
        const killed = yield* act(family, agentId, "kill", owner)
        expect(killed).toMatchObject({
          status: 200,
          body: { containment_status: "killed", containment_reason: null, contained_by: fixtures.owner.userId }
        })
        expect((yield* snapshot(agentId)).gateway?.status).toBe("killed")
        yield* refused("kill", "agent is already killed")
        yield* refused("pause", "cannot pause: agent is killed")
        yield* refused("resume", "cannot resume: agent is killed (reactivate it)")

        expect((yield* act(family, agentId, "reactivate", owner)).body).toEqual({
          agent_id: agentId,
          containment_scope: "agent",
          containment_status: "active"
        })
        expect((yield* snapshot(agentId)).gateway).toBeNull()

        // paused → killed.
        expect((yield* act(family, agentId, "pause", owner)).status).toBe(200)
        const killedWhilePaused = yield* act(family, agentId, "kill", { ...owner, body: { reason: "confirmed" } })
        expect(killedWhilePaused.body).toMatchObject({ containment_status: "killed", containment_reason: "confirmed" })

        const read = yield* act(family, agentId, "containment", { token: fixtures.member.token })
        expect(read.status).toBe(200)
        expect(read.body).toEqual({
          agent_id: agentId,
          containment_status: "killed",
          containment_scope: "agent",
          contained_at: killedWhilePaused.body.contained_at,
          contained_by: fixtures.owner.userId,
          containment_reason: "confirmed",
          agent_containment: {
            status: "killed",
            contained_at: killedWhilePaused.body.contained_at,
            contained_by: fixtures.owner.userId,
            reason: "confirmed"
          },
          key_containment: { status: "active", contained_at: null, contained_by: null, reason: null },
          auto_containment_threshold: null,
          log: [
            ["kill", "confirmed", "paused", "killed"],
            ["pause", null, "active", "paused"],
            ["reactivate", null, "killed", "active"],
            ["kill", null, "active", "killed"],
            ["resume", null, "paused", "active"],
            ["pause", "investigating", "active", "paused"]
          ].map(([action, reason, previous_status, new_status]) => ({
            action,
            actor: fixtures.owner.userId,
            reason,
            previous_status,
            new_status,
            scope: "agent",
            created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/)
          }))
        })
      })
    )
  })

  it.effect("role × action matrix on both paths: only the intended callers succeed, a refusal changes nothing", () =>
    Effect.gen(function* () {
      const { call: raw, createApiKey, fixtures, serviceRoleKey } = yield* api
      const { admin, member, orgId, owner, userA, userB } = fixtures
      const adminKey = yield* createApiKey(admin.userId, { orgId, role: "admin" })
      const memberKey = yield* createApiKey(owner.userId, { orgId, role: "member" })
      const otherOrgKey = yield* createApiKey(userB.userId, { orgId: fixtures.otherOrgId, role: "owner" })
      const session = yield* raw("POST", "/v1/admin/impersonate", {
        token: serviceRoleKey,
        body: { user_id: owner.userId, reason: "support" }
      })
      expect(session.status).toBe(201)

      type Expect = 200 | 401 | 403 | 404
      const callers: ReadonlyArray<
        readonly [string, CallOptions, { readonly write: Expect; readonly owner: Expect; readonly read: Expect }]
      > = [
        ["owner", { token: owner.token }, { write: 200, owner: 200, read: 200 }],
        ["admin", { token: admin.token }, { write: 200, owner: 403, read: 200 }],
        ["admin-role key", { apiKey: adminKey }, { write: 200, owner: 403, read: 200 }],
        ["member", { token: member.token }, { write: 403, owner: 403, read: 200 }],
        ["member-role key", { apiKey: memberKey }, { write: 403, owner: 403, read: 200 }],
        ["impersonating the owner", { token: session.body.token }, { write: 403, owner: 403, read: 403 }],
        ["service-role key", { token: serviceRoleKey }, { write: 200, owner: 200, read: 200 }],
        ["another organization's user", { token: userB.token }, { write: 404, owner: 404, read: 404 }],
        ["another organization's key", { apiKey: otherOrgKey }, { write: 404, owner: 404, read: 404 }],
        ["a user of no organization", { token: userA.token }, { write: 404, owner: 404, read: 404 }],
        ["no credentials", {}, { write: 401, owner: 401, read: 401 }]
      ]
      const actions: ReadonlyArray<
        readonly [Action | "containment" | "containment-policy", Status, "write" | "owner" | "read"]
      > = [
        ["pause", "active", "write"],
        ["resume", "paused", "write"],
        ["kill", "paused", "owner"],
        ["reactivate", "killed", "owner"],
        ["containment-policy", "active", "write"],
        ["containment", "paused", "read"]
      ]
      for (const family of FAMILIES) {
        for (const [action, from, needs] of actions) {
          for (const [who, credentials, expected] of callers) {
            const { agentId } = yield* orgAgent
            yield* bring(family, agentId, from)
            const before = yield* snapshot(agentId)
            const path = `${yield* base(family, agentId)}/${action}`
            const res =
              action === "containment-policy"
                ? yield* raw("PUT", path, { ...credentials, body: { auto_containment_threshold: 4 } })
                : yield* raw(action === "containment" ? "GET" : "POST", path, {
                    ...credentials,
                    ...(action === "pause" || action === "kill" ? { body: { reason: "matrix" } } : {})
                  })
            const label = `${family} ${action} as ${who}: ${res.status} ${JSON.stringify(res.body)}`
            expect(res.status, label).toBe(expected[needs])
            if (res.status !== 200) {
              expect(Object.keys(res.body), label).toEqual(["error"])
              expect(yield* snapshot(agentId), label).toEqual(before)
            } else if (needs !== "read") {
              const after = yield* snapshot(agentId)
              expect(after.governance, label).toBe(before.governance + 1)
              if (action === "containment-policy") expect(after.threshold, label).toBe(4)
              else expect(after.log, label).toBe(before.log + 1)
            }
          }
        }
      }
    })
  )

  it.effect("a personal agent: its claimer is Owner on the agent path; the organization path does not know it", () =>
    Effect.gen(function* () {
      const { claimAgent, fixtures } = yield* api
      const { orgId, owner, userA, userB } = fixtures
      const agentId = yield* claimAgent({ userId: userA.userId })
      const mine = { token: userA.token }
      for (const action of ["pause", "kill", "reactivate"] as const) {
        expect((yield* act("agent", agentId, action, mine)).status, action).toBe(200)
      }
      expect((yield* act("agent", agentId, "containment", mine)).body.log).toHaveLength(3)
      const before = yield* snapshot(agentId)
      expectOnlyError(yield* act("agent", agentId, "pause", { token: userB.token }), 404)
      // Not claimed into the organization: 404 there even for the organization's owner, or the claimer.
      for (const token of [owner.token, userA.token]) {
        const res = yield* api.pipe(
          Effect.flatMap((h) => h.call("POST", `/v1/orgs/${orgId}/agents/${agentId}/pause`, { token }))
        )
        expectOnlyError(res, 404)
      }
      // The organization's own agent under another organization's path: 404 for everyone.
      const theirs = `/v1/orgs/${fixtures.otherOrgId}/agents/${fixtures.orgAgent}/pause`
      for (const token of [owner.token, userB.token]) {
        expectOnlyError(yield* api.pipe(Effect.flatMap((h) => h.call("POST", theirs, { token }))), 404)
      }
      const unknown = `/v1/orgs/${orgId}/agents/agt-does-not-exist/containment`
      expectOnlyError(yield* api.pipe(Effect.flatMap((h) => h.call("GET", unknown, { token: owner.token }))), 404)
      expect(yield* snapshot(agentId)).toEqual(before)
    })
  )

  it.effect("validates the reason and the threshold (400 naming the field) and keeps the threshold", () =>
    Effect.gen(function* () {
      const { call: raw, fixtures } = yield* api
      const owner = { token: fixtures.owner.token }
      const { agentId } = yield* orgAgent
      for (const family of FAMILIES) {
        const before = yield* snapshot(agentId)
        for (const body of [{ reason: "x".repeat(1001) }, { reason: 42 }, "[1]", "not json"]) {
          const res = yield* act(family, agentId, "pause", { ...owner, body })
          expect(res.status, JSON.stringify(body)).toBe(400)
          expect(Object.keys(res.body)).toEqual(["error"])
        }
        expect((yield* act(family, agentId, "kill", { ...owner, body: { reason: "y".repeat(1001) } })).body).toEqual({
          error: "reason: must be a string of at most 1000 characters, or null"
        })
        expect(yield* snapshot(agentId)).toEqual(before)

        const policy = `${yield* base(family, agentId)}/containment-policy`
        for (const threshold of [1, 0, -3, 2.5, "3", true, {}]) {
          const res = yield* raw("PUT", policy, { ...owner, body: { auto_containment_threshold: threshold } })
          expectOnlyError(res, 400, "auto_containment_threshold: must be an integer of at least 2, or null (never)")
        }
        expectOnlyError(yield* raw("PUT", policy, { ...owner, body: {} }), 400)
        expect(yield* snapshot(agentId)).toEqual(before)
      }
      const agentPolicy = `/v1/agents/${agentId}/containment-policy`
      for (const threshold of [2, 7, null, 3]) {
        const res = yield* raw("PUT", agentPolicy, { ...owner, body: { auto_containment_threshold: threshold } })
        expect(res).toMatchObject({ status: 200, body: { agent_id: agentId, auto_containment_threshold: threshold } })
      }
      expect((yield* snapshot(agentId)).threshold).toBe(3)
      const read = yield* act("org", agentId, "containment", { token: fixtures.member.token })
      expect(read.body).toMatchObject({ containment_status: "active", auto_containment_threshold: 3, log: [] })
      // A reason of exactly 1000 characters is kept whole.
      const long = "z".repeat(1000)
      const paused = yield* act("agent", agentId, "pause", { ...owner, body: { reason: long } })
      expect(paused.body.containment_reason).toBe(long)
    })
  )

  it.effect("records each action in the agent's governance log, with inclusion proofs that verify", () =>
    Effect.gen(function* () {
      const { call: raw, fixtures, serviceRoleKey } = yield* api
      const { agentId } = yield* orgAgent
      const owner = { token: fixtures.owner.token }
      yield* act("org", agentId, "pause", { token: fixtures.admin.token, body: { reason: "drift" } })
      yield* act("agent", agentId, "resume", { token: serviceRoleKey })
      yield* act("org", agentId, "kill", { ...owner, body: { reason: "done" } })
      yield* act("agent", agentId, "reactivate", owner)
      yield* raw("PUT", `/v1/orgs/${fixtures.orgId}/agents/${agentId}/containment-policy`, {
        ...owner,
        body: { auto_containment_threshold: 5 }
      })
      const log = agentGovernanceLog(agentId)
      const governance = yield* GovernanceLog
      const { entries, size } = yield* governance.entries(log, 0, 100)
      expect(size).toBe(5)
      expect(entries.map(({ record }) => [record.action, record.actor, record.reason])).toEqual([
        ["containment.pause", fixtures.admin.userId, "drift"],
        ["containment.resume", "service", null],
        ["containment.kill", fixtures.owner.userId, "done"],
        ["containment.reactivate", fixtures.owner.userId, null],
        ["containment.policy", fixtures.owner.userId, null]
      ])
      expect(entries[0]!.record).toMatchObject({
        origin: `candor.test/agents/${agentId}/governance`,
        previous_state: { status: "active" },
        new_state: { status: "paused", reason: "drift", contained_by: fixtures.admin.userId }
      })
      expect(entries[1]!.record).toMatchObject({
        previous_state: { status: "paused" },
        new_state: { status: "active" }
      })
      expect(entries[2]!.record).toMatchObject({ new_state: { status: "killed", reason: "done" } })
      expect(entries[4]!.record).toMatchObject({
        previous_state: { auto_containment_threshold: null },
        new_state: { auto_containment_threshold: 5 }
      })
      const head = (yield* governance.treeHead(log))!
      const { active } = yield* SigningKeys
      for (const entry of entries) {
        const auditPath = (yield* governance.inclusionProof(log, entry.index, head.tree_size))!
        expect(
          verifyGovernanceEntry({
            record: entry.record,
            index: entry.index,
            auditPath,
            signedTreeHead: head.note,
            verifiers: [{ name: entry.record.origin, publicKey: active.publicKey }]
          })
        ).toEqual({ ok: true })
      }
    })
  )

  it.effect("writes agent.paused, agent.resumed and agent.killed events to the outbox with the change", () =>
    Effect.gen(function* () {
      const { fixtures } = yield* api
      const { agentId } = yield* orgAgent
      const store = yield* Store
      const before = (yield* outboxEvents({ agentId })).length
      const owner = { token: fixtures.owner.token }
      yield* act("org", agentId, "pause", { ...owner, body: { reason: "look" } })
      yield* act("org", agentId, "pause", owner) // refused: no event
      yield* act("agent", agentId, "resume", owner)
      yield* act("agent", agentId, "kill", owner)
      yield* act("org", agentId, "reactivate", owner)

      const sent = (yield* outboxEvents({ agentId })).slice(before)
      const data = (action: string, reason: string | null, previous_status: Status, new_status: Status) => ({
        agent_id: agentId,
        org_id: fixtures.orgId,
        action,
        actor: fixtures.owner.userId,
        reason,
        previous_status,
        new_status,
        scope: "agent"
      })
      expect(sent.map((e) => [e.type, e.org_id, e.agent_id, e.data])).toEqual([
        ["agent.paused", fixtures.orgId, agentId, data("pause", "look", "active", "paused")],
        ["agent.resumed", fixtures.orgId, agentId, data("resume", null, "paused", "active")],
        ["agent.killed", fixtures.orgId, agentId, data("kill", null, "active", "killed")],
        ["agent.resumed", fixtures.orgId, agentId, data("reactivate", null, "killed", "active")]
      ])
      // Each change is its own occurrence, named by its containment log row.
      const log = [...(yield* store.containmentLog(agentId, 4))].reverse()
      expect(sent.map((e) => e.id)).toEqual(log.map((entry, n) => eventId(sent[n]!.type, entry.id)))
    })
  )

  it.scoped(
    "a gateway on the same agent state refuses the agent's next request at once, and lets it through after resume",
    () =>
      Effect.gen(function* () {
        const { fixtures } = yield* api
        const { agentId, providerKey } = yield* orgAgent
        const { send: sendAs, upstream } = yield* gatewayOnState
        const send = sendAs(providerKey)
        expect((yield* send).status).toBe(200)
        const paused = yield* act("org", agentId, "pause", { token: fixtures.admin.token, body: { reason: "review" } })
        expect(paused.status).toBe(200)
        const before = upstream.requests.length
        const refused = yield* send
        expect(refused.status).toBe(403)
        expect(JSON.parse(refused.body.toString())).toEqual({
          error: "agent is paused: review",
          type: "containment_error",
          reason: "agent_paused",
          containment_error: {
            type: "containment_error",
            reason: "agent_paused",
            agent_id: agentId,
            scope: "agent",
            contained_at: paused.body.contained_at,
            contained_by: fixtures.admin.userId
          }
        })
        yield* act("org", agentId, "kill", { token: fixtures.owner.token })
        expect(JSON.parse((yield* send).body.toString()).containment_error.reason).toBe("agent_killed")
        expect(upstream.requests.length).toBe(before)
        yield* act("org", agentId, "reactivate", { token: fixtures.owner.token })
        expect((yield* send).status).toBe(200)
      })
  )

  it.scoped(
    "scope key contains every agent of the key, names not seen yet included; scope agent leaves the fleet alone",
    () =>
      Effect.gen(function* () {
        const { claimAgent, fixtures } = yield* api
        const owner = { token: fixtures.owner.token }
        const providerKey = `sk-ant-fleet-${randomBytes(12).toString("hex")}`
        const claim = (name: string) =>
          claimAgent({ userId: fixtures.owner.userId, orgId: fixtures.orgId }, providerKey, name)
        const a = yield* claim("fleet-a")
        const b = yield* claim("fleet-b")
        const { send, upstream } = yield* gatewayOnState
        const statuses = Effect.all([
          send(providerKey, "fleet-a"),
          send(providerKey, "fleet-b"),
          send(providerKey, "new-one"),
          send(providerKey)
        ]).pipe(Effect.map((responses) => responses.map((res) => res.status)))
        expect(yield* statuses).toEqual([200, 200, 200, 200])

        // The default scope: this agent only; the rest of the fleet keeps working.
        const killedA = yield* act("org", a, "kill", { ...owner, body: { reason: "a only" } })
        expect(killedA.body).toMatchObject({ containment_scope: "agent", containment_status: "killed" })
        expect(yield* statuses).toEqual([403, 200, 200, 200])
        expect((yield* act("org", a, "reactivate", owner)).status).toBe(200)

        // Scope key, through agent b: every agent of the key, any name, none, or one never seen.
        const killed = yield* act("org", b, "kill", { ...owner, body: { reason: "key leaked", scope: "key" } })
        expect(killed.status, JSON.stringify(killed.body)).toBe(200)
        expect(killed.body).toMatchObject({
          agent_id: b,
          containment_scope: "key",
          containment_status: "killed",
          containment_reason: "key leaked"
        })
        const before = upstream.requests.length
        expect(yield* statuses).toEqual([403, 403, 403, 403])
        const refused = JSON.parse((yield* send(providerKey, "never-seen-before")).body.toString())
        expect(refused).toMatchObject({
          error: "agent's provider key is killed: key leaked",
          reason: "agent_killed",
          containment_error: { scope: "key", agent_id: agentIdOf(keyHashOf(providerKey)!, "never-seen-before") }
        })
        expect(upstream.requests.length).toBe(before)

        // Each agent's containment names the scope in force; the change is logged on the agent addressed.
        const readA = yield* act("agent", a, "containment", { token: fixtures.member.token })
        expect(readA.body).toMatchObject({
          containment_status: "killed",
          containment_scope: "key",
          containment_reason: "key leaked",
          agent_containment: { status: "active" },
          key_containment: { status: "killed", reason: "key leaked", contained_by: fixtures.owner.userId }
        })
        const readB = yield* act("org", b, "containment", owner)
        expect(readB.body.log[0]).toMatchObject({
          action: "kill",
          scope: "key",
          previous_status: "active",
          new_status: "killed"
        })
        const governance = yield* (yield* GovernanceLog).entries(agentGovernanceLog(b), 0, 10)
        expect(governance.entries.at(-1)!.record).toMatchObject({
          action: "containment.kill",
          previous_state: { scope: "key", status: "active" },
          new_state: { scope: "key", status: "killed", reason: "key leaked" }
        })
        const events = yield* outboxEvents({ agentId: b })
        expect(events.at(-1)).toMatchObject({ type: "agent.killed", data: { scope: "key", action: "kill" } })

        // Refused transitions name the key; the agent's own containment is a separate state.
        expectOnlyError(
          yield* act("org", a, "kill", { ...owner, body: { scope: "key" } }),
          400,
          "key is already killed"
        )
        expectOnlyError(
          yield* act("org", a, "resume", { ...owner, body: { scope: "key" } }),
          400,
          "cannot resume: key is killed (reactivate it)"
        )
        expectOnlyError(yield* act("org", a, "reactivate", owner), 400, "cannot reactivate: agent is active")

        // Reactivated through another agent of the key: the whole fleet is back.
        const back = yield* act("agent", a, "reactivate", { ...owner, body: { scope: "key" } })
        expect(back.body).toEqual({ agent_id: a, containment_scope: "key", containment_status: "active" })
        expect(yield* statuses).toEqual([200, 200, 200, 200])
        expect((yield* act("org", b, "containment", owner)).body).toMatchObject({
          containment_status: "active",
          containment_scope: null,
          key_containment: { status: "active" }
        })

        // Both scopes at once: the more severe is in force, and lifting one leaves the other.
        yield* act("org", a, "pause", { ...owner, body: { scope: "key" } })
        yield* act("org", a, "kill", owner)
        expect((yield* act("org", a, "containment", owner)).body).toMatchObject({
          containment_status: "killed",
          containment_scope: "agent"
        })
        yield* act("org", a, "resume", { ...owner, body: { scope: "key" } })
        expect(yield* statuses).toEqual([403, 200, 200, 200])
      })
  )

  it.effect(
    "scope key: roles as for the agent, every agent of the key within reach, a claimed agent, a known scope",
    () =>
      Effect.gen(function* () {
        const { claimAgent, createApiKey, fixtures, serviceRoleKey } = yield* api
        const providerKey = `sk-ant-shared-${randomBytes(12).toString("hex")}`
        const mine = yield* claimAgent({ userId: fixtures.owner.userId, orgId: fixtures.orgId }, providerKey, "ours")
        const keyHash = keyHashOf(providerKey)!
        const state = yield* AgentState
        const keyState = () => state.peekKey(keyHash).containment?.status ?? "active"

        // Admin pauses and resumes a key; kill and reactivate are the Owner's; a Member only reads.
        const adminKey = yield* createApiKey(fixtures.admin.userId, { orgId: fixtures.orgId, role: "admin" })
        const admin = { apiKey: adminKey }
        expect((yield* act("org", mine, "pause", { ...admin, body: { scope: "key" } })).status).toBe(200)
        expect(keyState()).toBe("paused")
        expectOnlyError(yield* act("org", mine, "kill", { ...admin, body: { scope: "key" } }), 403)
        expectOnlyError(
          yield* act("org", mine, "resume", { token: fixtures.member.token, body: { scope: "key" } }),
          403
        )
        expect((yield* act("org", mine, "resume", { ...admin, body: { scope: "key" } })).status).toBe(200)
        expect(keyState()).toBe("active")

        // Another organization's agent on the same key: nobody here may contain it, so not the key either.
        const theirs = yield* claimAgent(
          { userId: fixtures.userB.userId, orgId: fixtures.otherOrgId },
          providerKey,
          "theirs"
        )
        const before = yield* snapshot(mine)
        expectOnlyError(
          yield* act("org", mine, "kill", { token: fixtures.owner.token, body: { scope: "key" } }),
          403,
          'scope "key": the key is shared with agents you may not kill'
        )
        expect(yield* snapshot(mine)).toEqual(before)
        expect(keyState()).toBe("active")
        // The service-role key may act on every agent: it may.
        expect((yield* act("agent", theirs, "kill", { token: serviceRoleKey, body: { scope: "key" } })).status).toBe(
          200
        )
        expect(keyState()).toBe("killed")
        expect(
          (yield* act("agent", theirs, "reactivate", { token: serviceRoleKey, body: { scope: "key" } })).status
        ).toBe(200)

        // An agent Candor knows no key for (never claimed): 400, nothing changed.
        const unclaimed = agentIdOf(keyHashOf(`sk-ant-unclaimed-${randomBytes(8).toString("hex")}`)!, undefined)
        const res = yield* act("agent", unclaimed, "pause", { token: serviceRoleKey, body: { scope: "key" } })
        expectOnlyError(res, 400)
        expect(res.body.error).toContain("claim")
        expect((yield* snapshot(unclaimed)).log).toBe(0)

        // An unknown scope is a 400 naming the field; so is one on resume.
        for (const action of ["pause", "resume", "kill", "reactivate"] as const) {
          const bad = yield* act("org", mine, action, { token: fixtures.owner.token, body: { scope: "fleet" } })
          expectOnlyError(bad, 400)
          expect(bad.body.error).toContain("scope")
        }
      })
  )
})
