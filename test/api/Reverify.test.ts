/**
 * POST /v1/agents/{agent_id}/reverify/aip and /reverify over HTTP: verdicts and trace verifications
 * re-derived against the current card and conscience values, counted as docs/api.md
 * says, stored (with `re_evaluated_at` and `original_verdict`), batched by limit (at most 40) and
 * offset; and who may ask.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { SigningKeys } from "../../adapters/keys/SigningKeys.js"
import { GovernanceLog } from "../../adapters/store/GovernanceLog.js"
import { resolvedConscienceOf } from "../../adapters/store/OrgConscienceRepo.js"
import { Store } from "../../adapters/store/Store.js"
import { cardHash, valuesHash } from "../../core/Commitments.js"
import { agentGovernanceLog } from "../../core/Governance.js"
import { verifyReputation } from "../../core/ReputationVerification.js"
import type { Concern } from "../../core/schema/Concern.js"
import type { ConscienceValue } from "../../core/schema/Conscience.js"
import { PROTOCOL_DISCLAIMER } from "../../core/schema/Disclaimer.js"
import type { Verdict } from "../../core/schema/Verdict.js"
import { verifyGovernanceProof } from "../../src/cli/Verify.js"
import { cardFor, seed, withTrace } from "./AgentData.js"
import { ApiHarness, layer as harness } from "./Support.js"

const concern = (category: Concern["category"], severity: Concern["severity"], value?: string): Concern => ({
  category,
  severity,
  description: "d",
  evidence: "e",
  ...(value === undefined ? {} : { relevant_conscience_value: value })
})

const caused = (
  category: Concern["category"],
  severity: Concern["severity"],
  cause: NonNullable<Concern["cause"]>
): Concern => ({
  ...concern(category, severity, cause.relevant_card_field === "conscience_values" ? cause.value : undefined),
  cause
})

const WIRE: ConscienceValue = {
  type: "BOUNDARY",
  name: "no-wire-transfers",
  content: "Never move money without approval."
}
const OTHER: ConscienceValue = { type: "BOUNDARY", name: "no-shouting", content: "Never shout." }

/** Stored verdicts and concerns, oldest first: what each one re-derives to is in the test. */
const STORED: ReadonlyArray<{
  readonly verdict: Verdict
  readonly concerns: ReadonlyArray<Concern>
  readonly synthetic?: boolean
}> = [
  { verdict: "clear", concerns: [] },
  { verdict: "boundary_violation", concerns: [concern("value_misalignment", "high", WIRE.name)] },
  { verdict: "boundary_violation", concerns: [], synthetic: true },
  { verdict: "review_needed", concerns: [concern("undeclared_intent", "medium")] },
  { verdict: "boundary_violation", concerns: [concern("prompt_injection", "high")] },
  { verdict: "review_needed", concerns: [concern("autonomy_violation", "low")] }
]

layer(harness(), { timeout: "90 seconds" })("reverify API", (it) => {
  it.effect("AIP: re-derives non-clear verdicts against the values in force, stores the changes, counts them", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const store = yield* Store
      const { userA } = api.fixtures
      const agent = yield* api.claimAgent({ userId: userA.userId })
      const inputs = yield* seed(agent, STORED.length, (input, i) => ({
        ...input,
        checkpoint: {
          ...input.checkpoint,
          verdict: STORED[i]!.verdict,
          concerns: STORED[i]!.concerns,
          ...(STORED[i]!.synthetic ? { synthetic: true, synthetic_reason: "analysis_failed" as const } : {})
        }
      }))
      const id = (i: number) => inputs[i]!.checkpoint.checkpoint_id
      yield* store.putCard(agent, cardFor(agent, "card-now"))
      // The agent's values no longer include the BOUNDARY value checkpoint 1 was judged on.
      yield* store.putConscienceValues(agent, [OTHER])

      const path = `/v1/agents/${agent}/reverify/aip`
      const first = yield* api.call("POST", path, { token: userA.token })
      expect(first.status).toBe(200)
      expect(first.body).toEqual({
        agent_id: agent,
        card_id: "card-now",
        total_in_batch: 5,
        offset: 0,
        limit: 40,
        re_evaluated: 5,
        resolved_to_clear: 2,
        kept_non_clear: 3,
        results: [
          { checkpoint_id: id(5), previous_verdict: "review_needed", verdict: "clear", changed: true },
          {
            checkpoint_id: id(4),
            previous_verdict: "boundary_violation",
            verdict: "boundary_violation",
            changed: false
          },
          { checkpoint_id: id(3), previous_verdict: "review_needed", verdict: "review_needed", changed: false },
          { checkpoint_id: id(2), previous_verdict: "boundary_violation", verdict: "clear", changed: true },
          { checkpoint_id: id(1), previous_verdict: "boundary_violation", verdict: "review_needed", changed: true }
        ].map((result) => ({ ...result, dropped_concerns: [] })),
        errors: [],
        governance_index: expect.any(Number),
        disclaimer: PROTOCOL_DISCLAIMER
      })

      // Stored: the changed ones carry the time and their original verdict; the others are untouched.
      const get = (i: number) =>
        Effect.map(api.call("GET", `/v1/agents/${agent}/checkpoints/${id(i)}`, { token: userA.token }), (r) => r.body)
      const one = yield* get(1)
      expect(one).toMatchObject({ verdict: "review_needed", original_verdict: "boundary_violation" })
      expect(Date.parse(one.re_evaluated_at)).not.toBeNaN()
      expect(yield* get(2)).toMatchObject({ verdict: "clear", original_verdict: "boundary_violation" })
      expect(yield* get(4)).toEqual(inputs[4]!.checkpoint)
      // The list's per-verdict totals follow.
      const total = (verdict: Verdict) =>
        Effect.map(
          api.call("GET", `/v1/agents/${agent}/checkpoints?verdict=${verdict}`, { token: userA.token }),
          (r) => r.body.total
        )
      expect([yield* total("clear"), yield* total("review_needed"), yield* total("boundary_violation")]).toEqual([
        3, 2, 1
      ])

      // Resolved checkpoints leave the batch; the others are evaluated again, unchanged.
      const second = yield* api.call("POST", path, { token: userA.token })
      expect(second.body).toMatchObject({
        total_in_batch: 3,
        re_evaluated: 3,
        resolved_to_clear: 0,
        kept_non_clear: 3,
        errors: []
      })
      expect(second.body.results.map((r: { changed: boolean }) => r.changed)).toEqual([false, false, false])

      // The value back in force: checkpoint 1 crosses the boundary again, its first verdict kept.
      yield* store.putConscienceValues(agent, [OTHER, WIRE])
      const third = yield* api.call("POST", `${path}?limit=1&offset=2`, { token: userA.token })
      expect(third.body).toMatchObject({
        total_in_batch: 1,
        limit: 1,
        offset: 2,
        kept_non_clear: 1,
        results: [
          { checkpoint_id: id(1), previous_verdict: "review_needed", verdict: "boundary_violation", changed: true }
        ]
      })
      expect(yield* get(1)).toMatchObject({ verdict: "boundary_violation", original_verdict: "boundary_violation" })
    })
  )

  it.effect(
    "AIP: a card or values update makes a concern's cause acceptable: the checkpoint resolves to clear, on the governance log, verifiable",
    () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const store = yield* Store
        const { userA } = api.fixtures
        const agent = yield* api.claimAgent({ userId: userA.userId })
        // Judged under card-1 (bounding `reply` only) with WIRE a BOUNDARY value in force.
        yield* store.putCard(agent, cardFor(agent, "card-1"))
        // Deceptive at high: a boundary violation whatever values are in force, so the certificate agrees.
        const onWire = caused("deceptive_reasoning", "high", {
          relevant_card_field: "conscience_values",
          value: WIRE.name
        })
        const unbounded = caused("autonomy_violation", "medium", {
          relevant_card_field: "autonomy_envelope.bounded_actions",
          action: "wire_transfer"
        })
        const JUDGED: ReadonlyArray<{ readonly verdict: Verdict; readonly concerns: ReadonlyArray<Concern> }> = [
          { verdict: "boundary_violation", concerns: [onWire, concern("undeclared_intent", "low")] },
          { verdict: "review_needed", concerns: [unbounded] },
          // The same concern with no cause: it keeps counting whatever the card now says.
          { verdict: "review_needed", concerns: [concern("autonomy_violation", "medium")] }
        ]
        const inputs = yield* seed(
          agent,
          JUDGED.length,
          (input, i) => ({
            ...input,
            checkpoint: {
              ...input.checkpoint,
              verdict: JUDGED[i]!.verdict,
              concerns: JUDGED[i]!.concerns,
              conscience_context: {
                ...input.checkpoint.conscience_context,
                values_checked: [`BOUNDARY:${WIRE.name}`],
                layers: { defaults: [], organization: [], agent: [{ type: "BOUNDARY", name: WIRE.name }] }
              }
            }
          }),
          {
            // One session each: drift (replayed by a verifier, stored by the workers) is not this test's.
            sessionId: (position) => `${agent}-session-${position}`,
            concerns: (position) =>
              JUDGED[position]!.concerns.map((c) => ({
                category: c.category,
                severity: c.severity,
                description: c.description,
                relevant_conscience_value: c.relevant_conscience_value ?? null
              }))
          }
        )
        const id = (i: number) => inputs[i]!.checkpoint.checkpoint_id
        // The card now bounds the wire transfer; WIRE is no longer in force.
        const now = cardFor(agent, "card-now", ["reply", "wire_transfer"])
        yield* store.putCard(agent, now)
        yield* store.putConscienceValues(agent, [OTHER])

        const response = yield* api.call("POST", `/v1/agents/${agent}/reverify/aip`, { token: userA.token })
        expect(response.status).toBe(200)
        expect(response.body).toMatchObject({
          total_in_batch: 3,
          re_evaluated: 3,
          resolved_to_clear: 2,
          kept_non_clear: 1,
          results: [
            {
              checkpoint_id: id(2),
              previous_verdict: "review_needed",
              verdict: "review_needed",
              changed: false,
              dropped_concerns: []
            },
            { checkpoint_id: id(1), previous_verdict: "review_needed", verdict: "clear", dropped_concerns: [0] },
            { checkpoint_id: id(0), previous_verdict: "boundary_violation", verdict: "clear", dropped_concerns: [0] }
          ],
          errors: []
        })

        // Served with the new verdict and the original one; the certificate stays as signed.
        const served = (yield* api.call("GET", `/v1/agents/${agent}/checkpoints/${id(0)}`, { token: userA.token })).body
        expect(served).toMatchObject({ verdict: "clear", original_verdict: "boundary_violation" })
        expect(Date.parse(served.re_evaluated_at)).not.toBeNaN()
        const certificateOf = (i: number) =>
          Effect.map(api.call("GET", `/v1/checkpoints/${id(i)}/certificate`, { token: userA.token }), (r) => r.body)
        const certificates = [yield* certificateOf(0), yield* certificateOf(1)]
        expect(certificates.map((c) => [c.signature, c.claims.verdict])).toEqual(
          [0, 1].map((i) => [
            inputs[i]!.attestation.certificate.signature,
            inputs[i]!.attestation.certificate.claims.verdict
          ])
        )

        // One aip.reevaluation entry: the hashes it ran against and what it changed.
        const entries = (yield* (yield* GovernanceLog).entries(agentGovernanceLog(agent), 0, 100).pipe(Effect.orDie))
          .entries
        const entry = entries.find((e) => e.index === response.body.governance_index)!
        expect(entry.record).toMatchObject({
          action: "aip.reevaluation",
          actor: userA.userId,
          previous_state: null,
          new_state: {
            rules_version: "candor-verdict/1",
            card_id: "card-now",
            offset: 0,
            limit: 40,
            changed: [
              { checkpoint_id: id(1), from: "review_needed", to: "clear", dropped_concerns: [0] },
              { checkpoint_id: id(0), from: "boundary_violation", to: "clear", dropped_concerns: [0] }
            ]
          },
          hashes: {
            card_hash: cardHash(now),
            values_hash: valuesHash((yield* resolvedConscienceOf(store, agent)).values)
          }
        })
        expect(entry.record.new_state).toMatchObject({ boundary_values: expect.not.arrayContaining([WIRE.name]) })

        // candor verify re-derives each changed verdict from its certificate less the dropped concerns.
        const proof = (yield* api.call("GET", `/v1/agents/${agent}/governance-log/${entry.index}/inclusion-proof`, {
          token: userA.token
        })).body
        const governanceKey = (yield* SigningKeys).active
        expect(verifyGovernanceProof(proof, [governanceKey], undefined, certificates)).toMatchObject({ valid: true })
        expect(verifyGovernanceProof(proof, [governanceKey], undefined).lines).toContain(
          "  re-evaluation  not checked: 2 changed verdict(s); give their certificates with --certificates"
        )
        const missing = verifyGovernanceProof(proof, [governanceKey], undefined, certificates.slice(1))
        expect(missing.valid).toBe(false)
        expect(missing.lines).toContain(`  - re-evaluation: ${id(0)}: its certificate was not given`)
        // A tampered entry: no concern dropped, yet still clear. The rule says otherwise (and the leaf no longer matches).
        const state = proof.record.new_state
        const tampered = {
          ...proof,
          record: {
            ...proof.record,
            new_state: { ...state, changed: [state.changed[0], { ...state.changed[1], dropped_concerns: [] }] }
          }
        }
        const refused = verifyGovernanceProof(tampered, [governanceKey], undefined, certificates)
        expect(refused.valid).toBe(false)
        expect(refused.lines).toContain(
          `  - re-evaluation: ${id(0)}: candor-verdict/1 over the certified concerns less [] gives boundary_violation, the entry says clear`
        )

        // The reputation counts the re-evaluated verdicts, citing the entry; a third party recomputes it
        // from the certificates and the published list (the fixtures sign with an unlisted key of their own).
        const reputation = (yield* api.call("GET", `/v1/reputation/${agent}`, { token: userA.token })).body
        const integrity = reputation.components.find((c: any) => c.key === "integrity_ratio")
        expect(integrity.inputs).toEqual({
          analysed: 3,
          analysed_clear: 2,
          reevaluated_checkpoints: [
            { checkpoint_id: id(0), verdict: "clear", governance_index: entry.index },
            { checkpoint_id: id(1), verdict: "clear", governance_index: entry.index }
          ].sort((a, b) => (a.checkpoint_id < b.checkpoint_id ? -1 : 1))
        })
        expect(reputation.components.find((c: any) => c.key === "compliance").inputs.violation_sessions).toBe(0)
        const keys = (yield* api.call("GET", "/v1/keys")).body.keys
        const log = (yield* api.call("GET", `/v1/agents/${agent}/certificates`, { token: userA.token })).body
          .certificates
        const report = verifyReputation(reputation, log, reputation.computed_over.checkpoint, keys)
        expect([report.checks.prefix, report.checks.chain, report.checks.merkle, report.checks.scores]).toEqual(
          Array(4).fill({ ok: true, errors: [] })
        )
        const stripped = {
          ...reputation,
          components: reputation.components.map((c: any) =>
            c.key === "integrity_ratio" ? { ...c, inputs: { ...c.inputs, reevaluated_checkpoints: undefined } } : c
          )
        }
        expect(verifyReputation(stripped, log, reputation.computed_over.checkpoint, keys).checks.scores.ok).toBe(false)

        // A call that changes nothing is on record too.
        const again = yield* api.call("POST", `/v1/agents/${agent}/reverify/aip`, { token: userA.token })
        expect(again.body).toMatchObject({ total_in_batch: 1, resolved_to_clear: 0, kept_non_clear: 1 })
        expect(again.body.governance_index).toBe(entry.index + 1)
      })
  )

  it.effect("AIP: a checkpoint whose concerns cannot be read is an error, not a failed batch", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const store = yield* Store
      const agent = yield* api.claimAgent({ userId: api.fixtures.userA.userId })
      const [broken, fine] = yield* seed(agent, 2, (input, i) => ({
        ...input,
        checkpoint: {
          ...input.checkpoint,
          verdict: "review_needed",
          concerns:
            i === 0
              ? [{ ...concern("undeclared_intent", "medium"), severity: "dire" as never }]
              : [concern("undeclared_intent", "low")]
        }
      }))
      yield* store.putCard(agent, cardFor(agent, "card-now"))
      const response = yield* api.call("POST", `/v1/agents/${agent}/reverify/aip`, { token: api.fixtures.userA.token })
      expect(response.body).toMatchObject({
        total_in_batch: 2,
        re_evaluated: 1,
        resolved_to_clear: 1,
        kept_non_clear: 0,
        results: [{ checkpoint_id: fine!.checkpoint.checkpoint_id, verdict: "clear", changed: true }],
        errors: [`${broken!.checkpoint.checkpoint_id}: stored concerns cannot be read`]
      })
    })
  )

  it.effect(
    "AAP: re-verifies traces with violations against the current card, stores the result, counts now_clean and still_violating",
    () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const store = yield* Store
        const { admin, orgAgent } = api.fixtures
        const failed = (violations: ReadonlyArray<string>) => ({ verified: false, violations })
        const inputs = yield* seed(orgAgent, 4, (input, i) =>
          withTrace(input, (trace) => {
            switch (i) {
              case 1:
                return {
                  ...trace,
                  action: { ...trace.action, name: "wire_transfer" },
                  verification: failed(["UNBOUNDED_ACTION"])
                }
              case 2:
                return {
                  ...trace,
                  action: { ...trace.action, name: "delete_everything" },
                  verification: failed(["UNBOUNDED_ACTION"])
                }
              case 3:
                return {
                  ...trace,
                  decision: { ...trace.decision, values_applied: ["profit"] },
                  verification: failed(["UNDECLARED_VALUE"])
                }
              default:
                return trace
            }
          })
        )
        const card = cardFor(orgAgent, "card-widened", ["reply", "wire_*"])
        yield* store.putCard(orgAgent, {
          ...card,
          values: { declared: ["honesty", "profit"] },
          autonomy_envelope: { ...card.autonomy_envelope, forbidden_actions: ["delete_*"] }
        })

        const response = yield* api.call("POST", `/v1/agents/${orgAgent}/reverify`, { token: admin.token })
        expect(response.status).toBe(200)
        expect(response.body).toEqual({
          agent_id: orgAgent,
          card_id: "card-widened",
          total_traces_in_batch: 3,
          offset: 0,
          limit: 40,
          reverified: 3,
          still_violating: 1,
          now_clean: 2,
          errors: null,
          disclaimer: PROTOCOL_DISCLAIMER
        })
        const trace = (i: number) => store.getTrace(inputs[i]!.trace.trace_id)
        expect((yield* trace(1))?.verification).toEqual({ verified: true, violations: [] })
        expect((yield* trace(3))?.verification).toEqual({ verified: true, violations: [] })
        expect((yield* trace(2))?.verification).toEqual({
          verified: false,
          violations: ["UNBOUNDED_ACTION", "FORBIDDEN_ACTION"]
        })

        // Only the one still violating is left to re-verify.
        const again = yield* api.call("POST", `/v1/agents/${orgAgent}/reverify?limit=40&offset=0`, {
          token: admin.token
        })
        expect(again.body).toMatchObject({
          total_traces_in_batch: 1,
          reverified: 1,
          still_violating: 1,
          now_clean: 0,
          errors: null
        })
        const past = yield* api.call("POST", `/v1/agents/${orgAgent}/reverify?offset=1`, { token: admin.token })
        expect(past.body).toMatchObject({ total_traces_in_batch: 0, reverified: 0, offset: 1, errors: null })
      })
  )

  it.effect("refuses limits outside 1..40 with a 400 naming the field, and answers 404 without a card", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { agentA, userA } = api.fixtures
      for (const path of [`/v1/agents/${agentA}/reverify/aip`, `/v1/agents/${agentA}/reverify`]) {
        for (const query of ["limit=41", "limit=0", "limit=x", "offset=-1"]) {
          const response = yield* api.call("POST", `${path}?${query}`, { token: userA.token })
          expect(response.status, `${path}?${query}`).toBe(400)
          expect(response.body.error).toContain(
            query.startsWith("limit") ? "limit: must be an integer from 1 to 40" : "offset:"
          )
        }
        const noCard = yield* api.call("POST", path, { token: userA.token })
        expect(noCard).toMatchObject({
          status: 404,
          body: { error: `agent ${agentA} has no Alignment Card to re-verify against` }
        })
      }
    })
  )

  it.effect("is a write: Members are refused, other users' agents are not found, credentials are needed", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { agentA, member, orgAgent, orgId, userB } = api.fixtures
      const memberKey = yield* api.createApiKey(member.userId, { orgId, role: "member" })
      yield* (yield* Store).putCard(orgAgent, cardFor(orgAgent, "card-for-service"))
      for (const suffix of ["reverify/aip", "reverify"]) {
        for (const credential of [{ token: member.token }, { apiKey: memberKey }]) {
          expect((yield* api.call("POST", `/v1/agents/${orgAgent}/${suffix}`, credential)).status).toBe(403)
        }
        expect((yield* api.call("POST", `/v1/agents/${agentA}/${suffix}`, { token: userB.token })).status).toBe(404)
        expect((yield* api.call("POST", `/v1/agents/${agentA}/${suffix}`)).status).toBe(401)
        // The service-role key may, on any agent.
        expect(
          (yield* api.call("POST", `/v1/agents/${orgAgent}/${suffix}`, { token: api.serviceRoleKey })).status
        ).toBe(200)
      }
    })
  )
})
