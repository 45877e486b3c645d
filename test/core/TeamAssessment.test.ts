/**
 * One team assessment and its inputs hash (core/TeamAssessment.ts), and the quota's arithmetic
 * (core/TeamReputationQuota.ts): what counts as new inputs and what does not, the coherence means,
 * and the warning, overage and exceeded steps of a month.
 */
import { describe, expect, it } from "@effect/vitest"
import { createHash } from "node:crypto"
import canonicalize from "canonicalize"
import { assessTeam, hashedInputs, type TeamInputs, teamInputsHash } from "../../core/TeamAssessment.js"
import {
  includedComputations,
  periodOf,
  planAllowsTeamReputation,
  quotaStep,
  usagePercent
} from "../../core/TeamReputationQuota.js"

const card = (declared: ReadonlyArray<string>, conflicts_with?: ReadonlyArray<string>) => ({
  values: { declared, ...(conflicts_with === undefined ? {} : { conflicts_with }) }
})

const inputs: TeamInputs = {
  members: [
    { agent_id: "agt-b", score: 820, eligible: true, status: "active" },
    { agent_id: "agt-a", score: 640, eligible: true, status: "active" },
    { agent_id: "agt-c", score: 0, eligible: false, status: "active" }
  ],
  member_cards: [
    { agent_id: "agt-b", card: card(["honesty", "privacy"]) },
    { agent_id: "agt-a", card: card(["honesty", "privacy"]) },
    { agent_id: "agt-c", card: card(["honesty"]) }
  ],
  team_card: card(["honesty"]),
  roster_changes: ["2026-05-20T00:00:00.000Z"]
}

describe("team assessment", () => {
  it("member coherence is the mean pair score, card coherence the mean pair with the team card", () => {
    const assessed = assessTeam(inputs)
    // a–b 1, a–c ½, b–c ½; with the team card: ½, ½, 1.
    expect(assessed.member_coherence).toBeCloseTo(2 / 3, 12)
    expect(assessed.card_coherence).toBeCloseTo(2 / 3, 12)
    expect(assessed.risk_level).toBe("medium")
    expect(assessed.member_scores.map((m) => m.agent_id)).toEqual(["agt-a", "agt-b", "agt-c"])
    expect(
      assessTeam({ ...inputs, member_cards: inputs.member_cards.slice(0, 1), team_card: undefined })
    ).toMatchObject({
      member_coherence: null,
      card_coherence: null
    })
  })

  it("the hash is SHA-256 of the JCS text of the inputs; order and spelling of values do not count, what is read does", () => {
    const expected = createHash("sha256")
      .update(canonicalize(hashedInputs(inputs))!, "utf8")
      .digest("hex")
    expect(teamInputsHash(inputs)).toBe(expected)
    const reordered: TeamInputs = {
      ...inputs,
      members: [...inputs.members].reverse(),
      member_cards: [...inputs.member_cards].reverse().map((c) => ({
        ...c,
        card: card([...c.card.values.declared].reverse().map((v) => ` ${v.toUpperCase()}`))
      }))
    }
    expect(teamInputsHash(reordered)).toBe(teamInputsHash(inputs))
    const changes: ReadonlyArray<TeamInputs> = [
      { ...inputs, members: inputs.members.map((m, i) => (i === 0 ? { ...m, status: "paused" } : m)) },
      { ...inputs, members: inputs.members.map((m, i) => (i === 0 ? { ...m, score: 821 } : m)) },
      {
        ...inputs,
        member_cards: inputs.member_cards.map((c, i) => (i === 0 ? { ...c, card: card(["honesty"], ["x"]) } : c))
      },
      { ...inputs, team_card: undefined },
      { ...inputs, roster_changes: [] }
    ]
    for (const changed of changes) expect(teamInputsHash(changed)).not.toBe(teamInputsHash(inputs))
  })
})

describe("team reputation quota", () => {
  const team = {
    plan_id: "team",
    feature_flags: { team_reputation: true },
    limits: { team_reputation_computations_per_month: 200 }
  }

  it("reads the plan row: the feature flag, the included count, null or absent unlimited", () => {
    expect(planAllowsTeamReputation(team)).toBe(true)
    expect(planAllowsTeamReputation({ ...team, feature_flags: {} })).toBe(false)
    expect(planAllowsTeamReputation({ ...team, feature_flags: { team_reputation: "yes" } })).toBe(false)
    expect(planAllowsTeamReputation(undefined)).toBe(false)
    expect(includedComputations(team)).toBe(200)
    expect(includedComputations({ ...team, limits: { team_reputation_computations_per_month: null } })).toBeNull()
    expect(includedComputations({ ...team, limits: {} })).toBeNull()
  })

  it("warning from 80%, overage and exceeded beyond the included count, nothing when unlimited", () => {
    expect(quotaStep(200, 158)).toMatchObject({ used: 159, warning: false, overage: false, cost: 0 })
    expect(quotaStep(200, 159)).toMatchObject({ used: 160, warning: true, overage: false, exceeded: false })
    expect(quotaStep(200, 199)).toMatchObject({ used: 200, overage: false, exceeded: false })
    expect(quotaStep(200, 200)).toMatchObject({ used: 201, overage: true, exceeded: true, cost: 0.005 })
    expect(quotaStep(null, 10_000)).toEqual({ used: 10_001, overage: false, cost: 0, warning: false, exceeded: false })
    expect(usagePercent(160, 200)).toBe(80)
    expect(usagePercent(1, 3)).toBe(33.33)
    expect(usagePercent(1, 0)).toBe(100)
    expect(periodOf(new Date("2026-12-31T23:59:59.999Z"))).toBe("2026-12")
    expect(periodOf(new Date("2027-01-01T00:00:00.000Z"))).toBe("2027-01")
  })
})
