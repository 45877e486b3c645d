/**
 * Organization conscience values over HTTP: CRUD, the limits, the order, both modes with the
 * resolved (effective) values, who may do what, the change log, the governance entries, the
 * catalogue events, what reaches the gateways, and a change stored but not shared (503). With the
 * workers running beside the API: a certificate committed after a change binds the `values_hash`
 * the effective route showed, and a mandatory value is a boundary where an advisory one is not.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { randomUUID } from "node:crypto"
import { AgentState } from "../../adapters/bus/AgentState.js"
import { Bus } from "../../adapters/bus/Bus.js"
import { BusError } from "../../adapters/bus/BusError.js"
import { PartitionOwnership } from "../../adapters/bus/PartitionOwnership.js"
import { eventSubject } from "../../adapters/bus/Subjects.js"
import { SigningKeys } from "../../adapters/keys/SigningKeys.js"
import { GovernanceLog } from "../../adapters/store/GovernanceLog.js"
import { Store } from "../../adapters/store/Store.js"
import { valuesHash } from "../../core/Commitments.js"
import { agentGovernanceLog, orgGovernanceLog, verifyGovernanceEntry } from "../../core/Governance.js"
import type { Concern } from "../../core/schema/Concern.js"
import { type ConscienceValue, DEFAULT_CONSCIENCE_VALUES } from "../../core/schema/Conscience.js"
import { runWorkers } from "../../streams/PartitionWorkers.js"
import { outboxEvents } from "../support/EventOutbox.js"
import { gatewayEvent } from "../support/Events.js"
import { awaitCommitted } from "../streams/PipelineChecks.js"
import { cardFor } from "./AgentData.js"
import { ApiHarness, freshOrganization, layer as harness, TEST_LOG_ORIGIN } from "./Support.js"

const defaultNames = DEFAULT_CONSCIENCE_VALUES.map((value) => value.name)

/** A new organization: the fixtures' owner, admin and member in it, and one agent claimed into it. */
const freshOrg = Effect.gen(function* () {
  const api = yield* ApiHarness
  const { owner } = api.fixtures
  const orgId = yield* freshOrganization("Conscience")
  const agentId = yield* api.claimAgent({ userId: owner.userId, orgId })
  return { orgId, agentId, root: `/v1/orgs/${orgId}/conscience-values` }
})

const asOwner = Effect.map(ApiHarness, (api) => ({ token: api.fixtures.owner.token }))

const create = (root: string, body: Record<string, unknown>) =>
  Effect.gen(function* () {
    const api = yield* ApiHarness
    const response = yield* api.call("POST", root, { ...(yield* asOwner), body })
    expect(response.status, JSON.stringify(response.body)).toBe(201)
    return response.body
  })

const effective = (agentId: string) =>
  Effect.flatMap(ApiHarness, (api) =>
    api.call("GET", `/v1/agents/${agentId}/conscience-values/effective`, { token: api.serviceRoleKey })
  )

layer(harness(), { timeout: "120 seconds" })("organization conscience values", (it) => {
  it.effect("create, read, update and delete; `description` is accepted for `content`", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { admin, owner } = api.fixtures
      const { orgId, root } = yield* freshOrg
      expect((yield* api.call("GET", root, { token: owner.token })).body).toEqual({
        org_id: orgId,
        mode: "augment",
        enabled: true,
        values: []
      })

      const created = yield* api.call("POST", root, {
        token: owner.token,
        body: { type: "COMMITMENT", name: "  no-competitors  ", description: "Never recommend a competitor." }
      })
      expect(created.status).toBe(201)
      expect(created.body).toEqual({
        value_id: expect.stringMatching(/^cv-[0-9a-f-]{36}$/),
        type: "COMMITMENT",
        name: "no-competitors",
        content: "Never recommend a competitor.",
        severity: "advisory",
        is_active: true,
        sort_order: 0,
        created_by: owner.userId,
        updated_by: owner.userId,
        created_at: expect.any(String),
        updated_at: created.body.created_at
      })
      const valueId: string = created.body.value_id
      const second = yield* create(root, {
        type: "BOUNDARY",
        name: "no-wire",
        content: "Never move money.",
        severity: "mandatory",
        is_active: false
      })
      expect(second).toMatchObject({ severity: "mandatory", is_active: false, sort_order: 1 })

      const patched = yield* api.call("PATCH", `${root}/${valueId}`, {
        token: admin.token,
        body: { content: "Recommend our products only.", severity: "mandatory" }
      })
      expect(patched.status).toBe(200)
      expect(patched.body).toMatchObject({
        value_id: valueId,
        name: "no-competitors",
        content: "Recommend our products only.",
        severity: "mandatory",
        created_by: owner.userId,
        updated_by: admin.userId
      })
      const listed = yield* api.call("GET", root, { token: owner.token })
      expect(listed.body.values).toEqual([patched.body, second])

      const deleted = yield* api.call("DELETE", `${root}/${valueId}`, { token: admin.token })
      expect(deleted).toMatchObject({ status: 200, body: { deleted: true, value_id: valueId } })
      expect((yield* api.call("GET", root, { token: owner.token })).body.values).toEqual([second])
      for (const [method, body] of [
        ["DELETE", undefined],
        ["PATCH", { content: "x" }]
      ] as const) {
        const gone = yield* api.call(method, `${root}/${valueId}`, { token: owner.token, body })
        expect(gone).toMatchObject({ status: 404, body: { error: `conscience value ${valueId} not found` } })
      }
      // A value of another organization is not found through this one.
      const other = yield* freshOrg
      const foreign = yield* create(other.root, { type: "HOPE", name: "h", content: "c" })
      expect((yield* api.call("DELETE", `${root}/${foreign.value_id}`, { token: owner.token })).status).toBe(404)
    })
  )

  it.effect("limits: 20 values (the 21st is a 409), names 1–50 unique per organization (409), content 1–500", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { owner } = api.fixtures
      const { root } = yield* freshOrg
      const longest = yield* create(root, { type: "BELIEF", name: "n".repeat(50), content: "c".repeat(500) })
      expect(longest.name).toHaveLength(50)
      const refused: ReadonlyArray<readonly [unknown, number, string]> = [
        [{ type: "BELIEF", name: "n".repeat(51), content: "c" }, 400, "name: must be 1 to 50 characters"],
        [{ type: "BELIEF", name: "   ", content: "c" }, 400, "name: must be 1 to 50 characters"],
        [{ type: "BELIEF", name: "x", content: "c".repeat(501) }, 400, "content: must be 1 to 500 characters"],
        [{ type: "BELIEF", name: "x", content: "" }, 400, "content: must be 1 to 500 characters"],
        [{ type: "BELIEF", name: "x" }, 400, "content: is required"],
        [
          { type: "WISH", name: "x", content: "c" },
          400,
          "type: must be one of BOUNDARY, FEAR, COMMITMENT, BELIEF, HOPE"
        ],
        [
          { type: "HOPE", name: "x", content: "c", severity: "high" },
          400,
          "severity: must be one of advisory, mandatory"
        ],
        [{ type: "HOPE", name: "n".repeat(50), content: "c" }, 409, "already exists in this organization"]
      ]
      for (const [body, status, error] of refused) {
        const response = yield* api.call("POST", root, { token: owner.token, body })
        expect(response.status, JSON.stringify(body)).toBe(status)
        expect(Object.keys(response.body)).toEqual(["error"])
        expect(response.body.error).toContain(error)
      }
      for (let i = 1; i < 20; i++) yield* create(root, { type: "HOPE", name: `hope-${i}`, content: "c" })
      const full = yield* api.call("POST", root, {
        token: owner.token,
        body: { type: "HOPE", name: "21st", content: "c" }
      })
      expect(full).toMatchObject({ status: 409, body: { error: expect.stringContaining("at most 20") } })
      expect((yield* api.call("GET", root, { token: owner.token })).body.values).toHaveLength(20)
      // A rename onto another value's name is refused too; onto its own name is fine.
      const renamed = yield* api.call("PATCH", `${root}/${longest.value_id}`, {
        token: owner.token,
        body: { name: "hope-1" }
      })
      expect(renamed.status).toBe(409)
      const same = yield* api.call("PATCH", `${root}/${longest.value_id}`, {
        token: owner.token,
        body: { name: longest.name, content: "d" }
      })
      expect(same.status).toBe(200)
    })
  )

  it.effect("order: a permutation of the organization's value ids, else 400", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { owner } = api.fixtures
      const { orgId, root } = yield* freshOrg
      const ids: Array<string> = []
      for (const name of ["a", "b", "c"])
        ids.push((yield* create(root, { type: "HOPE", name, content: name })).value_id)
      const reversed = [...ids].reverse()
      const ordered = yield* api.call("PUT", `${root}/order`, { token: owner.token, body: { order: reversed } })
      expect(ordered).toMatchObject({ status: 200, body: { org_id: orgId, order: reversed } })
      const values = (yield* api.call("GET", root, { token: owner.token })).body.values
      expect(values.map((value: any) => value.name)).toEqual(["c", "b", "a"])
      expect(values.map((value: any) => value.sort_order)).toEqual([0, 1, 2])
      for (const order of [ids.slice(1), [...ids, ids[0]], [ids[0], ids[1], "cv-unknown"], []]) {
        const refused = yield* api.call("PUT", `${root}/order`, { token: owner.token, body: { order } })
        expect(refused.status, JSON.stringify(order)).toBe(400)
        expect(refused.body.error).toContain("order: must list every conscience value id")
      }
    })
  )

  it.effect(
    "effective values: augment (defaults, organization, agent), replace (organization, agent), disabled (no organization layer)",
    () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const state = yield* AgentState
        const { owner } = api.fixtures
        const { agentId, orgId, root } = yield* freshOrg
        const first = yield* create(root, {
          type: "COMMITMENT",
          name: "no-competitors",
          content: "Never recommend a competitor.",
          severity: "mandatory"
        })
        const second = yield* create(root, { type: "HOPE", name: "plain-words", content: "Speak plainly." })
        yield* create(root, { type: "FEAR", name: "inactive", content: "Not in force.", is_active: false })
        const agentValues: ReadonlyArray<ConscienceValue> = [
          { type: "BELIEF", name: "agent-belief", content: "The agent's own." },
          // Cannot override the organization's value of the same name: dropped.
          { type: "HOPE", name: "no-competitors", content: "Recommend whatever is best." }
        ]
        const put = yield* api.call("PUT", `/v1/agents/${agentId}/conscience-values`, {
          token: owner.token,
          body: { conscience_values: agentValues }
        })
        expect(put.status).toBe(200)

        const inForce = (value: any): ConscienceValue => ({
          type: value.type,
          name: value.name,
          content: value.content,
          id: value.value_id,
          severity: value.severity
        })
        const augment = yield* effective(agentId)
        expect(augment.status).toBe(200)
        expect(augment.body).toMatchObject({ agent_id: agentId, org_id: orgId, mode: "augment", enabled: true })
        expect(augment.body.values.map((value: any) => [value.name, value.layer])).toEqual([
          ...defaultNames.map((name) => [name, "base"]),
          ["no-competitors", "org"],
          ["plain-words", "org"],
          ["agent-belief", "agent"]
        ])
        expect(augment.body.values.find((value: any) => value.name === "no-competitors")).toEqual({
          value_id: first.value_id,
          type: "COMMITMENT",
          name: "no-competitors",
          content: "Never recommend a competitor.",
          severity: "mandatory",
          boundary: true,
          layer: "org"
        })
        const augmentValues = [...DEFAULT_CONSCIENCE_VALUES, inForce(first), inForce(second), agentValues[0]!]
        expect(augment.body.values_hash).toBe(valuesHash(augmentValues))
        // The gateways hold exactly the resolved list.
        expect((yield* state.get(agentId)).conscienceValues).toEqual(augmentValues)

        const replace = yield* api.call("PUT", `${root}/mode`, { token: owner.token, body: { mode: "replace" } })
        expect(replace.body).toEqual({ org_id: orgId, mode: "replace", enabled: true })
        const replaced = (yield* effective(agentId)).body
        expect(replaced.values.map((value: any) => value.name)).toEqual([
          "no-competitors",
          "plain-words",
          "agent-belief"
        ])
        expect(replaced.values_hash).toBe(valuesHash([inForce(first), inForce(second), agentValues[0]!]))
        expect((yield* state.get(agentId)).conscienceValues).toEqual([inForce(first), inForce(second), agentValues[0]])

        const disabled = yield* api.call("PUT", `${root}/mode`, {
          token: owner.token,
          body: { mode: "replace", enabled: false }
        })
        expect(disabled.body).toEqual({ org_id: orgId, mode: "replace", enabled: false })
        const none = (yield* effective(agentId)).body
        expect(none).toMatchObject({ mode: "replace", enabled: false })
        // Without the organization layer, the agent's value of an organization value's name is no longer shadowed.
        expect(none.values.map((value: any) => value.name)).toEqual([...defaultNames, "agent-belief", "no-competitors"])
        expect((yield* api.call("GET", root, { token: owner.token })).body).toMatchObject({
          mode: "replace",
          enabled: false
        })

        // Back to augment: the organization's order decides the order of its layer.
        yield* api.call("PUT", `${root}/mode`, { token: owner.token, body: { mode: "augment", enabled: true } })
        const ids = (yield* api.call("GET", root, { token: owner.token })).body.values.map((v: any) => v.value_id)
        yield* api.call("PUT", `${root}/order`, { token: owner.token, body: { order: [...ids].reverse() } })
        const reordered = (yield* effective(agentId)).body.values.filter((value: any) => value.layer === "org")
        expect(reordered.map((value: any) => value.name)).toEqual(["plain-words", "no-competitors"])

        // An agent outside any organization: the defaults, then its own values.
        const personal = (yield* effective(api.fixtures.agentA)).body
        expect(personal).toMatchObject({ org_id: null, mode: "augment", enabled: true })
        expect(personal.values.filter((value: any) => value.layer !== "base")).toEqual([])
        expect(personal.values_hash).toBe(valuesHash(DEFAULT_CONSCIENCE_VALUES))
      })
  )

  it.effect("an agent claimed into an organization gets its values at the gateways at once", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const state = yield* AgentState
      const { owner } = api.fixtures
      const { orgId, root } = yield* freshOrg
      yield* create(root, { type: "BOUNDARY", name: "org-line", content: "Never do X.", severity: "mandatory" })
      const claimed = yield* api.call("POST", "/v1/agents/claim", {
        token: owner.token,
        body: { provider_key: `sk-test-${randomUUID()}`, org_id: orgId }
      })
      expect(claimed.status, JSON.stringify(claimed.body)).toBeLessThan(300)
      const values = (yield* state.get(claimed.body.agent_id)).conscienceValues ?? []
      expect(values.map((value) => value.name)).toContain("org-line")
    })
  )

  it.effect("roles: Owner and Admin write, every member reads, the log is for Owner and Admin, others get 404", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { admin, member, owner, userB } = api.fixtures
      const { agentId, orgId, root } = yield* freshOrg
      const value = yield* create(root, { type: "HOPE", name: "shared", content: "c" })
      const adminKey = yield* api.createApiKey(admin.userId, { orgId, role: "admin" })
      const memberKey = yield* api.createApiKey(member.userId, { orgId, role: "member" })
      const ownerPersonalKey = yield* api.createApiKey(owner.userId)
      const otherOrgKey = yield* api.createApiKey(userB.userId, { orgId: api.fixtures.otherOrgId, role: "owner" })
      const impersonation = yield* api.call("POST", "/v1/admin/impersonate", {
        token: api.serviceRoleKey,
        body: { user_id: owner.userId, reason: "support" }
      })
      const impersonating = { token: impersonation.body.token as string }

      let n = 0
      const writes = () => {
        n++
        return [
          ["POST", root, { type: "HOPE", name: `w-${n}`, content: "c" }],
          ["PATCH", `${root}/${value.value_id}`, { content: `c${n}` }],
          ["PUT", `${root}/mode`, { mode: "augment", enabled: true }],
          ["PUT", `${root}/order`, undefined]
        ] as const
      }
      const reads = [`${root}`, `/v1/agents/${agentId}/conscience-values/effective`]
      const expectStatus = (credential: object, method: string, path: string, body: unknown, status: number) =>
        Effect.gen(function* () {
          const ids = (yield* api.call("GET", root, { token: owner.token })).body.values.map((v: any) => v.value_id)
          const sent = body === undefined && path.endsWith("/order") ? { order: ids } : body
          const response = yield* api.call(method, path, { ...credential, body: sent })
          expect(
            response.status,
            `${method} ${path} ${JSON.stringify(credential)}: ${JSON.stringify(response.body)}`
          ).toBe(status)
          if (status >= 400) expect(Object.keys(response.body)).toEqual(["error"])
        })

      const writers = [
        { token: owner.token },
        { token: admin.token },
        { apiKey: adminKey },
        { apiKey: ownerPersonalKey },
        { token: api.serviceRoleKey }
      ]
      for (const credential of writers) {
        for (const [method, path, body] of writes())
          yield* expectStatus(credential, method, path, body, method === "POST" ? 201 : 200)
        for (const path of reads) yield* expectStatus(credential, "GET", path, undefined, 200)
        yield* expectStatus(credential, "GET", `${root}/log`, undefined, 200)
      }
      for (const credential of [{ token: member.token }, { apiKey: memberKey }, impersonating]) {
        for (const [method, path, body] of writes()) yield* expectStatus(credential, method, path, body, 403)
        yield* expectStatus(credential, "DELETE", `${root}/${value.value_id}`, undefined, 403)
        for (const path of reads) yield* expectStatus(credential, "GET", path, undefined, 200)
      }
      // The log: members (and member-role keys) are refused; an impersonated Owner reads it.
      yield* expectStatus({ token: member.token }, "GET", `${root}/log`, undefined, 403)
      yield* expectStatus({ apiKey: memberKey }, "GET", `${root}/log`, undefined, 403)
      yield* expectStatus(impersonating, "GET", `${root}/log`, undefined, 200)
      for (const credential of [{ token: userB.token }, { apiKey: otherOrgKey }]) {
        for (const [method, path, body] of writes()) yield* expectStatus(credential, method, path, body, 404)
        yield* expectStatus(credential, "DELETE", `${root}/${value.value_id}`, undefined, 404)
        for (const path of [...reads, `${root}/log`]) yield* expectStatus(credential, "GET", path, undefined, 404)
      }
      // Unknown organizations: 404 for everyone, the service-role key included.
      const unknown = `/v1/orgs/org_${randomUUID()}/conscience-values`
      for (const credential of [{ token: owner.token }, { token: api.serviceRoleKey }]) {
        yield* expectStatus(credential, "GET", unknown, undefined, 404)
        yield* expectStatus(credential, "POST", unknown, { type: "HOPE", name: "x", content: "c" }, 404)
        yield* expectStatus(credential, "GET", `${unknown}/log`, undefined, 404)
      }
      yield* expectStatus({}, "GET", root, undefined, 401)
    })
  )

  it.effect("the change log: who did what, with the diff, newest first", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { admin, owner } = api.fixtures
      const { orgId, root } = yield* freshOrg
      const value = yield* create(root, { type: "HOPE", name: "logged", content: "one" })
      const path = `${root}/${value.value_id}`
      yield* api.call("PATCH", path, { token: admin.token, body: { content: "two", name: "logged-2" } })
      yield* api.call("PATCH", path, { token: admin.token, body: { is_active: false } })
      yield* api.call("PATCH", path, { token: owner.token, body: { is_active: true, severity: "mandatory" } })
      yield* api.call("PUT", `${root}/order`, { token: owner.token, body: { order: [value.value_id] } })
      yield* api.call("PUT", `${root}/mode`, { token: api.serviceRoleKey, body: { mode: "replace" } })
      yield* api.call("DELETE", path, { token: owner.token })

      const log = yield* api.call("GET", `${root}/log`, { token: admin.token })
      expect(log.status).toBe(200)
      expect(log.body.org_id).toBe(orgId)
      const entries = [...log.body.entries].reverse()
      expect(entries.map((entry: any) => [entry.action, entry.actor, entry.value_id])).toEqual([
        ["create", owner.userId, value.value_id],
        ["update", admin.userId, value.value_id],
        ["deactivate", admin.userId, value.value_id],
        ["activate", owner.userId, value.value_id],
        ["reorder", owner.userId, null],
        ["mode_change", "service", null],
        ["delete", owner.userId, value.value_id]
      ])
      expect(entries[0].changes).toEqual({
        type: { from: null, to: "HOPE" },
        name: { from: null, to: "logged" },
        content: { from: null, to: "one" },
        severity: { from: null, to: "advisory" },
        is_active: { from: null, to: true }
      })
      expect(entries[1].changes).toEqual({
        name: { from: "logged", to: "logged-2" },
        content: { from: "one", to: "two" }
      })
      expect(entries[2].changes).toEqual({ is_active: { from: true, to: false } })
      expect(entries[3].changes).toEqual({
        severity: { from: "advisory", to: "mandatory" },
        is_active: { from: false, to: true }
      })
      expect(entries[4].changes).toEqual({ order: { from: [value.value_id], to: [value.value_id] } })
      expect(entries[5].changes).toEqual({ mode: { from: "augment", to: "replace" } })
      expect(entries[6].changes).toMatchObject({
        name: { from: "logged-2", to: null },
        type: { from: "HOPE", to: null }
      })
      for (const entry of entries) expect(Date.parse(entry.created_at)).not.toBeNaN()
      const page = yield* api.call("GET", `${root}/log?limit=2&offset=1`, { token: owner.token })
      expect(page.body.entries.map((entry: any) => entry.action)).toEqual(["mode_change", "reorder"])
      expect((yield* api.call("GET", `${root}/log?limit=0`, { token: owner.token })).status).toBe(400)
    })
  )

  it.effect("every change is on the organization's governance log, with the values_hash of its active values", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const governance = yield* GovernanceLog
      const { owner } = api.fixtures
      const { orgId, root } = yield* freshOrg
      const value = yield* create(root, { type: "FEAR", name: "gov", content: "c", severity: "mandatory" })
      yield* api.call("PATCH", `${root}/${value.value_id}`, { token: owner.token, body: { content: "d" } })
      yield* api.call("PATCH", `${root}/${value.value_id}`, { token: owner.token, body: { is_active: false } })
      yield* api.call("PATCH", `${root}/${value.value_id}`, { token: owner.token, body: { is_active: true } })
      yield* api.call("PUT", `${root}/order`, { token: owner.token, body: { order: [value.value_id] } })
      yield* api.call("PUT", `${root}/mode`, { token: owner.token, body: { enabled: false } })
      yield* api.call("DELETE", `${root}/${value.value_id}`, { token: owner.token })

      const { entries, size } = yield* governance.entries(orgGovernanceLog(orgId), 0, 100)
      expect(size).toBe(7)
      expect(entries.map((entry) => entry.record.action)).toEqual([
        "conscience.create",
        "conscience.update",
        "conscience.deactivate",
        "conscience.activate",
        "conscience.reorder",
        "conscience.mode_change",
        "conscience.delete"
      ])
      const active = (content: string): ConscienceValue => ({
        type: "FEAR",
        name: "gov",
        content,
        id: value.value_id,
        severity: "mandatory"
      })
      expect(entries.map((entry) => entry.record.hashes.values_hash)).toEqual([
        valuesHash([active("c")]),
        valuesHash([active("d")]),
        valuesHash([]),
        valuesHash([active("d")]),
        valuesHash([active("d")]),
        valuesHash([active("d")]),
        valuesHash([])
      ])
      for (const entry of entries) {
        expect(entry.record.actor).toBe(owner.userId)
        expect(entry.record.origin).toBe(`${TEST_LOG_ORIGIN}/orgs/${orgId}/governance`)
      }
      expect(entries[5]!.record.previous_state).toMatchObject({ mode: "augment", enabled: true })
      expect(entries[5]!.record.new_state).toMatchObject({ mode: "augment", enabled: false })
      // A refused change leaves no entry.
      yield* api.call("POST", root, { token: owner.token, body: { type: "HOPE", name: "", content: "c" } })
      expect((yield* governance.entries(orgGovernanceLog(orgId), 0, 100)).size).toBe(7)

      // Each one verifies against the signed tree head the governance-log route serves, for any member.
      const key = (yield* SigningKeys).active
      const verifiers = [{ name: `${TEST_LOG_ORIGIN}/orgs/${orgId}/governance`, publicKey: key.publicKey }]
      for (let index = 0; index < 7; index++) {
        const proof = yield* api.call("GET", `/v1/orgs/${orgId}/governance-log/${index}/inclusion-proof`, {
          token: api.fixtures.member.token
        })
        expect(proof.status).toBe(200)
        expect(proof.body.record.action).toBe(entries[index]!.record.action)
        expect(
          verifyGovernanceEntry({
            record: proof.body.record,
            index,
            auditPath: proof.body.audit_path,
            signedTreeHead: proof.body.signed_tree_head,
            verifiers
          })
        ).toEqual({ ok: true })
      }
    })
  )

  it.effect("agent-level changes are on the agent's governance log: card.update and conscience.agent_values", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const governance = yield* GovernanceLog
      const { agentId, root } = yield* freshOrg
      yield* create(root, { type: "HOPE", name: "org-hope", content: "c" })
      const values: ReadonlyArray<ConscienceValue> = [{ type: "BELIEF", name: "own", content: "Own belief." }]
      const card = cardFor(agentId, `card-${randomUUID().slice(0, 8)}`)
      const patched = yield* api.call("PATCH", `/v1/agents/${agentId}/card`, {
        token: api.serviceRoleKey,
        body: { card_json: card, conscience_values: values }
      })
      expect(patched.status).toBe(200)
      const afterCard = (yield* effective(agentId)).body.values_hash
      const put = yield* api.call("PUT", `/v1/agents/${agentId}/conscience-values`, {
        token: api.fixtures.admin.token,
        body: { conscience_values: [] }
      })
      expect(put.status).toBe(200)
      const afterPut = (yield* effective(agentId)).body.values_hash
      const { entries } = yield* governance.entries(agentGovernanceLog(agentId), 0, 100)
      expect(entries.map((entry) => entry.record.action)).toEqual(["card.update", "conscience.agent_values"])
      expect(entries[0]!.record).toMatchObject({
        actor: "service",
        new_state: { card_id: card.card_id, version: 1, values_hash: afterCard },
        hashes: { card_hash: expect.stringMatching(/^[0-9a-f]{64}$/), values_hash: afterCard }
      })
      expect(entries[1]!.record).toMatchObject({
        actor: api.fixtures.admin.userId,
        previous_state: { values_hash: afterCard },
        hashes: { values_hash: afterPut }
      })
      expect(afterPut).not.toBe(afterCard)
    })
  )

  it.effect("every change writes one conscience.values_updated event for the organization, whatever its agents", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { owner } = api.fixtures
      const { orgId, root } = yield* freshOrg
      yield* api.claimAgent({ userId: owner.userId, orgId })
      const value = yield* create(root, { type: "HOPE", name: "hooked", content: "SHOULD-NOT-LEAK" })
      yield* api.call("PUT", `${root}/mode`, { token: owner.token, body: { mode: "replace" } })

      const events = yield* outboxEvents({ orgId, type: "conscience.values_updated" })
      expect(events.map((e) => e.data)).toEqual([
        { org_id: orgId, action: "create", value_id: value.value_id, actor: owner.userId },
        { org_id: orgId, action: "mode_change", value_id: null, actor: owner.userId }
      ])
      // Organization events: no agent; one id per change, from its log entry.
      expect(events.every((e) => e.org_id === orgId && e.agent_id === undefined)).toBe(true)
      expect(new Set(events.map((e) => e.id)).size).toBe(2)
      expect(JSON.stringify(events)).not.toContain("SHOULD-NOT-LEAK")
    })
  )
})

/** Shared state whose writes fail, as KvAgentState's do once NATS stays unreachable past its retries. */
const unwritableState = Layer.effect(
  AgentState,
  Effect.map(AgentState, (state) =>
    AgentState.of({
      ...state,
      update: () => Effect.fail(new BusError({ operation: "write agent settings", cause: "connection closed" }))
    })
  )
).pipe(Layer.provide(AgentState.layerMemory))

layer(harness({ agentState: unwritableState }), { timeout: "60 seconds" })("conscience values, bus down", (it) => {
  it.effect("a change the gateways cannot be told of is stored, and answered 503", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { owner } = api.fixtures
      const { root } = yield* freshOrg
      const response = yield* api.call("POST", root, {
        token: owner.token,
        body: { type: "BOUNDARY", name: "kept", content: "c", severity: "mandatory" }
      })
      expect(response.status).toBe(503)
      expect(response.body.error).toContain("send it again")
      expect((yield* api.call("GET", root, { token: owner.token })).body.values.map((v: any) => v.name)).toEqual([
        "kept"
      ])
    })
  )
})

const PARTITIONS = 4

/** The API and the workers in one process, on the embedded default: what `candor serve` runs. */
const withWorkers = Layer.scopedDiscard(runWorkers({ logOrigin: TEST_LOG_ORIGIN, subjectPrefix: "candor" })).pipe(
  Layer.provideMerge(
    Layer.mergeAll(Bus.layerMemoryWith({ partitions: PARTITIONS }), PartitionOwnership.layerAll(PARTITIONS))
  ),
  Layer.provideMerge(harness())
)

const highConcern = (value: string): Concern => ({
  category: "value_misalignment",
  severity: "high",
  description: "acts against a conscience value",
  evidence: "evidence",
  relevant_conscience_value: value
})

layer(withWorkers, { timeout: "120 seconds", excludeTestServices: true })("conscience values and the workers", (it) => {
  it.effect(
    "a certificate committed after a change binds the effective values_hash; mandatory values are boundaries, advisory ones are not",
    () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const store = yield* Store
        const bus = yield* Bus
        const { owner } = api.fixtures
        const { agentId, orgId, root } = yield* freshOrg
        let published = 0
        /** Publishes an event with these concerns and waits for its certificate. */
        const attested = (concerns: ReadonlyArray<Concern>) =>
          Effect.gen(function* () {
            const event = gatewayEvent(agentId, { concerns })
            yield* bus.publish(eventSubject(agentId, "candor", PARTITIONS), event)
            yield* awaitCommitted([agentId], ++published)
            const id = event.checkpoint.checkpoint_id
            return { checkpoint: (yield* store.getCheckpoint(id))!, certificate: (yield* store.getCertificate(id))! }
          })

        // The actor loads its context (the defaults) with the first event.
        const first = yield* attested([])
        const before = (yield* effective(agentId)).body.values_hash
        expect(first.certificate.input_commitments.values_hash).toBe(before)

        // Within the context TTL, a change reaches the next certificate.
        yield* create(root, {
          type: "COMMITMENT",
          name: "no-competitors",
          content: "Never recommend a competitor.",
          severity: "mandatory"
        })
        yield* create(root, { type: "BOUNDARY", name: "soft-line", content: "Avoid jargon.", severity: "advisory" })
        const after = (yield* effective(agentId)).body.values_hash
        expect(after).not.toBe(before)
        const mandatory = yield* attested([highConcern("no-competitors")])
        expect(mandatory.certificate.input_commitments.values_hash).toBe(after)
        expect(mandatory.certificate.claims.boundary_values).toContain("no-competitors")
        expect(mandatory.certificate.claims.boundary_values).not.toContain("soft-line")
        expect(mandatory.checkpoint.verdict).toBe("boundary_violation")

        const advisory = yield* attested([highConcern("soft-line")])
        expect(advisory.checkpoint.verdict).toBe("review_needed")
        // The verdicts' events, committed with them, name the agent's organization.
        const verdicts = yield* outboxEvents({ agentId })
        expect(verdicts.map((e) => [e.type, e.org_id, (e.data as { checkpoint_id: string }).checkpoint_id])).toEqual([
          ["verdict.boundary_violation", orgId, mandatory.checkpoint.checkpoint_id],
          ["verdict.review_needed", orgId, advisory.checkpoint.checkpoint_id]
        ])

        // Deactivated: no longer in force, at once.
        const id = (yield* api.call("GET", root, { token: owner.token })).body.values[0].value_id
        yield* api.call("PATCH", `${root}/${id}`, { token: owner.token, body: { is_active: false } })
        const deactivated = (yield* effective(agentId)).body.values_hash
        const last = yield* attested([highConcern("no-competitors")])
        expect(last.certificate.input_commitments.values_hash).toBe(deactivated)
        expect(last.checkpoint.verdict).toBe("review_needed")
      })
  )
})
