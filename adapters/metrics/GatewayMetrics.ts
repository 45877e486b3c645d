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
