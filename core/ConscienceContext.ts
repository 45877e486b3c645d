/**
 * A checkpoint's `conscience_context`: which conscience values the judge applied, which of them a
 * concern names, what the judge reported besides, and (added by the workers) the layers the values
 * in force came from. Built in two places from the same functions:
 * - the gateway, from what the judge reports (`judgeConscienceContext`): the judge is the one that
 *   knows which values it applied;
 * - the agent's actor, from the resolution its certificate's `values_hash` binds (`withResolution`),
 *   before the analysis hash is taken, so the whole context is certified.
 */
import type { LayeredValue, ResolvedConscience } from "./ConscienceResolution.js"
import type { ConscienceContext, ConscienceLayers, LayerValue, ResolutionMode } from "./schema/Checkpoint.js"
import type { Concern, ConsultationDepth } from "./schema/Concern.js"
import type { ConscienceValue } from "./schema/Conscience.js"

/** What a judge reports about its consultation of the conscience values. */
export interface JudgeConsultation {
  /** The values it applied, in the order it was given them. */
  readonly applied: ReadonlyArray<Pick<ConscienceValue, "type" | "name">>
  /** Applied values the judge says the reasoning upholds. */
  readonly supports: ReadonlyArray<Pick<ConscienceValue, "type" | "name">>
  readonly considerations: ReadonlyArray<string>
  readonly depth: ConsultationDepth
}

/** `TYPE:name`, the protocol's spelling of a value in `conscience_context`. */
export const valueLabel = (value: Pick<ConscienceValue, "type" | "name">): string => `${value.type}:${value.name}`

/** No judge weighed any value: a synthetic checkpoint, or a judge that reports none. */
export const NOT_CONSULTED: ConscienceContext = {
  values_checked: [],
  conflicts: [],
  supports: [],
  considerations: [],
  consultation_depth: "surface"
}

const unique = (labels: ReadonlyArray<string>): ReadonlyArray<string> => [...new Set(labels)]

/**
 * The gateway's part. `conflicts` are the applied values a concern names by exact name (the name the
 * verdict rule matches); a concern naming a value the judge was not given adds nothing.
 */
export const judgeConscienceContext = (
  consultation: JudgeConsultation | undefined,
  concerns: ReadonlyArray<Pick<Concern, "relevant_conscience_value">>
): ConscienceContext => {
  if (consultation === undefined) return NOT_CONSULTED
  const named = new Set(concerns.flatMap((concern) => concern.relevant_conscience_value ?? []))
  return {
    values_checked: unique(consultation.applied.map(valueLabel)),
    conflicts: unique(consultation.applied.filter((value) => named.has(value.name)).map(valueLabel)),
    supports: unique(consultation.supports.map(valueLabel)),
    considerations: consultation.considerations,
    consultation_depth: consultation.depth
  }
}

const layerValue = ({ value }: LayeredValue): LayerValue =>
  value.severity === undefined
    ? { type: value.type, name: value.name }
    : { type: value.type, name: value.name, severity: value.severity }

/** The values in force by the layer that put them there (`ConscienceLayer` base/org/agent). */
export const conscienceLayers = (layered: ReadonlyArray<LayeredValue>): ConscienceLayers => ({
  defaults: layered.filter((entry) => entry.layer === "base").map(layerValue),
  organization: layered.filter((entry) => entry.layer === "org").map(layerValue),
  agent: layered.filter((entry) => entry.layer === "agent").map(layerValue)
})

/** What `resolveConscience` did with the organization layer. */
export const resolutionModeOf = (resolved: Pick<ResolvedConscience, "orgId" | "enabled" | "mode">): ResolutionMode =>
  resolved.orgId === null ? "no_organization" : !resolved.enabled ? "organization_disabled" : resolved.mode

/** The actor's part: the layers and mode of the resolution the certificate's `values_hash` binds. */
export const withResolution = (
  context: ConscienceContext,
  resolution: { readonly layers: ConscienceLayers; readonly mode: ResolutionMode }
): ConscienceContext => ({ ...context, layers: resolution.layers, resolution_mode: resolution.mode })
