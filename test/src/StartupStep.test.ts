/**
 * Startup steps at debug level: a step logs as it begins and once its layer is built, so the last
 * "step started" without its "step done" names where a start that never finishes waits.
 */
import { expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import { startupStep } from "../../src/StartupStep.js"

class Thing extends Context.Tag("candor/test/src/Thing")<Thing, string>() {}

const capturing = (logged: Array<string>) =>
  Layer.merge(
    Logger.replace(
      Logger.defaultLogger,
      Logger.make(({ annotations, logLevel, message }) => {
        const step = HashMap.get(annotations, "step")
        logged.push(`${logLevel.label} ${String(message)} ${step._tag === "Some" ? String(step.value) : ""}`)
      })
    ),
    Logger.minimumLogLevel(LogLevel.Debug)
  )

it.effect("a step logs when it starts and when it is done; a stuck one only that it started", () =>
  Effect.gen(function* () {
    const logged: Array<string> = []
    const gate = yield* Deferred.make<void>()
    const stuck = startupStep("the stuck one", Layer.effect(Thing, Effect.as(Deferred.await(gate), "built")))
    const fiber = yield* Layer.build(stuck).pipe(
      Effect.map(Context.get(Thing)),
      Effect.scoped,
      Effect.provide(capturing(logged)),
      Effect.fork
    )
    while (logged.length === 0) yield* Effect.yieldNow()
    // Waiting: it says where, and nothing more.
    yield* Effect.yieldNow()
    expect(logged).toEqual(["DEBUG step started the stuck one"])
    yield* Deferred.succeed(gate, undefined)
    expect(yield* Fiber.join(fiber)).toBe("built")
    expect(logged).toEqual(["DEBUG step started the stuck one", "DEBUG step done the stuck one"])
  })
)
