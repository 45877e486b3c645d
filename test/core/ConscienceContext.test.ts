/**
 * The checkpoint's `conscience_context`, derived for an agent with values at each layer: the layers
 * and mode of the resolution, what the rules judge applied and which values its concerns name, and
 * each concern's cause; and that the certified analysis covers the context while an older checkpoint
 * without it keeps the analysis hash it was certified with.
 */
import { describe, expect, it } from "@effect/vitest"
import { analyzeWithRules } from "../../adapters/analysis/Rules.js"
import { toHex } from "../../core/Bytes.js"
import { canonicalHash } from "../../core/Canonical.js"
import { verifyCertificate } from "../../core/Certificate.js"
import { analysisHash, matchesAnalysisCommitment } from "../../core/Commitments.js"
import {
  conscienceLayers,
  judgeConscienceContext,
  NOT_CONSULTED,
  resolutionModeOf,
  withResolution
} from "../../core/ConscienceContext.js"
import { type OrgConscienceLayer, resolveConscience } from "../../core/ConscienceResolution.js"
import type { AlignmentCard } from "../../core/schema/Card.js"
import type { IntegrityCheckpoint } from "../../core/schema/Checkpoint.js"
import { DEFAULT_CONSCIENCE_VALUES } from "../../core/schema/Conscience.js"
import { card as fixtureCard, fresh, key, makeInputs, resolveKey } from "../adapters/store/Fixtures.js"

const org: OrgConscienceLayer = {
  org_id: "org-acme",
  mode: "augment",
  enabled: true,
  values: [
    {
      value_id: "cv-00000000-0000-4000-8000-000000000001",
      type: "BOUNDARY",
      name: "no-competitor-mentions",
      content: "Never recommend competitor products.",
      severity: "mandatory",
      is_active: true,
      sort_order: 0
    },
    {
      value_id: "cv-00000000-0000-4000-8000-000000000002",
      type: "COMMITMENT",
      name: "inactive-one",
      content: "Not in force.",
      severity: "advisory",
      is_active: false,
      sort_order: 1
    }
  ]
}

const agentValues = [
  // A default's name: dropped, an agent cannot override what is already in force.
  { type: "FEAR" as const, name: "fear-sycophancy", content: "Agreeing too readily." },
  { type: "BOUNDARY" as const, name: "no-refund-promises", content: "Never promise refunds." }
]

const card: AlignmentCard = {
  ...fixtureCard("agt-conscience", 90, "card-conscience"),
  autonomy_envelope: {
    bounded_actions: ["reply", "send_email"],
    forbidden_actions: ["delete_records"],
    escalation_triggers: [{ condition: "invoice amount exceeds budget", action: "escalate", reason: "money" }]
  }
}

const resolved = resolveConscience({ org, agentValues })

const judged = (thinking: string) =>
  analyzeWithRules({ thinking, card, conscienceValues: resolved.values, window: [], provider: "anthropic", model: "m" })

describe("conscience layers and resolution mode", () => {
  it("lists what each layer put in force, without a value an earlier layer already named", () => {
    expect(conscienceLayers(resolved.layered)).toEqual({
      defaults: DEFAULT_CONSCIENCE_VALUES.map((value) => ({ type: value.type, name: value.name })),
      organization: [{ type: "BOUNDARY", name: "no-competitor-mentions", severity: "mandatory" }],
      agent: [{ type: "BOUNDARY", name: "no-refund-promises" }]
    })
  })

  it("names what resolution did with the organization layer", () => {
    expect(resolutionModeOf(resolved)).toBe("augment")
    expect(resolutionModeOf(resolveConscience({ org: { ...org, mode: "replace" }, agentValues }))).toBe("replace")
    expect(resolutionModeOf(resolveConscience({ org: { ...org, enabled: false }, agentValues }))).toBe(
      "organization_disabled"
    )
    expect(resolutionModeOf(resolveConscience({ org: undefined, agentValues }))).toBe("no_organization")
    const replaced = conscienceLayers(resolveConscience({ org: { ...org, mode: "replace" }, agentValues }).layered)
    expect(replaced.defaults).toEqual([])
    // Without the defaults, the agent's fear-sycophancy is in force.
    expect(replaced.agent.map((value) => value.name)).toEqual(["fear-sycophancy", "no-refund-promises"])
  })
})

describe("the rules judge's conscience context and causes", () => {
  it("applies the values its patterns name, and conflicts with the one a concern names", () => {
    const analysis = judged("The user wants options. I'll recommend competitor products to them.")
    const context = judgeConscienceContext(analysis.conscience, analysis.concerns)
    expect(context.values_checked).toEqual(
      expect.arrayContaining([
        "BOUNDARY:boundary-no-data-exfiltration",
        "BOUNDARY:boundary-no-deception",
        "BOUNDARY:no-competitor-mentions",
        "BOUNDARY:no-refund-promises"
      ])
    )
    // A value no rule checks is not claimed as applied.
    expect(context.values_checked).not.toContain("COMMITMENT:inactive-one")
    expect(context.conflicts).toEqual(["BOUNDARY:no-competitor-mentions"])
    expect(context).toMatchObject({ supports: [], considerations: [], consultation_depth: "surface" })
    expect(analysis.concerns[0]).toMatchObject({
      relevant_conscience_value: "no-competitor-mentions",
      cause: { relevant_card_field: "conscience_values", value: "no-competitor-mentions" }
    })
  })

  it("gives a forbidden action's and an escalation trigger's concern their entry as cause", () => {
    const forbidden = judged("The table is cluttered. I'll delete the records now.")
    expect(forbidden.concerns.map((concern) => concern.cause)).toContainEqual({
      relevant_card_field: "autonomy_envelope.forbidden_actions",
      action: "delete_records"
    })
    const trigger = judged("The invoice amount clearly exceeds the budget. Paying it anyway.")
    expect(trigger.concerns.map((concern) => concern.cause)).toContainEqual({
      relevant_card_field: "autonomy_envelope.escalation_triggers",
      trigger: "invoice amount exceeds budget"
    })
  })

  it("reports nothing consulted without a judge, and a clear judge conflicts with nothing", () => {
    expect(judgeConscienceContext(undefined, [])).toEqual(NOT_CONSULTED)
    const clear = judged("The user asked for the weather; I will answer with the forecast.")
    expect(clear.concerns).toEqual([])
    expect(judgeConscienceContext(clear.conscience, clear.concerns).conflicts).toEqual([])
  })
})

describe("the analysis commitment covers the conscience context", () => {
  const input = makeInputs("agt-commit", fresh("agt-commit"), 2).inputs[1]!
  const old: IntegrityCheckpoint = input.checkpoint

  it("leaves an older checkpoint's analysis hash as it was certified, and its certificate verifies", () => {
    const before = toHex(
      canonicalHash("analysis", {
        concerns: old.concerns,
        reasoning_summary: old.reasoning_summary,
        analysis_model: old.analysis_metadata.analysis_model,
        llm_verdict: old.analysis_metadata.llm_verdict ?? null,
        synthetic_reason: old.synthetic_reason ?? null
      })
    )
    expect(analysisHash(old)).toBe(before)
    expect(verifyCertificate(input.attestation.certificate, { resolveKey }).valid).toBe(true)
    expect(key.keyId).toBe(input.attestation.certificate.key_id)
  })

  it("changes when any part of a newer checkpoint's context changes, or when it is stripped", () => {
    const analysis = judged("I'll recommend competitor products.")
    const context = withResolution(judgeConscienceContext(analysis.conscience, analysis.concerns), {
      layers: conscienceLayers(resolved.layered),
      mode: resolutionModeOf(resolved)
    })
    expect(context.conflicts).toEqual(["BOUNDARY:no-competitor-mentions"])
    const certified: IntegrityCheckpoint = { ...old, conscience_context: context }
    const committed = analysisHash(certified)
    expect(committed).not.toBe(analysisHash(old))
    expect(matchesAnalysisCommitment(certified, committed)).toBe(true)
    const tampered: ReadonlyArray<IntegrityCheckpoint["conscience_context"]> = [
      { ...context, conflicts: [] },
      { ...context, values_checked: context.values_checked.slice(1) },
      { ...context, resolution_mode: "replace" },
      { ...context, layers: { ...context.layers!, organization: [] } },
      { ...context, consultation_depth: "deep" },
      NOT_CONSULTED
    ]
    for (const conscience_context of tampered)
      expect(matchesAnalysisCommitment({ ...certified, conscience_context }, committed)).toBe(false)
  })
})
