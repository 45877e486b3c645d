/**
 * Liveness and readiness probes, served by every role on HOST:PORT.
 *
 * Plain router routes rather than HttpApi endpoints: probes are for orchestrators, not API
 * clients, so they stay out of the OpenAPI document and out of the request log.
 *
 * Readiness runs the process's checks (the database round trip, the bus connection): 200
 * `{status: "ready", checks: {store: "ok", bus: "ok"}}`, or 503 with `error` naming what failed.
 */
import * as HttpLayerRouter from "@effect/platform/HttpLayerRouter"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

export interface ReadinessCheck {
  readonly name: string
  /** Succeeds when the dependency answers. */
  readonly check: Effect.Effect<unknown, unknown>
}

/** The checks `/health/ready` runs; Serve.ts provides those of the roles it starts. */
export class Readiness extends Context.Tag("candor/src/http/Readiness")<Readiness, ReadonlyArray<ReadinessCheck>>() {
  static readonly none: Layer.Layer<Readiness> = Layer.succeed(Readiness, [])
}

/** A check slower than this counts as failed (probes time out themselves). */
const CHECK_TIMEOUT = "2 seconds"

/** The process is up and serving HTTP. */
const live = HttpServerResponse.unsafeJson({ status: "ok" })

const ready = Effect.gen(function* () {
  const checks = yield* Readiness
  const results = yield* Effect.forEach(
    checks,
    ({ check, name }) =>
      check.pipe(
        Effect.timeout(CHECK_TIMEOUT),
        Effect.as([name, "ok"] as const),
        Effect.orElseSucceed(() => [name, "failed"] as const)
      ),
    { concurrency: "unbounded" }
  )
  const failed = results.filter(([, status]) => status !== "ok").map(([name]) => name)
  const body = { status: failed.length === 0 ? "ready" : "not_ready", checks: Object.fromEntries(results) }
  return failed.length === 0
    ? HttpServerResponse.unsafeJson(body)
    : HttpServerResponse.unsafeJson({ ...body, error: `not ready: ${failed.join(", ")} unreachable` }, { status: 503 })
})

export const HealthRoutes = Layer.unwrapEffect(
  Effect.map(Effect.context<Readiness>(), (context) =>
    HttpLayerRouter.addAll([
      HttpLayerRouter.route("GET", "/health/live", live),
      HttpLayerRouter.route("GET", "/health/ready", Effect.provide(ready, context))
    ])
  )
).pipe(
  // Probes hit every few seconds: logging each would drown the useful lines.
  Layer.provide(HttpLayerRouter.disableLogger)
)
