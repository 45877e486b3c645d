/**
 * Which conscience values are in force for an agent, and which of them are boundaries. One pure
 * function for each, used by the gateway, the judge's prompt and verdict, the workers (whose
 * certificates bind the result) and the API (`/conscience-values/effective`), so they cannot differ.
 *
 * Resolution, in order:
 * 1. the base defaults (`DEFAULT_CONSCIENCE_VALUES`), unless the agent's organization layer is
 *    enabled in `replace` mode; agents outside any organization always have them;
 * 2. the organization's active values in their order, when the layer is enabled;
 * 3. the agent's own values.
 * A name is in force once: an organization value replaces a base default of the same name; an
 * agent value whose name is already in force (a default or an organization value) is dropped, so an
 * agent can neither remove nor override what its organization decided. The first of duplicate
 * agent names is kept.
 *
 * The values in force are plain `ConscienceValue`s (no layer), in that order: `valuesHash` of them
 * is the certificates' `values_hash`. For an agent with no organization layer and no values of its
 * own they are exactly the defaults, so its `values_hash` is what it was before organizations.
 */
import { valuesHash } from "./Commitments.js"
import {
  type ConscienceLayer,
  type ConscienceSeverity,
  type ConscienceValue,
  DEFAULT_CONSCIENCE_VALUES,
  type EffectiveConscienceValue,
  type OrgConscienceMode,
  type OrgConscienceValue
} from "./schema/Conscience.js"

/**
 * Whether a value is a boundary in `core/Verdict.ts`'s rule: a `mandatory` value whatever its type;
 * never an explicitly `advisory` one (even of type BOUNDARY); a value without severity (the base
 * defaults, values set before severities existed) when its type is BOUNDARY.
 */
export const isBoundaryValue = (value: Pick<ConscienceValue, "type" | "severity">): boolean =>
  value.severity === undefined ? value.type === "BOUNDARY" : value.severity === "mandatory"

/** The names the verdict rule treats as boundaries, in order, each once. */
export const boundaryValueNames = (values: ReadonlyArray<ConscienceValue>): ReadonlyArray<string> => [
  ...new Set(values.filter(isBoundaryValue).map((value) => value.name))
]

/** The severity a value acts with: its own, or for one without, what `isBoundaryValue` makes of it. */
export const effectiveSeverity = (value: ConscienceValue): ConscienceSeverity =>
  value.severity ?? (isBoundaryValue(value) ? "mandatory" : "advisory")

/** The organization layer of an agent, as stored. */
export interface OrgConscienceLayer {
  readonly org_id: string
  readonly mode: OrgConscienceMode
  readonly enabled: boolean
  /** Every value of the organization (active or not), any order: resolution sorts and filters. */
  readonly values: ReadonlyArray<
    Pick<OrgConscienceValue, "value_id" | "type" | "name" | "content" | "severity" | "is_active" | "sort_order">
  >
}

export interface ConscienceInputs {
  /** The agent's organization layer; undefined for an agent outside any organization. */
  readonly org: OrgConscienceLayer | undefined
  /** The agent's own values (PUT /v1/agents/{id}/conscience-values, PATCH /card). */
  readonly agentValues: ReadonlyArray<ConscienceValue>
}

export interface LayeredValue {
  readonly value: ConscienceValue
  readonly layer: ConscienceLayer
}

export interface ResolvedConscience {
  readonly orgId: string | null
  readonly mode: OrgConscienceMode
  readonly enabled: boolean
  readonly layered: ReadonlyArray<LayeredValue>
  /** What the judge is given and the certificates bind, in order. */
  readonly values: ReadonlyArray<ConscienceValue>
  readonly valuesHash: string
}

/** An organization value as it is given to the judge and hashed. */
export const orgValueInForce = (value: OrgConscienceLayer["values"][number]): ConscienceValue => ({
  type: value.type,
  name: value.name,
  content: value.content,
  id: value.value_id,
  severity: value.severity
})

/** The organization's active values in their order (ties, which the API never makes, by id). */
export const activeOrgValues = (org: OrgConscienceLayer): ReadonlyArray<ConscienceValue> =>
  org.values
    .filter((value) => value.is_active)
    .sort((a, b) => a.sort_order - b.sort_order || (a.value_id < b.value_id ? -1 : a.value_id > b.value_id ? 1 : 0))
    .map(orgValueInForce)

export const resolveConscience = (inputs: ConscienceInputs): ResolvedConscience => {
  const org = inputs.org
  const orgApplies = org !== undefined && org.enabled
  const orgValues = orgApplies ? activeOrgValues(org) : []
  const orgNames = new Set(orgValues.map((value) => value.name))
  const base =
    orgApplies && org.mode === "replace" ? [] : DEFAULT_CONSCIENCE_VALUES.filter((value) => !orgNames.has(value.name))
  const layered: Array<LayeredValue> = [
    ...base.map((value) => ({ value, layer: "base" as const })),
    ...orgValues.map((value) => ({ value, layer: "org" as const }))
  ]
  const inForce = new Set(layered.map(({ value }) => value.name))
  for (const value of inputs.agentValues) {
    if (inForce.has(value.name)) continue
    inForce.add(value.name)
    layered.push({ value, layer: "agent" })
  }
  const values = layered.map(({ value }) => value)
  return {
    orgId: org?.org_id ?? null,
    mode: org?.mode ?? "augment",
    enabled: org?.enabled ?? true,
    layered,
    values,
    valuesHash: valuesHash(values)
  }
}

/** The resolved list as `/conscience-values/effective` shows it. */
export const effectiveValues = (resolved: ResolvedConscience): ReadonlyArray<EffectiveConscienceValue> =>
  resolved.layered.map(({ layer, value }) => ({
    value_id: value.id ?? null,
    type: value.type,
    name: value.name,
    content: value.content,
    severity: effectiveSeverity(value),
    boundary: isBoundaryValue(value),
    layer
  }))
