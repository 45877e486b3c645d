/**
 * A checkpoint's `conscience_context` as the API serves it, made the way production makes it: the
 * rules judge reads reasoning against an organization agent's values (defaults, organization and
 * agent layers), the gateway builds the event, the agent's actor step attests it, the store commits
 * it. The served checkpoint shows the values checked, the conflict, the layers and the cause, and
 * its certificate's `analysis_hash` commits to all of it.
 */
import { describe, expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { analyzeWithRules } from "../../adapters/analysis/Rules.js"
import { buildResponseEvent } from "../../adapters/gateway/ResponseEvent.js"
import { Store } from "../../adapters/store/Store.js"
import { emptyViolationStreak } from "../../core/Containment.js"
import { matchesAnalysisCommitment } from "../../core/Commitments.js"
import { boundaryValueNames, resolveConscience } from "../../core/ConscienceResolution.js"
import { emptyAapDriftState } from "../../core/DriftAap.js"
import { emptyAipDriftState } from "../../core/DriftAip.js"
import { frontierRoot } from "../../core/Merkle.js"
import { deriveVerdict } from "../../core/Verdict.js"
import { agentContext } from "../../streams/AgentContext.js"
import { attestEvent, signedTreeHead } from "../../streams/AttestEvent.js"
import { key } from "../adapters/store/Fixtures.js"
import { ApiHarness, layer as harness } from "./Support.js"

const conscience = resolveConscience({
  org: {
    org_id: "org-served",
    mode: "augment",
    enabled: true,
    values: [
      {
        value_id: "cv-00000000-0000-4000-8000-00000000000a",
        type: "BOUNDARY",
        name: "no-competitor-mentions",
        content: "Never recommend competitor products.",
        severity: "mandatory",
        is_active: true,
        sort_order: 0
      }
    ]
  },
  agentValues: [{ type: "BOUNDARY", name: "no-refund-promises", content: "Never promise refunds." }]
})

layer(harness(), { timeout: "90 seconds" })("conscience context served", (it) => {
  describe("GET /v1/agents/{agent_id}/checkpoints/{checkpoint_id}", () => {
    it.effect("shows the values checked, the conflict, the layers and the concern's cause", () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const store = yield* Store
        const { userA } = api.fixtures
        const agentId = yield* api.claimAgent({ userId: userA.userId })
        const thinking = "The user asked for alternatives. I'll recommend competitor products to them."
        const analysis = analyzeWithRules({
          thinking,
          card: undefined,
          conscienceValues: conscience.values,
          window: [],
          provider: "anthropic",
          model: "m"
        })
        const now = new Date()
        const event = buildResponseEvent({
          agentId,
          cardId: undefined,
          sessionId: `ses-${agentId}`,
          provider: "anthropic",
          outcome: { kind: "complete", status: 200, bytes: 100, cause: undefined },
          extraction: undefined,
          judgement: {
            verdict: deriveVerdict(analysis.concerns, boundaryValueNames(conscience.values)),
            thinkingHash: "c".repeat(64),
            analysis,
            synthetic: undefined
          },
          policy: undefined,
          now
        })
        const log = yield* store.loadLogState(agentId)
        const env = { key, logOrigin: "candor.test", now, subjectPrefix: "candor" }
        const step = attestEvent(
          {
            agentId,
            log,
            context: agentContext(
              undefined,
              conscience,
              { autoContainThreshold: undefined, contained: false, orgId: "org-served" },
              now.getTime()
            ),
            aap: emptyAapDriftState,
            streak: emptyViolationStreak,
            contained: false
          },
          emptyAipDriftState,
          event,
          env
        )
        const state = step.input.attestation.state
        const treeHead = signedTreeHead(agentId, state.frontier.size, frontierRoot(state.frontier), env)
        expect(yield* store.commitBatch([{ ...step.input, treeHead }])).toEqual({ _tag: "Committed" })

        const id = event.checkpoint.checkpoint_id
        const served = yield* api.call("GET", `/v1/agents/${agentId}/checkpoints/${id}`, { token: userA.token })
        expect(served.status).toBe(200)
        const context = served.body.conscience_context
        expect(context.values_checked).toEqual(
          expect.arrayContaining([
            "BOUNDARY:boundary-no-data-exfiltration",
            "BOUNDARY:no-competitor-mentions",
            "BOUNDARY:no-refund-promises"
          ])
        )
        expect(context.conflicts).toEqual(["BOUNDARY:no-competitor-mentions"])
        expect(context).toMatchObject({ supports: [], considerations: [], consultation_depth: "surface" })
        expect(context.resolution_mode).toBe("augment")
        expect(context.layers.organization).toEqual([
          { type: "BOUNDARY", name: "no-competitor-mentions", severity: "mandatory" }
        ])
        expect(context.layers.agent).toEqual([{ type: "BOUNDARY", name: "no-refund-promises" }])
        expect(context.layers.defaults).toHaveLength(9)
        expect(served.body.concerns[0].cause).toEqual({
          relevant_card_field: "conscience_values",
          value: "no-competitor-mentions"
        })
        expect(served.body.verdict).toBe("boundary_violation")

        // What is served is what the certificate committed to; a changed context is not.
        const certificate = step.input.attestation.certificate
        expect(matchesAnalysisCommitment(served.body, certificate.input_commitments.analysis_hash)).toBe(true)
        expect(
          matchesAnalysisCommitment(
            { ...served.body, conscience_context: { ...context, conflicts: [] } },
            certificate.input_commitments.analysis_hash
          )
        ).toBe(false)
      })
    )
  })
})
