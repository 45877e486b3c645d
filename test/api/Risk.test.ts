/**
 * The risk routes over HTTP: an assessment recorded, read back and listed; its record checked
 * offline (the result recomputed with core/Risk.ts from the record's inputs, the signature checked
 * with the key GET /v1/keys lists); team assessments; the proof route; 400s naming the field and
 * 404s for agents and records the caller may not read.
 */
import { describe, expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { fromBase64 } from "../../core/Bytes.js"
import { assessRisk, assessTeamRisk } from "../../core/Risk.js"
import { verifyRiskSignature } from "../../core/RiskSignature.js"
import type { RiskAssessment, TeamRiskAssessment } from "../../core/schema/Risk.js"
import { seed } from "./AgentData.js"
import { ApiHarness, layer as harness } from "./Support.js"

/** An agent of the fixtures' organization with `checkpoints` committed (every third a boundary violation). */
const orgAgentWith = (checkpoints: number) =>
  Effect.gen(function* () {
    const api = yield* ApiHarness
    const agentId = yield* api.claimAgent({ userId: api.fixtures.owner.userId, orgId: api.fixtures.orgId })
    if (checkpoints > 0) yield* Effect.orDie(seed(agentId, checkpoints))
    return agentId
  })

/** The public key GET /v1/keys lists under `keyId` (anonymous: anyone can fetch it). */
const publishedKey = (keyId: string) =>
  Effect.gen(function* () {
    const api = yield* ApiHarness
    const keys = yield* api.call("GET", "/v1/keys")
    expect(keys.status).toBe(200)
    const key = keys.body.keys.find((k: { key_id: string }) => k.key_id === keyId)
    expect(key, `key ${keyId} listed`).toBeDefined()
    return fromBase64(key.public_key)!
  })

/** What a third party does with an individual record: recompute, then check the signature. */
const checkOffline = (record: RiskAssessment) =>
  Effect.gen(function* () {
    expect(assessRisk(record.context, record.inputs)).toEqual(record.result)
    const publicKey = yield* publishedKey(record.key_id)
    expect(verifyRiskSignature(record, publicKey)).toBe(true)
    // Any change to what was signed breaks it.
    expect(verifyRiskSignature({ ...record, result: { ...record.result, decision: "approve" } }, publicKey)).toBe(
      record.result.decision === "approve"
    )
    expect(verifyRiskSignature({ ...record, agent_id: `${record.agent_id}x` }, publicKey)).toBe(false)
  })

layer(harness(), { timeout: "120 seconds" })("risk API", (it) => {
  describe("individual", () => {
    it.effect("a member assesses an agent: the signed record checks offline, reads back, is listed and proved", () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const token = api.fixtures.member.token
        const agentId = yield* orgAgentWith(6)
        const res = yield* api.call("POST", "/v1/risk/assess", {
          token,
          body: { agent_id: agentId, context: { action_type: "financial_transaction", amount: 250 } }
        })
        expect(res.status, JSON.stringify(res.body)).toBe(200)
        const record = res.body as RiskAssessment
        expect(record.assessment_id).toMatch(/^ra-/)
        expect(record.context).toEqual({
          action_type: "financial_transaction",
          amount: 250,
          risk_tolerance: "moderate"
        })
        // Six checkpoints: positions 2 and 5 are boundary violations with a high concern.
        expect(record.inputs.recency.by_severity.high.count).toBe(2)
        expect(record.inputs.recency.by_severity.critical.count).toBe(0)
        expect(record.inputs.reputation.confidence).toBe("insufficient")
        expect(record.inputs.reputation.computed_over.tree_size).toBe(6)
        expect(record.result.components.confidence_penalty).toBe(0.3)
        expect(record.result.components.recency).toBeGreaterThan(0)
        yield* checkOffline(record)

        const again = yield* api.call("GET", `/v1/risk/assessments/${record.assessment_id}`, { token })
        expect(again.status).toBe(200)
        expect(again.body).toEqual(record)

        const history = yield* api.call("GET", `/v1/risk/history/${agentId}?limit=5`, { token })
        expect(history.status).toBe(200)
        expect(history.body).toMatchObject({ agent_id: agentId, total: 1, limit: 5, offset: 0 })
        expect(history.body.assessments).toEqual([record])

        const proof = yield* api.call("GET", `/v1/risk/proofs/${record.assessment_id}`, { token })
        expect(proof.status).toBe(200)
        expect(proof.body).toMatchObject({
          assessment_id: record.assessment_id,
          kind: "individual",
          status: "verified",
          record,
          verification: { algorithm: "Ed25519", key_id: record.key_id, keys_url: "/v1/keys" }
        })
        expect(fromBase64(proof.body.verification.public_key)).toEqual(yield* publishedKey(record.key_id))
      })
    )

    it.effect("history is newest first and pages; the tolerance moves the level, not the score", () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const token = api.fixtures.owner.token
        const agentId = yield* orgAgentWith(3)
        const scores: Array<RiskAssessment> = []
        for (const risk_tolerance of ["conservative", "moderate", "aggressive"]) {
          const res = yield* api.call("POST", "/v1/risk/assess", {
            token,
            body: { agent_id: agentId, context: { action_type: "data_access", risk_tolerance } }
          })
          expect(res.status).toBe(200)
          scores.push(res.body)
        }
        expect(new Set(scores.map((s) => s.result.risk_score)).size).toBe(1)
        const page = yield* api.call("GET", `/v1/risk/history/${agentId}?limit=2&offset=1`, { token })
        expect(page.body.total).toBe(3)
        const all = yield* api.call("GET", `/v1/risk/history/${agentId}`, { token })
        const ids = all.body.assessments.map((a: RiskAssessment) => a.assessment_id)
        expect(page.body.assessments.map((a: RiskAssessment) => a.assessment_id)).toEqual(ids.slice(1, 3))
        expect(ids).toHaveLength(3)
      })
    )

    it.effect("400 names the field; 404 for an agent or a record the caller may not read", () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const { member, userB } = api.fixtures
        const agentId = yield* orgAgentWith(0)
        const bad = (body: unknown) => api.call("POST", "/v1/risk/assess", { token: member.token, body })
        for (const [body, field] of [
          [{ agent_id: agentId, context: {} }, "action_type"],
          [{ agent_id: agentId, context: { action_type: "launch_rockets" } }, "action_type"],
          [
            { agent_id: agentId, context: { action_type: "data_access", risk_tolerance: "reckless" } },
            "risk_tolerance"
          ],
          [{ agent_id: agentId, context: { action_type: "data_access", amount: -1 } }, "amount"],
          [{ context: { action_type: "data_access" } }, "agent_id"]
        ] as const) {
          const res = yield* bad(body)
          expect(res.status, JSON.stringify(body)).toBe(400)
          expect(res.body.error).toContain(field)
        }
        const unknown = yield* bad({ agent_id: "no-such-agent", context: { action_type: "data_access" } })
        expect(unknown).toMatchObject({ status: 404, body: { error: "agent no-such-agent not found" } })
        const asService = yield* api.call("POST", "/v1/risk/assess", {
          token: api.serviceRoleKey,
          body: { agent_id: "no-such-agent", context: { action_type: "data_access" } }
        })
        expect(asService.status).toBe(404)

        const made = yield* bad({ agent_id: agentId, context: { action_type: "data_access" } })
        expect(made.status).toBe(200)
        const other = { token: userB.token }
        const outsider = yield* api.call("POST", "/v1/risk/assess", {
          ...other,
          body: { agent_id: agentId, context: { action_type: "data_access" } }
        })
        expect(outsider.status).toBe(404)
        for (const path of [
          `/v1/risk/assessments/${made.body.assessment_id}`,
          `/v1/risk/proofs/${made.body.assessment_id}`,
          `/v1/risk/history/${agentId}`,
          `/v1/risk/assessments/ra-unknown`
        ]) {
          const res = yield* api.call("GET", path, path.includes("unknown") ? { token: member.token } : other)
          expect(res.status, path).toBe(404)
        }
        // An individual id is not a team assessment.
        const asTeam = yield* api.call("GET", `/v1/risk/team-assessments/${made.body.assessment_id}`, {
          token: member.token
        })
        expect(asTeam.status).toBe(404)
      })
    )
  })

  describe("team", () => {
    it.effect("a team assessment: members assessed with the team's context, the team formula, offline check", () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const token = api.fixtures.member.token
        const a = yield* orgAgentWith(3)
        const b = yield* orgAgentWith(0)
        const res = yield* api.call("POST", "/v1/risk/assess/team", {
          token,
          body: {
            agent_ids: [a, b],
            context: { action_type: "multi_agent_coordination", coordination_mode: "sequential" }
          }
        })
        expect(res.status, JSON.stringify(res.body)).toBe(200)
        const record = res.body as TeamRiskAssessment
        expect(record.assessment_id).toMatch(/^rta-/)
        expect(record.members.map((m) => m.agent_id)).toEqual([a, b])
        for (const m of record.members) expect(assessRisk(record.context, m.inputs)).toEqual(m.result)
        expect(
          assessTeamRisk(
            record.context,
            record.members.map((m) => ({ ...m, reputation_score: m.inputs.reputation.score }))
          )
        ).toEqual(record.result)
        expect(record.result.components.weakest_weight).toBe(0.6)
        expect(verifyRiskSignature(record, yield* publishedKey(record.key_id))).toBe(true)

        const again = yield* api.call("GET", `/v1/risk/team-assessments/${record.assessment_id}`, { token })
        expect(again.body).toEqual(record)
        const proof = yield* api.call("GET", `/v1/risk/proofs/${record.assessment_id}`, { token })
        expect(proof.body).toMatchObject({ kind: "team", status: "verified", record })
        const asIndividual = yield* api.call("GET", `/v1/risk/assessments/${record.assessment_id}`, { token })
        expect(asIndividual.status).toBe(404)
        // Readable only by who may read every member.
        const outsider = yield* api.call("GET", `/v1/risk/team-assessments/${record.assessment_id}`, {
          token: api.fixtures.userB.token
        })
        expect(outsider.status).toBe(404)
      })
    )

    it.effect("2 to 50 distinct agents, a coordination mode, and every agent readable", () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const token = api.fixtures.member.token
        const a = yield* orgAgentWith(0)
        const context = { action_type: "task_delegation", coordination_mode: "parallel" }
        const call = (body: unknown) => api.call("POST", "/v1/risk/assess/team", { token, body })
        for (const [body, field] of [
          [{ agent_ids: [a], context }, "agent_ids"],
          [{ agent_ids: [a, a], context }, "agent_ids"],
          [{ agent_ids: Array.from({ length: 51 }, (_, i) => `x${i}`), context }, "agent_ids"],
          [{ agent_ids: [a, "b"], context: { action_type: "task_delegation" } }, "coordination_mode"],
          [{ agent_ids: [a, "b"], context: { ...context, coordination_mode: "anarchy" } }, "coordination_mode"]
        ] as const) {
          const res = yield* call(body)
          expect(res.status, JSON.stringify(body)).toBe(400)
          expect(res.body.error).toContain(field)
        }
        const foreign = yield* call({ agent_ids: [a, api.fixtures.agentB], context })
        expect(foreign).toMatchObject({ status: 404, body: { error: `agent ${api.fixtures.agentB} not found` } })
      })
    )
  })
})
