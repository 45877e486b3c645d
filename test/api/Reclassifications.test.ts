/**
 * Reclassification over HTTP: reclassify (201, the governance entry, 409 on a second, 400s naming
 * the field, 404 for another agent's checkpoint), the score effect (a card gap leaves compliance as
 * the formula says, a behaviour gap changes nothing, and the served score still verifies against the
 * certificates), the listings, the recompute route and the compliance export (JSON and CSV), and who
 * may do what.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { GovernanceLog } from "../../adapters/store/GovernanceLog.js"
import { agentGovernanceLog } from "../../core/Governance.js"
import { complianceOf, scoreOf, violationImpact } from "../../core/Reputation.js"
import { verifyReputation } from "../../core/ReputationVerification.js"
import { seed } from "./AgentData.js"
import { ApiHarness, type CallOptions, layer as harness } from "./Support.js"

const HOUR = 3_600_000

/**
 * An agent of the fixtures' organization with three checkpoints in one session, an hour apart and
 * ending an hour ago: clear, review_needed, boundary_violation (the fixtures' verdict cycle).
 */
const agentWithViolation = Effect.gen(function* () {
  const api = yield* ApiHarness
  const agentId = yield* api.claimAgent({ userId: api.fixtures.owner.userId, orgId: api.fixtures.orgId })
  const start = Date.now() - 3 * HOUR
  const inputs = yield* Effect.orDie(
    seed(agentId, 3, (input) => input, { timestamp: (p) => new Date(start + p * HOUR).toISOString() })
  )
  const ids = inputs.map((input) => input.checkpoint.checkpoint_id)
  return { agentId, clear: ids[0]!, review: ids[1]!, violation: ids[2]!, violationAt: inputs[2]!.checkpoint.timestamp }
})

const reclassify = (agentId: string, body: unknown, who: CallOptions) =>
  Effect.flatMap(ApiHarness, (api) => api.call("POST", `/v1/agents/${agentId}/reclassify`, { ...who, body }))

const governance = (agentId: string) =>
  Effect.flatMap(GovernanceLog, (logs) => logs.entries(agentGovernanceLog(agentId), 0, 100)).pipe(
    Effect.orDie,
    Effect.map((page) => page.entries)
  )

const compliance = (reputation: any) => reputation.components.find((c: any) => c.key === "compliance")

layer(harness(), { timeout: "120 seconds" })("reclassification API", (it) => {
  it.effect("a card gap: 201, the governance entry, compliance back to 1000 as the formula says, and it verifies", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { admin } = api.fixtures
      const { agentId, violation, violationAt } = yield* agentWithViolation
      const before = yield* api.call("GET", `/v1/reputation/${agentId}`)
      expect(before.status).toBe(200)
      const assess = Effect.map(
        api.call("POST", "/v1/risk/assess", {
          token: admin.token,
          body: { agent_id: agentId, context: { action_type: "tool_invocation" } }
        }),
        (res) => Object.values(res.body.inputs.recency.by_severity).reduce((n: number, s: any) => n + s.count, 0)
      )
      expect(yield* assess).toBe(1)
      const impact = violationImpact(violationAt, new Date(before.body.computed_at))
      expect(compliance(before.body).score).toBe(Math.round(complianceOf(impact)))
      expect(compliance(before.body).score).toBeLessThan(1000)

      const res = yield* reclassify(
        agentId,
        {
          checkpoint_id: violation,
          reason: "the card did not list the refund tool",
          new_type: "card_gap",
          card_amendment: { field_changed: "autonomy_envelope.bounded_actions", old_value: null, new_value: "refund" }
        },
        { token: admin.token }
      )
      expect(res.status).toBe(201)
      expect(res.body).toMatchObject({
        checkpoint_id: violation,
        original_verdict: "boundary_violation",
        new_type: "card_gap",
        approved_by: admin.userId,
        score_impact: { score_before: before.body.score }
      })
      expect(res.body.reclassification_id).toMatch(/^rcl-[0-9a-f-]{36}$/)

      const after = yield* api.call("GET", `/v1/reputation/${agentId}`)
      expect(res.body.score_impact.score_after).toBe(after.body.score)
      // Risk's recency no longer counts the violation either.
      expect(yield* assess).toBe(0)
      expect(compliance(after.body).score).toBe(1000)
      expect(compliance(after.body).inputs).toMatchObject({ violation_sessions: 0, card_gap_checkpoints: [violation] })
      // Only compliance moved: the score rose by its weight (0.2) times the compliance gained, rounded once.
      const others = (r: any) => r.components.filter((c: any) => c.key !== "compliance").map((c: any) => c.score)
      expect(others(after.body)).toEqual(others(before.body))
      const expected = scoreOf(
        before.body.components.map((c: any) => (c.key === "compliance" ? { ...c, score: 1000 } : c))
      )
      expect(after.body.score).toBe(expected)
      expect(after.body.score).toBeGreaterThan(before.body.score)

      // The certificate is unchanged, and the entry names it.
      const certificate = (yield* api.call("GET", `/v1/agents/${agentId}/certificates`)).body.certificates[2]
      expect(certificate.claims.verdict).toBe("boundary_violation")
      const entries = yield* governance(agentId)
      expect(entries.map((e) => e.record.action)).toEqual(["reclassification.create"])
      expect(entries[0]!.index).toBe(res.body.governance_index)
      expect(entries[0]!.record).toMatchObject({
        actor: admin.userId,
        reason: "the card did not list the refund tool",
        previous_state: { checkpoint_id: violation, verdict: "boundary_violation" },
        new_state: {
          reclassification_id: res.body.reclassification_id,
          checkpoint_id: violation,
          new_type: "card_gap"
        },
        hashes: { chain_hash: certificate.chain.hash }
      })

      // A third party recomputes the served score from the certificates and the published card gaps
      // (the fixtures sign with a key of their own, not listed: the signature checks are not this test's).
      const keys = (yield* api.call("GET", "/v1/keys")).body.keys
      const certificates = (yield* api.call("GET", `/v1/agents/${agentId}/certificates`)).body.certificates
      const report = verifyReputation(after.body, certificates, after.body.computed_over.checkpoint, keys)
      expect([report.checks.prefix, report.checks.chain, report.checks.merkle, report.checks.scores]).toEqual(
        Array(4).fill({ ok: true, errors: [] })
      )
      expect(report.recomputed.score).toBe(after.body.score)
      // Without the card gaps the verifier's compliance differs: the published list is what it rests on.
      const stripped = {
        ...after.body,
        components: after.body.components.map((c: any) =>
          c.key === "compliance" ? { ...c, inputs: { ...c.inputs, card_gap_checkpoints: undefined } } : c
        )
      }
      expect(verifyReputation(stripped, certificates, after.body.computed_over.checkpoint, keys).checks.scores.ok).toBe(
        false
      )

      const listed = yield* api.call("GET", `/v1/agents/${agentId}/reclassifications`, {
        token: api.fixtures.member.token
      })
      expect(listed.status).toBe(200)
      expect(listed.body.reclassifications).toHaveLength(1)
      expect(listed.body.reclassifications[0]).toMatchObject({
        reclassification_id: res.body.reclassification_id,
        chain_hash: certificate.chain.hash,
        new_type: "card_gap"
      })
      const amendments = yield* api.call("GET", `/v1/agents/${agentId}/card-amendments`, {
        token: api.fixtures.member.token
      })
      expect(amendments.body.card_amendments).toEqual([
        expect.objectContaining({
          reclassification_id: res.body.reclassification_id,
          field_changed: "autonomy_envelope.bounded_actions",
          old_value: null,
          new_value: "refund",
          triggered_by: "reclassification"
        })
      ])

      // 409 on a second reclassification of the same checkpoint, and nothing more is logged.
      const again = yield* reclassify(
        agentId,
        { checkpoint_id: violation, reason: "r", new_type: "behavior_gap" },
        {
          token: admin.token
        }
      )
      expect(again.status).toBe(409)
      expect(again.body.error).toContain("already reclassified")
      expect(yield* governance(agentId)).toHaveLength(1)

      // Recompute on request: nothing moved since, one reclassification applied.
      const recomputed = yield* api.call("POST", `/v1/reputation/${agentId}/recompute`, {
        token: admin.token,
        body: { reason: "audit" }
      })
      expect(recomputed.status).toBe(200)
      expect(recomputed.body).toEqual({
        agent_id: agentId,
        score_before: after.body.score,
        score_after: after.body.score,
        grade_before: after.body.grade,
        grade_after: after.body.grade,
        reclassifications_applied: 1,
        propagation: { agents_affected: 0, max_depth: 3, decay_factor: 0.85 }
      })
    })
  )

  it.effect("a behaviour gap confirms the verdict: the score does not move", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { agentId, violation } = yield* agentWithViolation
      const before = yield* api.call("GET", `/v1/reputation/${agentId}`)
      const res = yield* reclassify(
        agentId,
        { checkpoint_id: violation, reason: "real", new_type: "behavior_gap" },
        {
          token: api.fixtures.owner.token
        }
      )
      expect(res.status).toBe(201)
      expect(res.body.score_impact).toEqual({ score_before: before.body.score, score_after: before.body.score })
      const after = yield* api.call("GET", `/v1/reputation/${agentId}`)
      expect(after.body.components).toEqual(before.body.components)
      expect(
        (yield* api.call("GET", `/v1/agents/${agentId}/card-amendments`, { token: api.fixtures.owner.token })).body
      ).toEqual({ agent_id: agentId, card_amendments: [] })
    })
  )

  it.effect("400s name the field; 404 for another agent's or an unknown checkpoint", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { owner } = api.fixtures
      const { agentId, clear, violation } = yield* agentWithViolation
      const other = yield* agentWithViolation
      const who = { token: owner.token }
      const bad = [
        [{ checkpoint_id: clear, reason: "r", new_type: "card_gap" }, "checkpoint_id"],
        [{ checkpoint_id: violation, reason: "", new_type: "card_gap" }, "reason"],
        [{ checkpoint_id: violation, reason: "x".repeat(1001), new_type: "card_gap" }, "reason"],
        [{ checkpoint_id: violation, reason: "r", new_type: "other" }, "new_type"],
        [{ checkpoint_id: violation, new_type: "card_gap" }, "reason"],
        [{ reason: "r", new_type: "card_gap" }, "checkpoint_id"],
        [
          { checkpoint_id: violation, reason: "r", new_type: "card_gap", card_amendment: { old_value: null } },
          "field_changed"
        ]
      ] as const
      for (const [body, field] of bad) {
        const res = yield* reclassify(agentId, body, who)
        expect(res.status, JSON.stringify(body)).toBe(400)
        expect(res.body.error, JSON.stringify(body)).toContain(field)
      }
      for (const id of [other.violation, "ic-00000000-0000-0000-0000-000000000000"]) {
        const res = yield* reclassify(agentId, { checkpoint_id: id, reason: "r", new_type: "card_gap" }, who)
        expect(res.status).toBe(404)
      }
      expect(yield* governance(agentId)).toEqual([])
    })
  )

  it.effect("who may: Owner and Admin write; Members read; other users and unknown agents are 404", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { member, orgId, owner, userB } = api.fixtures
      const { agentId, review } = yield* agentWithViolation
      const memberKey = yield* api.createApiKey(owner.userId, { orgId, role: "member" })
      const body = { checkpoint_id: review, reason: "r", new_type: "card_gap" }
      expect((yield* reclassify(agentId, body, { token: member.token })).status).toBe(403)
      expect((yield* reclassify(agentId, body, { apiKey: memberKey })).status).toBe(403)
      expect((yield* reclassify(agentId, body, { token: userB.token })).status).toBe(404)
      expect((yield* reclassify(agentId, body, {})).status).toBe(401)
      const recompute = (who: CallOptions) =>
        api.call("POST", `/v1/reputation/${agentId}/recompute`, { ...who, body: {} })
      expect((yield* recompute({ token: member.token })).status).toBe(403)
      expect((yield* recompute({ token: userB.token })).status).toBe(404)
      expect((yield* recompute({ token: api.serviceRoleKey })).status).toBe(200)
      for (const path of ["reclassifications", "card-amendments", "compliance-export"]) {
        expect((yield* api.call("GET", `/v1/agents/${agentId}/${path}`, { token: member.token })).status).toBe(200)
        expect((yield* api.call("GET", `/v1/agents/${agentId}/${path}`, { token: userB.token })).status).toBe(404)
        expect((yield* api.call("GET", `/v1/agents/agt-nobody/${path}`, { token: api.serviceRoleKey })).status).toBe(
          404
        )
      }
      expect((yield* reclassify("agt-nobody", body, { token: api.serviceRoleKey })).status).toBe(404)
      const byService = yield* reclassify(agentId, body, { token: api.serviceRoleKey })
      expect(byService.status).toBe(201)
      expect(byService.body.approved_by).toBe("service")
    })
  )

  it.effect("compliance export: JSON and RFC 4180 CSV over the window, with the reclassification; window limits", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const who = { token: api.fixtures.owner.token }
      const { agentId, clear, review, violation } = yield* agentWithViolation
      const made = yield* reclassify(agentId, { checkpoint_id: review, reason: "r", new_type: "card_gap" }, who)
      // The server runs on the test clock: the window is given.
      const window = `from=${encodeURIComponent(new Date(Date.now() - 10 * HOUR).toISOString())}&to=${encodeURIComponent(new Date().toISOString())}`
      const json = yield* api.call("GET", `/v1/agents/${agentId}/compliance-export?${window}`, who)
      expect(json.status).toBe(200)
      expect(
        json.body.checkpoints.map((c: any) => [c.checkpoint_id, c.verdict, c.reclassification?.new_type ?? null])
      ).toEqual([
        [clear, "clear", null],
        [review, "review_needed", "card_gap"],
        [violation, "boundary_violation", null]
      ])
      expect(json.body.checkpoints[1].reclassification.reclassification_id).toBe(made.body.reclassification_id)
      expect(json.body.checkpoints[0].certificate_id).toBe(`cert-${clear}`)

      const csv = yield* api.call("GET", `/v1/agents/${agentId}/compliance-export?format=csv&${window}`, who)
      expect(csv.status).toBe(200)
      expect(csv.headers.get("content-type")).toContain("text/csv")
      const lines = String(csv.body).split("\r\n")
      expect(lines[0]).toBe(
        "checkpoint_id,session_id,timestamp,verdict,reclassification_id,reclassified_as,reclassified_at,certificate_id"
      )
      expect(lines).toHaveLength(5)
      expect(lines[2]).toContain(`${review},`)
      expect(lines[2]).toContain(`,card_gap,`)

      const narrow = yield* api.call(
        "GET",
        `/v1/agents/${agentId}/compliance-export?from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z`,
        who
      )
      expect(narrow.status).toBe(400)
      expect(narrow.body.error).toContain("from")
      const wide = yield* api.call(
        "GET",
        `/v1/agents/${agentId}/compliance-export?from=2020-01-01T00:00:00Z&to=2021-01-01T00:00:00Z`,
        who
      )
      expect(wide.status).toBe(400)
      expect(wide.body.error).toContain("92 days")
      const format = yield* api.call("GET", `/v1/agents/${agentId}/compliance-export?format=xml`, who)
      expect(format.status).toBe(400)
      expect(format.body.error).toContain("format")
    })
  )
})
