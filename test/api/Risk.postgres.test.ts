/**
 * Risk assessments on PostgreSQL: the violations read from the checkpoints' json bodies, the record
 * read back from its json column as the very document that was signed (its numbers' digits
 * unchanged, so the signature still verifies), and the history's count as pg returns it.
 */
import { expect } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { fromBase64 } from "../../core/Bytes.js"
import { assessRisk } from "../../core/Risk.js"
import { verifyRiskSignature } from "../../core/RiskSignature.js"
import type { RiskAssessment } from "../../core/schema/Risk.js"
import { layerIntegration } from "../support/Integration.js"
import { seed } from "./AgentData.js"
import { ApiHarness, layer as harness } from "./Support.js"

layerIntegration("postgres", harness({ database: "postgres" }), { timeout: "90 seconds" })(
  "risk on PostgreSQL",
  (it) => {
    it.effect("a record issued, read back byte-for-byte, recomputed and verified", () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const token = api.fixtures.owner.token
        const agentId = yield* api.claimAgent({ userId: api.fixtures.owner.userId, orgId: api.fixtures.orgId })
        yield* Effect.orDie(seed(agentId, 9))
        const made = yield* api.call("POST", "/v1/risk/assess", {
          token,
          body: { agent_id: agentId, context: { action_type: "autonomous_operation", risk_tolerance: "conservative" } }
        })
        expect(made.status, JSON.stringify(made.body)).toBe(200)
        const record = made.body as RiskAssessment
        expect(record.inputs.recency.by_severity.high.count).toBe(3)
        const read = yield* api.call("GET", `/v1/risk/assessments/${record.assessment_id}`, { token })
        expect(read.body).toEqual(record)
        expect(assessRisk(read.body.context, read.body.inputs)).toEqual(read.body.result)
        const keys = yield* api.call("GET", "/v1/keys")
        const key = keys.body.keys.find((k: { key_id: string }) => k.key_id === record.key_id)
        expect(verifyRiskSignature(read.body, fromBase64(key.public_key)!)).toBe(true)
        const history = yield* api.call("GET", `/v1/risk/history/${agentId}`, { token })
        expect(history.body).toMatchObject({ total: 1 })
        const proof = yield* api.call("GET", `/v1/risk/proofs/${record.assessment_id}`, { token })
        expect(proof.body).toMatchObject({ status: "verified" })
      })
    )
  }
)
