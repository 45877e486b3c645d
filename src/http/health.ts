/**
 * Liveness and readiness probes, served by every role on HOST:PORT.
 *
 * Plain router routes rather than HttpApi endpoints: probes are for orchestrators, not API
 * clients, so they stay out of the OpenAPI document and out of the request log.
 */
import * as HttpLayerRouter from "@effect/platform/HttpLayerRouter"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Layer from "effect/Layer"

/** The process is up and serving HTTP. */
const live = HttpServerResponse.unsafeJson({ status: "ok" })

/** Ready for traffic. `checks` will name each dependency (database, bus) once they are wired in. */
const ready = HttpServerResponse.unsafeJson({ status: "ready", checks: {} })

export const HealthRoutes = HttpLayerRouter.addAll([
  HttpLayerRouter.route("GET", "/health/live", live),
  HttpLayerRouter.route("GET", "/health/ready", ready)
]).pipe(
  // Probes hit every few seconds: logging each would drown the useful lines.
  Layer.provide(HttpLayerRouter.disableLogger)
)
