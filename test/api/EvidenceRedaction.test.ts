/**
 * An organization's evidence redaction over HTTP: who may read and set it, the refusals with their
 * `{error}`, the governance entry, and what reaches the gateways (every agent of the organization,
 * at once).
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { randomUUID } from "node:crypto"
import { AgentState } from "../../adapters/bus/AgentState.js"
import { GovernanceLog } from "../../adapters/store/GovernanceLog.js"
import { orgGovernanceLog } from "../../core/Governance.js"
import { ApiHarness, freshOrganization, layer as harness } from "./Support.js"

const freshOrg = Effect.gen(function* () {
  const api = yield* ApiHarness
  const orgId = yield* freshOrganization("Redaction")
  const agentId = yield* api.claimAgent({ userId: api.fixtures.owner.userId, orgId })
  return { orgId, agentId, path: `/v1/orgs/${orgId}/evidence-redaction` }
})

layer(harness(), { timeout: "120 seconds" })("organization evidence redaction", (it) => {
  it.effect("Owner and Admin set it, members read it, a Member is refused 403, no credential 401, a bad mode 400", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { admin, member, owner } = api.fixtures
      const { orgId, path } = yield* freshOrg

      const initial = yield* api.call("GET", path, { token: member.token })
      expect(initial).toMatchObject({ status: 200, body: { org_id: orgId, evidence_redaction: "none" } })

      const byOwner = yield* api.call("PUT", path, { token: owner.token, body: { mode: "mask" } })
      expect(byOwner).toMatchObject({ status: 200, body: { org_id: orgId, evidence_redaction: "mask" } })
      const byAdmin = yield* api.call("PUT", path, { token: admin.token, body: { mode: "omit" } })
      expect(byAdmin).toMatchObject({ status: 200, body: { org_id: orgId, evidence_redaction: "omit" } })
      expect((yield* api.call("GET", path, { token: member.token })).body.evidence_redaction).toBe("omit")

      const byMember = yield* api.call("PUT", path, { token: member.token, body: { mode: "none" } })
      expect(byMember.status).toBe(403)
      expect(typeof byMember.body.error).toBe("string")
      const anonymous = yield* api.call("PUT", path, { body: { mode: "none" } })
      expect(anonymous.status).toBe(401)
      expect(typeof anonymous.body.error).toBe("string")
      expect((yield* api.call("GET", path, {})).status).toBe(401)

      for (const body of [{ mode: "masked" }, { mode: "" }, {}, { mode: 1 }, "mask"]) {
        const bad = yield* api.call("PUT", path, { token: owner.token, body })
        expect(bad.status, JSON.stringify(body)).toBe(400)
        expect(Object.keys(bad.body)).toEqual(["error"])
      }
      // Nothing refused changed anything.
      expect((yield* api.call("GET", path, { token: owner.token })).body.evidence_redaction).toBe("omit")

      // Not a member, or no such organization: 404, as for the organization's other settings.
      const unknown = `/v1/orgs/org_${randomUUID()}/evidence-redaction`
      expect((yield* api.call("PUT", unknown, { token: owner.token, body: { mode: "mask" } })).status).toBe(404)
      expect((yield* api.call("GET", unknown, { token: api.serviceRoleKey })).status).toBe(404)
    })
  )

  it.effect("each change is on the organization's governance log, with the mode before and after", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { owner } = api.fixtures
      const { orgId, path } = yield* freshOrg
      for (const mode of ["mask", "mask", "none"])
        expect((yield* api.call("PUT", path, { token: owner.token, body: { mode } })).status).toBe(200)
      const { entries } = yield* (yield* GovernanceLog).entries(orgGovernanceLog(orgId), 0, 100)
      const mine = entries.filter((entry) => entry.record.action === "evidence_redaction.set")
      expect(mine.map((entry) => [entry.record.previous_state, entry.record.new_state])).toEqual([
        [{ evidence_redaction: "none" }, { evidence_redaction: "mask" }],
        [{ evidence_redaction: "mask" }, { evidence_redaction: "mask" }],
        [{ evidence_redaction: "mask" }, { evidence_redaction: "none" }]
      ])
      expect(mine.every((entry) => entry.record.actor === owner.userId)).toBe(true)
    })
  )

  it.effect("reaches the gateways' shared state for every agent of the organization", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const state = yield* AgentState
      const { owner } = api.fixtures
      const { agentId, orgId, path } = yield* freshOrg
      expect((yield* state.get(agentId)).evidenceRedaction ?? "none").toBe("none")
      expect((yield* api.call("PUT", path, { token: owner.token, body: { mode: "mask" } })).status).toBe(200)
      expect((yield* state.get(agentId)).evidenceRedaction).toBe("mask")
      const second = yield* api.claimAgent({ userId: owner.userId, orgId })
      expect((yield* api.call("PUT", path, { token: owner.token, body: { mode: "omit" } })).status).toBe(200)
      for (const id of [agentId, second]) expect((yield* state.get(id)).evidenceRedaction).toBe("omit")
    })
  )
})
