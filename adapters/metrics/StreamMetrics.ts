/**
 * Metrics of the live alert stream (`GET /v1/stream`), in the process's Effect metrics so `/metrics`
 * shows them with the others: clients connected now, events sent, and how old an event is when it
 * is written to a client (the lag from its `created_at`, which includes the outbox and the feed).
 */
import * as Metric from "effect/Metric"
import * as MetricBoundaries from "effect/MetricBoundaries"

export const streamClients = Metric.gauge("candor_stream_clients", {
  description: "Clients connected to GET /v1/stream"
})

export const streamEventsSent = Metric.counter("candor_stream_events_sent_total", {
  description: "Events written to stream clients",
  incremental: true
})

export const streamLag = Metric.histogram(
  "candor_stream_lag_seconds",
  MetricBoundaries.fromIterable([0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]),
  "Seconds from an event's created_at to its write to a stream client"
)

/** Streams the server closed because their credential ended (revoked, expired, role lost). */
export const streamAccessEnded = Metric.counter("candor_stream_access_ended_total", {
  description: "Streams of GET /v1/stream closed because their credential or the access it gave ended",
  incremental: true
})
