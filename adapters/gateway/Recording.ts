/**
 * What the gateway does when an exchange cannot be recorded as usual (issue 24, "nothing answered
 * leaves the record"): the provider refused the key (no checkpoint, no agent: a metric), an
 * exchange recorded unanalysed (a metric by reason), a request refused before the provider because
 * its exchange could not be recorded at all (503 with `Retry-After`).
 */
import * as MetricLabel from "effect/MetricLabel"
import type { UnanalysedReason } from "../../core/schema/Verdict.js"
import { exchangesUnanalysed, providerRefusals, requestsUnrecordable } from "../metrics/GatewayMetrics.js"
import { noopObserver, type ResponseObserver } from "./ExchangeOutcome.js"
import { type GatewayResponse, jsonResponse } from "./Inspector.js"

/**
 * A provider's 401 or 403: it refused the key (or the key's access to the request), so no model
 * answered. Such an exchange creates no checkpoint and no agent: a stranger's made-up keys must not
 * fill the record, nor create agents. Counted in `candor_gateway_provider_refusals_total{status}`.
 */
export const isProviderRefusal = (status: number | undefined): boolean => status === 401 || status === 403

const STATUS_LABELS: Readonly<Record<number, ReadonlyArray<MetricLabel.MetricLabel>>> = {
  401: [MetricLabel.make("status", "401")],
  403: [MetricLabel.make("status", "403")]
}

/** Counts a provider refusal; its body is not observed. */
export const providerRefused = (status: number): ResponseObserver => {
  providerRefusals.unsafeUpdate(1, STATUS_LABELS[status] ?? [])
  return noopObserver
}

const REASON_LABELS = new Map<UnanalysedReason, ReadonlyArray<MetricLabel.MetricLabel>>()

export const countUnanalysed = (reason: UnanalysedReason): void => {
  let labels = REASON_LABELS.get(reason)
  if (labels === undefined) REASON_LABELS.set(reason, (labels = [MetricLabel.make("reason", reason)]))
  exchangesUnanalysed.unsafeUpdate(1, labels)
}

/** Seconds a refused client should wait: the publisher retries the bus at least every 5 s. */
export const RETRY_AFTER_SECONDS = 5

const UNRECORDABLE: GatewayResponse = (() => {
  const response = jsonResponse(503, {
    error: "Candor cannot record this exchange now (its event buffer is full); retry later"
  })
  return { ...response, headers: { ...response.headers, "retry-after": String(RETRY_AFTER_SECONDS) } }
})()

/** The 503 of a request whose exchange could not be recorded; counted. */
export const unrecordableRefusal = (): GatewayResponse => {
  requestsUnrecordable.unsafeUpdate(1, [])
  return UNRECORDABLE
}
