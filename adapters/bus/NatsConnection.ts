/**
 * One NATS connection per process, shared by every NATS layer (bus, agent state, partition leases).
 * It reconnects forever, so an outage or a server restart is waited out rather than fatal; closing
 * the layer drains it (subscriptions finish what they hold, pending publishes are flushed).
 */
import { connect, type NatsConnection as Connection } from "@nats-io/transport-node"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { BusError } from "./BusError.js"

export interface NatsConnectionOptions {
  /** Shown in the server's connection list. */
  readonly name?: string
  /** Pause between reconnect attempts. */
  readonly reconnectWaitMs?: number
}

export class NatsConnection extends Context.Tag("candor/adapters/bus/NatsConnection")<NatsConnection, Connection>() {
  /** `url` is NATS_URL: one server or a comma-separated list. The first connect must succeed. */
  static readonly layer = (url: string, options: NatsConnectionOptions = {}): Layer.Layer<NatsConnection, BusError> =>
    Layer.scoped(
      NatsConnection,
      Effect.acquireRelease(
        Effect.tryPromise({
          try: () =>
            connect({
              servers: url.split(",").map((s) => s.trim()),
              name: options.name ?? "candor",
              maxReconnectAttempts: -1,
              reconnectTimeWait: options.reconnectWaitMs ?? 1_000,
              // Otherwise every request (each JetStream publish) builds two Error objects up front for
              // their stack traces: some 4% of a gateway's CPU. Our errors carry the operation instead.
              noAsyncTraces: true
            }),
          // Only the client's message: the URL may carry credentials.
          catch: (cause) =>
            new BusError({ operation: "connect", cause: cause instanceof Error ? cause.message : cause })
        }),
        (nc) =>
          Effect.promise(() => nc.drain()).pipe(
            Effect.timeout("10 seconds"),
            Effect.catchAllCause(() => Effect.void),
            Effect.zipRight(Effect.promise(() => nc.close().catch(() => undefined)))
          )
      )
    )
}
