/**
 * Human approval's signal on the real NATS KV (adapters/bus/ApprovalSignalKv.ts): the decider and
 * the waiter are two processes (two layer instances, each with its own connection). A waiter wakes
 * on a decision published after it began, sees one published before it began at once, and is not
 * woken by another approval's decision.
 */
import { expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import { ApprovalSignal } from "../../../adapters/bus/ApprovalSignal.js"
import * as ApprovalSignalKv from "../../../adapters/bus/ApprovalSignalKv.js"
import { NatsTest, removeNatsResources, uniquePrefix } from "./NatsSupport.js"
import { describeIntegration } from "../../support/Integration.js"

/** A fresh signal instance on the prefix's bucket, with a connection of its own (another process). */
const processOn = (prefix: string) =>
  Effect.map(Layer.build(ApprovalSignalKv.layer({ prefix }).pipe(Layer.provide(NatsTest))), (ctx) =>
    Context.get(ctx, ApprovalSignal)
  )

const withPrefix = <A, E, R>(body: (prefix: string) => Effect.Effect<A, E, R>) => {
  const prefix = uniquePrefix("apr")
  return Effect.gen(function* () {
    yield* Effect.addFinalizer(() => removeNatsResources(prefix).pipe(Effect.provide(NatsTest)))
    return yield* body(prefix)
  }).pipe(Effect.scoped)
}

describeIntegration("nats", "ApprovalSignalKv", () => {
  it.live("a waiter in one process wakes on the decision published in another, and only on its own", () =>
    withPrefix((prefix) =>
      Effect.gen(function* () {
        const gateway = yield* processOn(prefix)
        const api = yield* processOn(prefix)
        const waiting = yield* Effect.fork(gateway.wait("apr-one"))
        yield* api.publish("apr-other", "denied")
        yield* api.publish("apr-one", "approved")
        expect(yield* Fiber.join(waiting).pipe(Effect.timeout("10 seconds"))).toBe("approved")
      })
    )
  )

  it.live("a decision published before the wait began is seen at once", () =>
    withPrefix((prefix) =>
      Effect.gen(function* () {
        const gateway = yield* processOn(prefix)
        const api = yield* processOn(prefix)
        yield* api.publish("apr-early", "expired")
        expect(yield* gateway.wait("apr-early").pipe(Effect.timeout("10 seconds"))).toBe("expired")
      })
    )
  )
})
