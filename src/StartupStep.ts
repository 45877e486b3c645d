/**
 * The steps of a start, logged at debug level: a process prints nothing at the default level until
 * its "listening" line, so one that never gets there (a lock waited on, a NATS request that never
 * ends) would otherwise not say where it is. With LOG_LEVEL=debug, each step logs as it begins and
 * as it ends, with its duration: the last "step started" without its "step done" is the culprit.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/** `layer`, its construction logged as startup step `step`. */
export const startupStep = <A, E, R>(step: string, layer: Layer.Layer<A, E, R>): Layer.Layer<A, E, R> =>
  Layer.unwrapEffect(
    Effect.gen(function* () {
      // Built only once its dependencies are: what it waits on from here is its own.
      yield* Effect.logDebug("step started").pipe(Effect.annotateLogs("step", step))
      const startedAt = Date.now()
      return Layer.tap(layer, () =>
        Effect.logDebug("step done").pipe(Effect.annotateLogs({ step, ms: Date.now() - startedAt }))
      )
    })
  )
