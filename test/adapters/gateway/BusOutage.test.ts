/**
 * A bus outage at the gateway: responses go out at once, and their events are held and published
 * when the bus is back, however many attempts that takes (not given up after a few), in the order
 * of the responses.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import { createHash } from "node:crypto"
import { AgentState } from "../../../adapters/bus/AgentState.js"
import * as GatewayInspector from "../../../adapters/gateway/GatewayInspector.js"
import { Inspector } from "../../../adapters/gateway/Inspector.js"
import type { GatewayEvent } from "../../../core/schema/Event.js"
import { Bus, BusError, type Subscription } from "../../../adapters/bus/Bus.js"
import { call, type FakeUpstream, startGateway, startUpstream, type TestGateway } from "./Harness.js"
import { FakeAdapters, FakeJudge } from "./Fakes.js"

const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(effect)

/** The in-process bus, refusing publishes while `outage.down` (and counting the refusals). */
const outage = { down: false, refused: 0 }
const FlakyBus = Layer.effect(
  Bus,
  Effect.map(Bus, (bus) =>
    Bus.of({
      ...bus,
      publish: (subject, payload, options) =>
        Effect.suspend(() => {
          if (!outage.down) return bus.publish(subject, payload, options)
          outage.refused++
          return Effect.fail(new BusError({ operation: "publish", cause: "connection refused" }))
        })
    })
  )
).pipe(Layer.provide(Bus.layerMemory))

let scope: Scope.CloseableScope
let upstream: FakeUpstream
let gateway: TestGateway
let events: Subscription

beforeAll(async () => {
  scope = await run(Scope.make())
  const context = await run(
    Layer.buildWithScope(
      GatewayInspector.layer().pipe(
        Layer.provideMerge(Layer.mergeAll(AgentState.layerMemory, FlakyBus, FakeAdapters, FakeJudge))
      ),
      scope
    )
  )
  events = await run(Scope.extend(Context.get(context, Bus).subscribe("candor.events."), scope))
  // The thinking is the request's `think`, so each event can be told apart by its thinking hash.
  upstream = await startUpstream((r, res) => {
    const { think } = JSON.parse(r.body.toString()) as { think: string }
    const body = JSON.stringify({
      model: "claude-test",
      content: [
        { type: "thinking", thinking: think },
        { type: "text", text: "ok" }
      ]
    })
    res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
    res.end(body)
  })
  gateway = await startGateway(upstream.url, Context.get(context, Inspector))
})
afterAll(async () => {
  await gateway.close()
  await upstream.close()
  await run(Scope.close(scope, Exit.void))
})

describe("GatewayInspector during a bus outage", () => {
  it("answers at once and publishes the held events in order once the bus is back", async () => {
    outage.down = true
    const thoughts = ["first thought", "second thought", "third thought"]
    for (const think of thoughts) {
      const res = await call(`${gateway.url}/anthropic/v1/messages`, {
        method: "POST",
        headers: { "x-api-key": "sk-ant-outage", "content-type": "application/json" },
        body: JSON.stringify({ model: "claude-test", think })
      })
      expect(res.status).toBe(200)
    }
    // Well past the handful of attempts a brief failover would need (the old policy gave up after five).
    while (outage.refused < 7) await run(Effect.sleep("20 millis"))
    outage.down = false
    const published: Array<string> = []
    for (let i = 0; i < thoughts.length; i++) {
      const message = await run(events.take.pipe(Effect.timeout("20 seconds")))
      published.push((message.payload as GatewayEvent).checkpoint.thinking_block_hash)
    }
    expect(published).toEqual(thoughts.map((think) => createHash("sha256").update(think).digest("hex")))
  }, 30_000)
})
