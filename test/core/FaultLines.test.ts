/**
 * Fault lines: a worked example (numbers checked by hand), each classification, severities, the
 * team card's values, and determinism under member order.
 */
import { describe, expect, it } from "@effect/vitest"
import { faultLinesOf, type MemberValues, RESOLUTION_HINTS, teamValuesOf } from "../../core/FaultLines.js"

const member = (agent_id: string, values: MemberValues["values"]): MemberValues => ({ agent_id, values })

/**
 * Four members, six pairs.
 * - privacy: a, b declare; c conflicts; d lacks → incompatible; pairs a-c, b-c → 2/6 = 0.3333, high.
 * - honesty: all declare; a, b lexicographic at positions 1 and 2, c weighted priority 1, d weighted
 *   no priority → ranks a=1, b=2, c=1, d=none → pairs a-b, b-c → 2/6 = 0.3333, priority_mismatch, low.
 * - transparency: a, c, d declare; b lacks → resolvable; pairs a-b, b-c, b-d → 3/6 = 0.5, medium.
 * - fairness: only d declares → resolvable; pairs a-d, b-d, c-d → 0.5, medium.
 */
const TEAM = [
  member("agent-d", { declared: ["transparency", "honesty", "fairness"], hierarchy: "weighted" }),
  member("agent-a", { declared: ["honesty", "privacy", "transparency"], hierarchy: "lexicographic" }),
  member("agent-b", { declared: ["privacy", "honesty"], hierarchy: "lexicographic" }),
  member("agent-c", {
    declared: ["honesty", "transparency"],
    conflicts_with: ["privacy"],
    hierarchy: "weighted",
    definitions: { honesty: { name: "honesty", description: "tell the truth", priority: 1 } }
  })
]

describe("faultLinesOf", () => {
  it("classifies, scores and orders a worked example", () => {
    const lines = faultLinesOf(TEAM)
    expect(lines.map((l) => [l.value, l.classification, l.severity, l.impact_score])).toEqual([
      ["privacy", "incompatible", "high", 0.3333],
      ["fairness", "resolvable", "medium", 0.5],
      ["transparency", "resolvable", "medium", 0.5],
      ["honesty", "priority_mismatch", "low", 0.3333]
    ])
    const privacy = lines[0]!
    expect(privacy.agents_declaring).toEqual(["agent-a", "agent-b"])
    expect(privacy.agents_conflicting).toEqual(["agent-c"])
    expect(privacy.agents_missing).toEqual(["agent-d"])
    expect(privacy.resolution_hint).toBe(RESOLUTION_HINTS.incompatible)
    expect(lines[2]!.agents_missing).toEqual(["agent-b"])
  })

  it("is deterministic whatever order the members come in", () => {
    const once = faultLinesOf(TEAM)
    expect(faultLinesOf([...TEAM].reverse())).toEqual(once)
    expect(faultLinesOf([TEAM[2]!, TEAM[0]!, TEAM[3]!, TEAM[1]!])).toEqual(once)
  })

  it("has no fault line where the members agree, and none for one member", () => {
    const same = { declared: ["honesty", "privacy"], hierarchy: "lexicographic" as const }
    expect(faultLinesOf([member("a", same), member("b", same)])).toEqual([])
    expect(faultLinesOf([member("a", { declared: ["honesty"] })])).toEqual([])
    expect(faultLinesOf([])).toEqual([])
  })

  it("is critical when an incompatibility divides half the pairs or more", () => {
    const lines = faultLinesOf([
      member("a", { declared: ["privacy"] }),
      member("b", { declared: [], conflicts_with: ["privacy"] })
    ])
    expect(lines).toMatchObject([
      { value: "privacy", classification: "incompatible", severity: "critical", impact_score: 1 }
    ])
  })

  it("counts a value the team card asks for against every pair with a member lacking it, one severity up", () => {
    const team = teamValuesOf({
      values: { declared: ["honesty"] },
      member_requirements: { required_values: ["privacy"] }
    })
    const lines = faultLinesOf(
      [
        member("a", { declared: ["honesty", "privacy"] }),
        member("b", { declared: ["honesty"] }),
        member("c", { declared: ["honesty"] })
      ],
      team
    )
    // privacy: b and c lack it; every pair has one of them → 3/3 = 1 → medium, up one: high.
    expect(lines).toMatchObject([
      { value: "privacy", classification: "resolvable", severity: "high", impact_score: 1, team_requires: true }
    ])
  })
})
