/**
 * Structural features of an AP-Trace, for AAP behavioural drift (AAP §8, reference
 * `verification/features.py`): a sparse vector, compared by cosine similarity.
 *
 * Features (weight 1 unless said otherwise):
 * - `action:<type>` and `category:<category>` (lower case);
 * - `action_name:<name>` (lower case), and `name_token:<t>` for each token of the name, split at
 *   non-alphanumerics and camelCase boundaries (`mcp__github__createIssue` → mcp, github, create,
 *   issue), so related tools (`search_web`, `search_docs`) stay partly similar;
 * - `value:<v>` for each value in `decision.values_applied` (exact spelling);
 * - `escalation:evaluated` when evaluated; `escalation:required` or `escalation:not_required`;
 * - `alternatives:<bucket>`, the number of alternatives considered in buckets 0, 1, 2-3, 4+;
 * - `confidence`, weighted by `decision.confidence` itself, when present.
 *
 * Reasoning text is deliberately left out, as in Mnemom's AAP calibration (its CALIBRATION.md §3.5): drift is about
 * what the agent does, not how it words it, and free text would dilute the structural signal.
 */

/** Sparse vector: feature name → weight. Plain data, so a sum of vectors can be stored as JSON. */
export type FeatureVector = Readonly<Record<string, number>>

/** The part of an AP-Trace the features read. */
export interface FeatureTrace {
  readonly action: { readonly type: string; readonly name: string; readonly category: string }
  readonly decision: {
    readonly values_applied: ReadonlyArray<string>
    readonly confidence?: number | null | undefined
    readonly alternatives_considered?: ReadonlyArray<unknown> | undefined
  }
  readonly escalation?: { readonly evaluated: boolean; readonly required: boolean } | undefined
}

/** Lower-case tokens of an action or tool name, in order, without repeats. */
export const nameTokens = (name: string): ReadonlyArray<string> => {
  const spaced = name.replace(/([a-z0-9])([A-Z])/g, "$1 $2").replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
  const tokens = spaced
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((token) => token !== "")
  return [...new Set(tokens)]
}

export const alternativesBucket = (count: number): string =>
  count === 0 ? "0" : count === 1 ? "1" : count <= 3 ? "2-3" : "4+"

export const traceFeatures = (trace: FeatureTrace): FeatureVector => {
  const features: Record<string, number> = {}
  features[`action:${trace.action.type.toLowerCase()}`] = 1
  features[`category:${trace.action.category.toLowerCase()}`] = 1
  if (trace.action.name !== "") {
    features[`action_name:${trace.action.name.toLowerCase()}`] = 1
    for (const token of nameTokens(trace.action.name)) features[`name_token:${token}`] = 1
  }
  for (const value of trace.decision.values_applied) features[`value:${value}`] = 1
  if (trace.escalation?.evaluated === true) features["escalation:evaluated"] = 1
  features[trace.escalation?.required === true ? "escalation:required" : "escalation:not_required"] = 1
  features[`alternatives:${alternativesBucket(trace.decision.alternatives_considered?.length ?? 0)}`] = 1
  const confidence = trace.decision.confidence
  if (typeof confidence === "number" && Number.isFinite(confidence)) features.confidence = confidence
  return features
}

/** `sum + v`, as a new vector. */
export const addFeatures = (sum: FeatureVector, v: FeatureVector): FeatureVector => {
  const out: Record<string, number> = { ...sum }
  for (const [key, weight] of Object.entries(v)) out[key] = (out[key] ?? 0) + weight
  return out
}

const norm = (v: FeatureVector): number => {
  let squares = 0
  for (const weight of Object.values(v)) squares += weight * weight
  return Math.sqrt(squares)
}

/**
 * Cosine similarity in [0, 1] (weights are never negative); 0 when either vector is zero. Comparing
 * against a sum of vectors is comparing against their centroid: scale does not change a cosine.
 */
export const cosineSimilarity = (a: FeatureVector, b: FeatureVector): number => {
  const magnitude = norm(a) * norm(b)
  if (magnitude === 0) return 0
  let dot = 0
  for (const [key, weight] of Object.entries(a)) {
    const other = b[key]
    if (other !== undefined) dot += weight * other
  }
  return Math.min(1, dot / magnitude)
}
