/**
 * `/metrics` in Prometheus text (docs/api.md, "Operations": requests, latencies, verdicts, queue lag, proofs):
 * the process's Effect metrics (request counts and latencies recorded by `RequestMetricsLive`, and
 * whatever else the roles record) plus gauges the caller supplies (the store's, on roles that
 * have one). A plain router route, out of the OpenAPI document, like the health probes.
 */
import * as HttpLayerRouter from "@effect/platform/HttpLayerRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as HttpMetrics from "../../adapters/metrics/HttpMetrics.js"
import { type Family, fromSnapshot, render } from "../../adapters/metrics/Prometheus.js"
import { CandorApi } from "../api/Api.js"

export const METRICS_PATH = "/metrics"

/** The route templates requests are labelled with: every API endpoint and the plain routes. */
const apiTemplates = (): ReadonlyArray<string> =>
  Object.values(CandorApi.groups).flatMap((group) => Object.values(group.endpoints).map((e) => e.path))

const labelOf = HttpMetrics.routeMatcher([
  ...apiTemplates(),
  "/health/live",
  "/health/ready",
  METRICS_PATH,
  "/docs",
  "/v1/openapi.json"
])

/** Failures that escape every other middleware are a 404 (no route) or a 500. */
const statusOf = (exit: Exit.Exit<HttpServerResponse.HttpServerResponse, unknown>): number => {
  if (Exit.isSuccess(exit)) return exit.value.status
  const squashed = exit.cause._tag === "Fail" ? (exit.cause.error as { _tag?: unknown }) : undefined
  return squashed?._tag === "RouteNotFound" ? 404 : 500
}

/** Counts and times every request the server answers. */
export const RequestMetricsLive = HttpLayerRouter.middleware(
  (httpEffect) =>
    Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      const start = yield* Clock.currentTimeNanos
      const exit = yield* Effect.exit(httpEffect)
      const seconds = Number((yield* Clock.currentTimeNanos) - start) / 1e9
      const route = labelOf(request.url.split("?")[0] ?? "/")
      yield* Metric.update(
        HttpMetrics.duration.pipe(Metric.tagged("route", route), Metric.tagged("method", request.method)),
        seconds
      )
      yield* Metric.update(
        HttpMetrics.requests.pipe(
          Metric.tagged("route", route),
          Metric.tagged("method", request.method),
          Metric.tagged("status", String(statusOf(exit)))
        ),
        1
      )
      return yield* exit
    }),
  { global: true }
)

/** GET /metrics: the Effect metrics and `gauges` (failing gauges are left out, never failing the scrape). */
export const metricsRoute = (gauges: Effect.Effect<ReadonlyArray<Family>, unknown>) =>
  HttpLayerRouter.add(
    "GET",
    METRICS_PATH,
    Effect.gen(function* () {
      const snapshot = yield* Metric.snapshot
      const extra = yield* gauges.pipe(
        Effect.tapError(() => Effect.logWarning("metrics: store gauges unavailable")),
        Effect.orElseSucceed(() => [])
      )
      return HttpServerResponse.text(render([...fromSnapshot(snapshot), ...extra]), {
        contentType: "text/plain; version=0.0.4; charset=utf-8"
      })
    })
  ).pipe(Layer.provide(HttpLayerRouter.disableLogger))
