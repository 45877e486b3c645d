/**
 * Costly tool-policy evaluations are spread over turns of the event loop (issue 24: one agent's
 * policy of thousands of globs and requests of thousands of tools held every other agent's requests
 * for 20 s). The scheduler takes owners in turn, a slice each; over real HTTP, another agent's
 * requests are answered while an adversarial evaluation (1,000 unanchored globs, 512 new names of
 * 128 characters) is still waiting for its slices, and that evaluation still ends in the right answer.
 * Nothing is timed: the order of events is what is checked.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import { AgentState } from "../../../adapters/bus/AgentState.js"
import { agentIdOf } from "../../../adapters/gateway/AgentIdentity.js"
import { Inspector } from "../../../adapters/gateway/Inspector.js"
import { PolicySlices } from "../../../adapters/gateway/PolicySlices.js"
import { policyEvaluationsSliced } from "../../../adapters/metrics/GatewayMetrics.js"
import { sha256Hex } from "../../../adapters/providers/Identity.js"
import { Policy, type PolicyEncoded } from "../../../core/schema/Policy.js"
import { inspectorWithFakes } from "./Fakes.js"
import { call, type FakeUpstream, startGateway, startUpstream, type TestGateway } from "./Harness.js"

const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(effect)

/** A task that needs `slices` runs, logging each under `name`. */
const task = (log: Array<string>, name: string, slices: number) => {
  let left = slices
  return () => {
    log.push(name)
    return --left === 0 ? name : undefined
  }
}

describe("PolicySlices", () => {
  it("owners take turns, a slice each; an owner's tasks run in order", async () => {
    const slices = new PolicySlices(1)
    const log: Array<string> = []
    const done = await run(
      Effect.all(
        [
          slices.evaluate("org-a", task(log, "a1", 3)),
          slices.evaluate("org-a", task(log, "a2", 2)),
          slices.evaluate("org-b", task(log, "b1", 2))
        ],
        { concurrency: "unbounded" }
      )
    )
    expect(done).toEqual(["a1", "a2", "b1"])
    expect(log).toEqual(["a1", "b1", "a1", "b1", "a1", "a2", "a2"])
    expect(slices.waiting).toBe(0)
  })

  it("an interrupted evaluation leaves the queue; a failing one fails its caller only", async () => {
    const slices = new PolicySlices(1)
    const log: Array<string> = []
    const forever = await run(Effect.fork(slices.evaluate("org-a", task(log, "forever", Number.POSITIVE_INFINITY))))
    const failing = slices.evaluate("org-b", () => {
      throw new Error("a bug")
    })
    expect(Exit.isFailure(await run(Effect.exit(failing)))).toBe(true)
    await run(Fiber.interrupt(forever))
    const runs = log.length
    expect(await run(slices.evaluate("org-c", task(log, "after", 2)))).toBe("after")
    expect(log.slice(runs)).toEqual(["after", "after"])
    expect(slices.waiting).toBe(0)
  })
})

let scope: Scope.CloseableScope
let upstream: FakeUpstream
let gateway: TestGateway

beforeAll(async () => {
  scope = await run(Scope.make())
  const context = await run(Layer.buildWithScope(inspectorWithFakes, scope))
  const state = Context.get(context, AgentState)
  const policy = (encoded: PolicyEncoded) => Schema.decodeUnknownSync(Policy)(encoded)
  await run(state.update(agentIdOf(sha256Hex("sk-slices-flood"), undefined), { policy: policy(ADVERSARIAL) }))
  await run(state.update(agentIdOf(sha256Hex("sk-slices-victim"), undefined), { policy: policy(USUAL) }))
  upstream = await startUpstream((_r, res) => {
    res.writeHead(200, { "content-type": "application/json" })
    res.end(JSON.stringify({ model: "m", content: [{ type: "text", text: "ok" }] }))
  })
  gateway = await startGateway(upstream.url, Context.get(context, Inspector))
})
afterAll(async () => {
  await gateway.close()
  await upstream.close()
  await run(Scope.close(scope, Exit.void))
})

const LETTERS = "abcdefghij"
/** 1,000 distinct globs like `*a?b*c*z`: no literal anchor, so every one is a candidate for every name. */
const ADVERSARIAL: PolicyEncoded = {
  forbidden: Array.from({ length: 1000 }, (_, i) => ({
    pattern: `*${LETTERS[i % 10]}?${LETTERS[Math.floor(i / 10) % 10]}*${LETTERS[Math.floor(i / 100)]}*z`,
    reason: `rule ${i}`
  })),
  defaults: { enforcement_mode: "warn", unmapped_tool_action: "allow" }
}
const USUAL: PolicyEncoded = {
  forbidden: [{ pattern: "shell_*", reason: "no shells" }],
  capability_mappings: { files: { tools: ["mcp__fs__*"], card_actions: ["read"] } },
  defaults: { enforcement_mode: "enforce", unmapped_tool_action: "allow" }
}

const anthropic = (key: string, tools: ReadonlyArray<string>) =>
  call(`${gateway.url}/anthropic/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": key },
    body: JSON.stringify({
      model: "claude-test",
      max_tokens: 10,
      messages: [{ role: "user", content: "hi" }],
      tools: tools.map((name) => ({ name, input_schema: { type: "object" } }))
    })
  })

const waitingSlices = () => Effect.runSync(Metric.value(policyEvaluationsSliced)).value

describe("a costly evaluation beside another agent's requests", () => {
  it("the other agent is answered while the costly evaluation waits for its slices; that one still gets its verdict", async () => {
    // 512 names never seen (nothing remembered), each 128 characters of the globs' letters.
    let seed = 24
    const letter = () => LETTERS[((seed = (seed * 1103515245 + 12345) % 2147483648) >>> 16) % 10]
    const names = Array.from(
      { length: 512 },
      (_, i) => Array.from({ length: 127 }, letter).join("") + (i % 2 === 0 ? "z" : "y")
    )
    const flood = anthropic("sk-slices-flood", names)
    const deadline = Date.now() + 20_000
    while (waitingSlices() === 0) {
      expect(Date.now()).toBeLessThan(deadline)
      await new Promise((resolve) => setImmediate(resolve))
    }
    for (let i = 0; i < 3; i++) {
      const res = await anthropic("sk-slices-victim", ["mcp__fs__read", "search"])
      expect(res.status).toBe(200)
      expect(res.headers["x-policy-verdict"]).toBe("pass")
    }
    expect(waitingSlices()).toBeGreaterThan(0)
    const res = await flood
    expect(res.status).toBe(200)
    // High-severity forbidden rules matched (names ending in "z"), in warn mode: forwarded as warn.
    expect(res.headers["x-policy-verdict"]).toBe("warn")
    expect(waitingSlices()).toBe(0)
  })
})
