/**
 * Metrics of the gateway's analysis path, in the process's Effect metrics, so `/metrics` shows them
 * with the others.
 */
import * as Metric from "effect/Metric"

/** Exchanges never analysed because the analysis queue was full: no event, no checkpoint for them. */
export const exchangesDropped = Metric.counter("candor_gateway_exchanges_dropped_total", {
  description: "Gateway exchanges dropped unanalysed because the analysis queue was full",
  incremental: true
})

/**
 * Tool-policy evaluations waiting for a slice of the event loop (adapters/gateway/PolicySlices.ts):
 * above zero, some tenant's policy and tools cost more than the request path's budget.
 */
export const policyEvaluationsSliced = Metric.gauge("candor_gateway_policy_evaluations_sliced", {
  description: "Gateway tool-policy evaluations too costly for the request path, waiting for their slices"
})
