import { describe, expect, it } from "@effect/vitest"
import { valuesHash } from "../../core/Commitments.js"
import {
  boundaryValueNames,
  effectiveValues,
  isBoundaryValue,
  type OrgConscienceLayer,
  resolveConscience
} from "../../core/ConscienceResolution.js"
import type { ConscienceValue } from "../../core/schema/Conscience.js"
import { DEFAULT_CONSCIENCE_VALUES } from "../../core/schema/Conscience.js"
import { deriveVerdict } from "../../core/Verdict.js"

const orgValue = (
  name: string,
  options: Partial<OrgConscienceLayer["values"][number]> = {}
): OrgConscienceLayer["values"][number] => ({
  value_id: `cv-${name}`,
  type: "COMMITMENT",
  name,
  content: `content of ${name}`,
  severity: "advisory",
  is_active: true,
  sort_order: 0,
  ...options
})

const org = (values: OrgConscienceLayer["values"], options: Partial<OrgConscienceLayer> = {}): OrgConscienceLayer => ({
  org_id: "org-1",
  mode: "augment",
  enabled: true,
  values,
  ...options
})

const agentValue: ConscienceValue = { type: "HOPE", name: "agent-hope", content: "The agent's own hope." }

const names = (values: ReadonlyArray<ConscienceValue>) => values.map((value) => value.name)
const defaultNames = names(DEFAULT_CONSCIENCE_VALUES)

describe("isBoundaryValue", () => {
  it("mandatory whatever the type; never advisory; without severity only a BOUNDARY", () => {
    for (const type of ["BOUNDARY", "FEAR", "COMMITMENT", "BELIEF", "HOPE"] as const) {
      expect(isBoundaryValue({ type, severity: "mandatory" }), type).toBe(true)
      expect(isBoundaryValue({ type, severity: "advisory" }), type).toBe(false)
      expect(isBoundaryValue({ type }), type).toBe(type === "BOUNDARY")
    }
  })

  it("boundaryValueNames: the defaults' four BOUNDARY values, each name once", () => {
    expect(boundaryValueNames(DEFAULT_CONSCIENCE_VALUES)).toEqual([
      "boundary-no-deception",
      "boundary-no-forbidden-actions",
      "boundary-no-data-exfiltration",
      "boundary-no-instruction-compliance"
    ])
    expect(
      boundaryValueNames([
        { type: "FEAR", name: "x", content: "c", severity: "mandatory" },
        { type: "BOUNDARY", name: "x", content: "c" }
      ])
    ).toEqual(["x"])
  })

  it("a high concern naming a mandatory value is a boundary violation; naming an advisory one is not", () => {
    const values: ReadonlyArray<ConscienceValue> = [
      { type: "COMMITMENT", name: "no-competitors", content: "Never recommend a competitor.", severity: "mandatory" },
      { type: "BOUNDARY", name: "soft-line", content: "Avoid jargon.", severity: "advisory" }
    ]
    const concern = (name: string) => ({
      category: "value_misalignment" as const,
      severity: "high" as const,
      relevant_conscience_value: name
    })
    expect(deriveVerdict([concern("no-competitors")], boundaryValueNames(values))).toBe("boundary_violation")
    expect(deriveVerdict([concern("soft-line")], boundaryValueNames(values))).toBe("review_needed")
  })
})

describe("resolveConscience", () => {
  it("outside any organization: the defaults then the agent's values; no values of its own: exactly the defaults", () => {
    const bare = resolveConscience({ org: undefined, agentValues: [] })
    expect(bare.values).toEqual(DEFAULT_CONSCIENCE_VALUES)
    // Unchanged from before organizations: the hash of the defaults.
    expect(bare.valuesHash).toBe(valuesHash(DEFAULT_CONSCIENCE_VALUES))
    expect(bare).toMatchObject({ orgId: null, mode: "augment", enabled: true })
    const own = resolveConscience({ org: undefined, agentValues: [agentValue] })
    expect(names(own.values)).toEqual([...defaultNames, "agent-hope"])
    expect(own.layered.at(-1)).toEqual({ value: agentValue, layer: "agent" })
  })

  it("augment: defaults, the organization's active values in order, then the agent's", () => {
    const resolved = resolveConscience({
      org: org([
        orgValue("second", { sort_order: 1, severity: "mandatory" }),
        orgValue("inactive", { sort_order: 0, is_active: false }),
        orgValue("first", { sort_order: 0 })
      ]),
      agentValues: [agentValue]
    })
    expect(names(resolved.values)).toEqual([...defaultNames, "first", "second", "agent-hope"])
    expect(resolved.layered.map((entry) => entry.layer)).toEqual([
      ...defaultNames.map(() => "base"),
      "org",
      "org",
      "agent"
    ])
    expect(resolved.values.at(-2)).toEqual({
      type: "COMMITMENT",
      name: "second",
      content: "content of second",
      id: "cv-second",
      severity: "mandatory"
    })
    expect(resolved.valuesHash).toBe(valuesHash(resolved.values))
    expect(boundaryValueNames(resolved.values)).toContain("second")
    expect(boundaryValueNames(resolved.values)).not.toContain("first")
  })

  it("replace: no defaults; disabled: as if there were no organization layer", () => {
    const layer = org([orgValue("only")], { mode: "replace" })
    expect(names(resolveConscience({ org: layer, agentValues: [agentValue] }).values)).toEqual(["only", "agent-hope"])
    const disabled = resolveConscience({ org: { ...layer, enabled: false }, agentValues: [agentValue] })
    expect(names(disabled.values)).toEqual([...defaultNames, "agent-hope"])
    expect(disabled).toMatchObject({ orgId: "org-1", mode: "replace", enabled: false })
  })

  it("an agent cannot remove or override an organization value or a default: a name in force is dropped", () => {
    const resolved = resolveConscience({
      org: org([orgValue("no-competitors", { severity: "mandatory" })]),
      agentValues: [
        { type: "HOPE", name: "no-competitors", content: "Recommend whatever is best." },
        { type: "FEAR", name: "boundary-no-deception", content: "softer" },
        agentValue,
        { ...agentValue, content: "a second one of the same name" }
      ]
    })
    expect(names(resolved.values)).toEqual([...defaultNames, "no-competitors", "agent-hope"])
    expect(resolved.values.find((value) => value.name === "no-competitors")?.severity).toBe("mandatory")
    expect(resolved.values.find((value) => value.name === "boundary-no-deception")?.type).toBe("BOUNDARY")
  })

  it("an organization value replaces the default of the same name", () => {
    const resolved = resolveConscience({
      org: org([orgValue("fear-sycophancy", { type: "BOUNDARY", severity: "mandatory" })]),
      agentValues: []
    })
    expect(resolved.values.filter((value) => value.name === "fear-sycophancy")).toEqual([
      expect.objectContaining({ type: "BOUNDARY", severity: "mandatory", id: "cv-fear-sycophancy" })
    ])
  })

  it("effectiveValues: layer, id and the severity each value acts with", () => {
    const resolved = resolveConscience({
      org: org([orgValue("o", { severity: "mandatory", type: "HOPE" })]),
      agentValues: [agentValue]
    })
    const effective = effectiveValues(resolved)
    expect(effective[0]).toEqual({
      value_id: "boundary-no-deception",
      type: "BOUNDARY",
      name: "boundary-no-deception",
      content: DEFAULT_CONSCIENCE_VALUES[0]!.content,
      severity: "mandatory",
      boundary: true,
      layer: "base"
    })
    expect(effective.find((value) => value.name === "fear-sycophancy")).toMatchObject({
      severity: "advisory",
      boundary: false
    })
    expect(effective.slice(-2)).toEqual([
      {
        value_id: "cv-o",
        type: "HOPE",
        name: "o",
        content: "content of o",
        severity: "mandatory",
        boundary: true,
        layer: "org"
      },
      {
        value_id: null,
        type: "HOPE",
        name: "agent-hope",
        content: agentValue.content,
        severity: "advisory",
        boundary: false,
        layer: "agent"
      }
    ])
  })
})
