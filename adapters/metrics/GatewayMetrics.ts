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

/** What a refusal over one of the gateway's caps names (issue 24). */
export type GatewayCap = "tools" | "tool_name" | "inflight_credential" | "inflight_org" | "inflight_process"

/**
 * Requests the gateway refused over a cap, by cap: 413 over the tool caps (GATEWAY_MAX_TOOLS,
 * GATEWAY_MAX_TOOL_NAME), 429 / 503 over the bytes in flight. A tenant flooding the gateway shows here.
 */
export const requestsOverCap = Metric.counter("candor_gateway_requests_over_cap_total", {
  description:
    "Gateway requests refused over a cap (tools, tool_name, inflight_credential, inflight_org, inflight_process)",
  incremental: true
})

const overCap = Object.fromEntries(
  (["tools", "tool_name", "inflight_credential", "inflight_org", "inflight_process"] as const).map((cap) => [
    cap,
    requestsOverCap.pipe(Metric.tagged("cap", cap))
  ])
) as Record<GatewayCap, typeof requestsOverCap>

/** Counts one refusal over `cap` (synchronously: the gateway's request path runs no effect for it). */
export const countOverCap = (cap: GatewayCap): void => overCap[cap].unsafeUpdate(1, [])
