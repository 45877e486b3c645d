/**
 * Metrics of the gateway's recording path, in the process's Effect metrics, so `/metrics` shows them
 * with the others (a gateway thread's too: the thread bridge forwards every `candor_gateway_*` family).
 */
import * as Metric from "effect/Metric"

/**
 * Exchanges recorded without analysis (issue 24: never dropped, never a silent clear), by reason:
 * `undecodable_encoding`, `unparseable_body`, `judge_timeout`, `over_share` (their tenant's share of
 * the analysis queue was full).
 */
export const exchangesUnanalysed = Metric.counter("candor_gateway_exchanges_unanalysed_total", {
  description: "Gateway exchanges recorded unanalysed (the failure policy's verdict), by reason",
  incremental: true
})

/** Provider answers 401 or 403: the provider refused the key; no checkpoint, no agent. */
export const providerRefusals = Metric.counter("candor_gateway_provider_refusals_total", {
  description: "Provider answers 401/403 (the provider refused the key): recorded by no checkpoint",
  incremental: true
})

/** Requests refused with 503 before the provider because their exchange could not be recorded. */
export const requestsUnrecordable = Metric.counter("candor_gateway_requests_unrecordable_total", {
  description: "Requests refused with 503 before the provider: the event publisher's buffer was full",
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
export type GatewayCap =
  "tools" | "tool_name" | "inflight_credential" | "inflight_org" | "inflight_process" | "tool_results"

/**
 * Requests the gateway refused over a cap, by cap: 413 over the tool caps (GATEWAY_MAX_TOOLS,
 * GATEWAY_MAX_TOOL_NAME), 429 / 503 over the bytes in flight, 429 over the tool results one request
 * may have judged (`tool_results`, issue 28). A tenant flooding the gateway shows here.
 */
export const requestsOverCap = Metric.counter("candor_gateway_requests_over_cap_total", {
  description:
    "Gateway requests refused over a cap (tools, tool_name, inflight_credential, inflight_org, inflight_process, tool_results)",
  incremental: true
})

const overCap = Object.fromEntries(
  (["tools", "tool_name", "inflight_credential", "inflight_org", "inflight_process", "tool_results"] as const).map(
    (cap) => [cap, requestsOverCap.pipe(Metric.tagged("cap", cap))]
  )
) as Record<GatewayCap, typeof requestsOverCap>

/** Counts one refusal over `cap` (synchronously: the gateway's request path runs no effect for it). */
export const countOverCap = (cap: GatewayCap): void => overCap[cap].unsafeUpdate(1, [])

/**
 * A contained agent's requests answered 429 rather than 403 (adapters/gateway/ContainedRefusals.ts):
 * past 10 refusals a second, an agent's refusals are counted here, not recorded one by one.
 */
export const containedRequestsThrottled = Metric.counter("candor_gateway_contained_requests_throttled_total", {
  description: "Requests of a contained agent answered 429 past its recorded refusals a second (not recorded)",
  incremental: true
})

/** Counts one throttled refusal (synchronously, as `countOverCap`). */
export const countContainedThrottled = (): void => containedRequestsThrottled.unsafeUpdate(1, [])

/**
 * Tool results the gateway judged before forwarding their request (issue 28,
 * adapters/gateway/ToolResultScreening.ts), by verdict: each is also a `tool_result` checkpoint.
 */
export const toolResultsJudged = Metric.counter("candor_gateway_tool_results_judged_total", {
  description: "Tool results in requests judged by the gateway before forwarding, by verdict",
  incremental: true
})

const judgedBy = Object.fromEntries(
  (["clear", "review_needed", "boundary_violation"] as const).map((verdict) => [
    verdict,
    toolResultsJudged.pipe(Metric.tagged("verdict", verdict))
  ])
) as Record<"clear" | "review_needed" | "boundary_violation", typeof toolResultsJudged>

/** Counts one judged tool result (synchronously, as `countOverCap`). */
export const countToolResultJudged = (verdict: "clear" | "review_needed" | "boundary_violation"): void =>
  judgedBy[verdict].unsafeUpdate(1, [])

/**
 * MCP answers the gateway watched but could not read (docs/mcp.md): a message past the size bound,
 * not JSON, or in a coding it did not ask for. Passed to the agent all the same; their tools unpinned.
 */
export const mcpAnswersUnreadable = Metric.counter("candor_gateway_mcp_answers_unreadable_total", {
  description: "MCP answer messages the gateway watched (tools/list) but could not read: passed, not pinned",
  incremental: true
})

/** Counts one unreadable MCP answer message (synchronously). */
export const countMcpUnreadable = (): void => mcpAnswersUnreadable.unsafeUpdate(1, [])
