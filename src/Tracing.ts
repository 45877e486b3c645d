/**
 * The process's (or thread's) trace exporter, from the configuration: `Tracing` over OTLP/HTTP when
 * OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set, nothing otherwise, so
 * that without a collector no code builds a span (adapters/tracing/Tracing.ts). Each thread of the
 * embedded default exports its own spans: the gateway's from the main thread, the workers' from the
 * backend thread, one resource each, told apart by `candor.roles`.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import pkg from "../package.json" with { type: "json" }
import * as Tracing from "../adapters/tracing/Tracing.js"
import { CandorConfig, otlpTracesUrl } from "./Config.js"

/**
 * Typed as providing nothing: `Tracing` is optional (read with `Effect.serviceOption`), so no layer
 * may require it, and it is in the context only when exporting.
 */
export const TracingLive = (roles: ReadonlyArray<string>): Layer.Layer<never, never, CandorConfig> =>
  Layer.unwrapEffect(
    Effect.map(CandorConfig, (config): Layer.Layer<never> => {
      const url = otlpTracesUrl(config)
      if (url === undefined) return Layer.empty
      return Tracing.layer({
        url,
        protocol: config.otlpProtocol,
        serviceName: config.otelServiceName,
        serviceVersion: pkg.version,
        attributes: { "candor.roles": roles.join(",") },
        exportIntervalMs: config.otelScheduleDelayMs,
        headers: config.otlpHeaders
      })
    })
  )
