/**
 * Traces (AAP): one by id. Whether the caller may read its agent is the caller's to check, and to
 * answer as `traceNotFound` when it may not, so ids of other users' traces do not leak.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { NotFound } from "../adapters/http/ApiErrors.js"
import { Store } from "../adapters/store/Store.js"

/** The answer for a trace that is not there, and for one the caller may not see. */
export const traceNotFound = (traceId: string) => new NotFound({ error: `trace ${traceId} not found` })

export const make = Effect.gen(function* () {
  const store = yield* Store

  /** The stored trace. */
  const get = (traceId: string) =>
    Effect.flatMap(store.getTrace(traceId), (trace) =>
      trace === undefined ? Effect.fail(traceNotFound(traceId)) : Effect.succeed(trace)
    )

  return { get }
})

export class Traces extends Context.Tag("candor/services/Traces")<Traces, Effect.Effect.Success<typeof make>>() {}

export const layer = Layer.effect(Traces, make)
