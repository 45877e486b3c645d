/**
 * Metrics of webhook deliveries, in the process's Effect metrics, so `/metrics` shows them with the
 * others: attempts by event type and outcome, and how long receivers take to answer.
 */
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as MetricBoundaries from "effect/MetricBoundaries"

export type DeliveryOutcome = "delivered" | "retry" | "failed"

export const deliveries = Metric.counter("candor_webhook_deliveries_total", {
  description: "Webhook delivery attempts by event type and outcome (delivered, retry, failed)",
  incremental: true
})

export const deliverySeconds = Metric.histogram(
  "candor_webhook_delivery_seconds",
  MetricBoundaries.fromIterable([0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]),
  "Webhook delivery attempt latency in seconds, request to answer"
)

/** Counts one attempt (or a delivery ended without one) and, when it was made, its latency. */
export const recordDelivery = (
  eventType: string,
  outcome: DeliveryOutcome,
  latencyMs: number | undefined
): Effect.Effect<void> =>
  Effect.zipRight(
    Metric.update(deliveries.pipe(Metric.tagged("event_type", eventType), Metric.tagged("outcome", outcome)), 1),
    latencyMs === undefined ? Effect.void : Metric.update(deliverySeconds, latencyMs / 1000)
  )
