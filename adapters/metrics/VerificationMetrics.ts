/**
 * Metrics of the work the public routes make the API do for anyone: chain verification passes
 * (full or incremental) and the certificates they checked, and requests refused by a per-client
 * limit, by class. A flood shows up here before it shows up in latency.
 */
import * as Metric from "effect/Metric"

export const chainPasses = Metric.counter("candor_chain_verification_passes_total", {
  description: "Chain verification passes over an agent's log, by kind (full, incremental)",
  incremental: true
})

export const chainCertificates = Metric.counter("candor_chain_verification_certificates_total", {
  description: "Certificates checked by chain verification passes (links, signatures, Merkle leaves)",
  incremental: true
})

export const publicRateLimited = Metric.counter("candor_public_rate_limited_total", {
  description: "Requests refused with 429 by a per-client limit, by rate class",
  incremental: true
})
