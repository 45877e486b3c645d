/**
 * Entry point (`bin/candor.js` loads it): runs the CLI with JSON logs at LOG_LEVEL.
 * NodeRuntime.runMain interrupts the program on SIGINT/SIGTERM, so every scope finalizer (server
 * close, later consumer drains) runs before the process exits.
 */
import * as ValidationError from "@effect/cli/ValidationError"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Cause from "effect/Cause"
import * as ConfigError from "effect/ConfigError"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import { ListenFailed } from "../adapters/http/ListenFailed.js"
import { run } from "./Cli.js"
import { logLevelConfig } from "./Config.js"

const LogLevelLive = Layer.unwrapEffect(Effect.map(logLevelConfig, Logger.minimumLogLevel))

/** One JSON line per failure; runMain's own reporting would bypass the JSON logger. */
const report = (cause: Cause.Cause<unknown>): Effect.Effect<void> => {
  if (Cause.isInterruptedOnly(cause)) return Effect.void
  const failure = Cause.failureOption(cause)
  // @effect/cli has already printed the usage error.
  if (Option.isSome(failure) && ValidationError.isValidationError(failure.value)) return Effect.void
  if (Option.isSome(failure) && ConfigError.isConfigError(failure.value)) {
    return Effect.logError("invalid configuration").pipe(Effect.annotateLogs("error", String(failure.value)))
  }
  // A port that cannot be bound: the message says which setting to change; it is the whole story.
  if (Option.isSome(failure) && failure.value instanceof ListenFailed) {
    return Effect.logError(failure.value.message).pipe(
      Effect.annotateLogs({ variable: failure.value.variable, port: failure.value.port })
    )
  }
  // An expected failure (a database that cannot be reached, a data directory in use): its message
  // and its cause's, without stack traces. Defects keep the whole cause.
  if (Option.isSome(failure))
    return Effect.logError("candor stopped on an error").pipe(Effect.annotateLogs("error", describe(failure.value)))
  return Effect.logError("candor stopped on an error", cause)
}

const describe = (error: unknown): string => {
  const message = error instanceof Error ? error.message : String(error)
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : undefined
  return cause === undefined || cause === message || message.includes(cause) ? message : `${message}: ${cause}`
}

const main = Effect.suspend(() => run(process.argv)).pipe(
  Effect.provide(LogLevelLive),
  Effect.tapErrorCause(report),
  Effect.provide([Logger.json, NodeContext.layer])
)

NodeRuntime.runMain(main, { disablePrettyLogger: true, disableErrorReporting: true })
