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
