/**
 * Scoped transactions at the gateway, over real HTTP with the real provider adapters: a request
 * naming an open transaction (`X-Transaction-Id`) is evaluated against the agent's policy narrowed
 * to the transaction's tools (a named tool passes, any other is refused in enforce); an unknown id,
 * another agent's, a completed or an expired one (on the test clock) is refused with 403
 * `transaction_error` and `enforcement.blocked` (rule `transaction`), before the upstream is called;
 * a request without the header is judged as before; the header never reaches the provider; and a
 * gateway whose copy has not caught up with a new transaction asks the shared state once.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as TestClock from "effect/TestClock"
import * as TestContext from "effect/TestContext"
import { createHash } from "node:crypto"
import type { ServerResponse } from "node:http"
import { type AgentSettings, AgentState, defaultSettings } from "../../../adapters/bus/AgentState.js"
import { Bus } from "../../../adapters/bus/Bus.js"
import { agentIdOf } from "../../../adapters/gateway/AgentIdentity.js"
import * as GatewayInspector from "../../../adapters/gateway/GatewayInspector.js"
import { Inspector } from "../../../adapters/gateway/Inspector.js"
import { ProviderAdapters } from "../../../adapters/gateway/ProviderAdapters.js"
import { sha256Hex } from "../../../adapters/providers/Identity.js"
import { providerAdapters } from "../../../adapters/providers/Registry.js"
import { withUnsetDefaultsLoosest } from "../../../core/ScopedTransaction.js"
import { Policy, type PolicyEncoded } from "../../../core/schema/Policy.js"
import type { GatewayTransaction } from "../../../core/schema/ScopedTransaction.js"
import * as RecordingEventFeed from "../../support/RecordingEventFeed.js"
import { RecordedEvents } from "../../support/RecordingEventFeed.js"
import { FakeJudge } from "./Fakes.js"
import { call, type FakeUpstream, startGateway, startUpstream, type TestGateway } from "./Harness.js"

const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(effect)
const policyOf = (encoded: PolicyEncoded): Policy => Schema.decodeUnknownSync(Policy)(encoded)

/** A well-formed transaction id (`txn-<uuid>`, as the gateway requires) named after `name`, the same each time. */
const txn = (name: string) => {
  const hex = createHash("sha256").update(name).digest("hex")
  return `txn-${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`
}

const START = Date.parse("2026-03-01T12:00:00Z")
const HOUR = 3_600_000

/**
 * The in-memory state with a copy that can fall behind: for an agent in `stale`, `get` and `peek`
 * answer the settings as they were when it became stale (a gateway whose KV watch has not brought
 * the change yet), `refresh` answers the current ones and catches the copy up.
 */
const lagging = {
  stale: new Map<string, AgentSettings>(),
  refreshes: 0
}
const LaggingState = Layer.effect(
  AgentState,
  Effect.map(AgentState, (inner) => {
    const read = (agentId: string) => lagging.stale.get(agentId) ?? inner.peek!(agentId)
    return {
      ...inner,
      get: (agentId: string) => Effect.sync(() => read(agentId)),
      peek: read,
      refresh: (agentId: string) =>
        Effect.suspend(() => {
          lagging.refreshes++
          lagging.stale.delete(agentId)
          return inner.get(agentId)
        })
    }
  })
).pipe(Layer.provideMerge(AgentState.layerMemory))

let scope: Scope.CloseableScope
let upstream: FakeUpstream
let gateway: TestGateway
let state: AgentState["Type"]
let recorded: RecordedEvents["Type"]
let clock: TestClock.TestClock

beforeAll(async () => {
  scope = await run(Scope.make())
  const testClock = TestClock.defaultTestClock.pipe(Layer.provide(TestContext.TestContext))
  clock = Context.get(await run(Layer.buildWithScope(testClock, scope)), TestClock.TestClock)
  await run(clock.setTime(START))
  const inspector = GatewayInspector.layer().pipe(
    Layer.provideMerge(
      Layer.mergeAll(
        LaggingState,
        Bus.layerMemory,
        Layer.succeed(ProviderAdapters, providerAdapters),
        FakeJudge,
        RecordingEventFeed.layer()
      )
    ),
    Layer.provide(Layer.setClock(clock))
  )
  const context = await run(Layer.buildWithScope(inspector, scope))
  state = Context.get(context, AgentState)
  recorded = Context.get(context, RecordedEvents)
  upstream = await startUpstream((_r, res: ServerResponse) => {
    const body = JSON.stringify({ model: "claude-test", content: [{ type: "text", text: "ok" }] })
    res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
    res.end(body)
  })
  gateway = await startGateway(upstream.url, Context.get(context, Inspector))
})
afterAll(async () => {
  await gateway?.close()
  await upstream?.close()
  await run(Scope.close(scope, Exit.void))
})

/** The agent's own policy: shells forbidden, everything else allowed, in `mode`. */
const agentPolicy = (mode: "warn" | "enforce") =>
  policyOf({
    forbidden: [{ pattern: "shell_*", reason: "no shells" }],
    defaults: { enforcement_mode: mode, unmapped_tool_action: "allow" }
  })

let counter = 0
const newAgent = async (settings: Partial<AgentSettings>) => {
  const key = `sk-txn-${++counter}`
  const agentId = agentIdOf(sha256Hex(key), undefined)
  await run(state.update(agentId, settings))
  const send = (tools: ReadonlyArray<string>, transactionId?: string) =>
    call(`${gateway.url}/anthropic/v1/messages`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-api-key": key,
        ...(transactionId === undefined ? {} : { "X-Transaction-Id": transactionId })
      },
      body: JSON.stringify({
        model: "claude-test",
        max_tokens: 10,
        messages: [{ role: "user", content: "hi" }],
        tools: tools.map((name) => ({ name, input_schema: { type: "object" } }))
      })
    })
  return { agentId, send }
}

const transaction = (id: string, tools: ReadonlyArray<string>, hours = 1, policy?: PolicyEncoded) =>
  run(
    Effect.map(clock.currentTimeMillis, (now): GatewayTransaction => ({
      transaction_id: id,
      tools,
      // As the API stores it: the defaults the document leaves out at their loosest.
      ...(policy === undefined ? {} : { policy: withUnsetDefaultsLoosest(policyOf(policy), policy) }),
      expires_at: new Date(now + hours * HOUR).toISOString()
    }))
  )

const bodyOf = (res: { body: Buffer }) => JSON.parse(res.body.toString())

/** The `enforcement.blocked` the gateway announced for the agent (published on a fiber of its own). */
const blockedOf = async (agentId: string) => {
  for (;;) {
    const found = recorded.published.find((e) => e.agent_id === agentId && e.type === "enforcement.blocked")
    if (found !== undefined) return found
    await run(recorded.take)
  }
}

describe("X-Transaction-Id at the gateway", () => {
  it("a named tool passes; a tool outside the transaction is refused in enforce, before the upstream", async () => {
    const open = await transaction(txn("refund"), ["issue_refund"], 1, { defaults: { enforcement_mode: "enforce" } })
    const agent = await newAgent({ policy: agentPolicy("warn"), transactions: [open] })

    const passed = await agent.send(["issue_refund"], txn("refund"))
    expect(passed.status).toBe(200)
    expect(passed.headers["x-policy-verdict"]).toBe("pass")
    const forwarded = upstream.requests.at(-1)!
    expect(forwarded.rawHeaders.map((h) => h.toLowerCase())).not.toContain("x-transaction-id")

    const before = upstream.requests.length
    const refused = await agent.send(["issue_refund", "send_mail"], txn("refund"))
    expect(refused.status).toBe(403)
    expect(refused.headers["x-policy-verdict"]).toBe("fail")
    expect(bodyOf(refused)).toMatchObject({
      error: "blocked by Candor tool policy: send_mail",
      policy_verdict: {
        mode: "enforce",
        verdict: "fail",
        violations: [{ type: "unmapped_denied", tool: "send_mail", severity: "high" }],
        warnings: []
      }
    })
    // The agent's own rules still hold inside the transaction.
    const shell = await newAgent({
      policy: agentPolicy("enforce"),
      transactions: [await transaction(txn("shell"), ["shell_exec"])]
    })
    expect((await shell.send(["shell_exec"], txn("shell"))).status).toBe(403)
    expect(upstream.requests.length).toBe(before)
  })

  it("without the header a request is judged by the agent's policy alone, as before", async () => {
    const open = await transaction(txn("narrow"), ["issue_refund"], 1, { defaults: { enforcement_mode: "enforce" } })
    const agent = await newAgent({ policy: agentPolicy("enforce"), transactions: [open] })
    const res = await agent.send(["send_mail"])
    expect(res.status).toBe(200)
    expect(res.headers["x-policy-verdict"]).toBe("pass")
    expect((await agent.send(["shell_exec"])).status).toBe(403)
    const bare = await newAgent({})
    const plain = await bare.send(["anything"])
    expect(plain.status).toBe(200)
    expect(plain.headers["x-policy-verdict"]).toBeUndefined()
  })

  it("an agent without a policy: the transaction alone decides (enforced unless it says warn)", async () => {
    const agent = await newAgent({
      transactions: [
        await transaction(txn("warn"), ["issue_refund"], 1, { defaults: { enforcement_mode: "warn" } }),
        await transaction(txn("enforce"), ["issue_refund"])
      ]
    })
    const warned = await agent.send(["send_mail"], txn("warn"))
    expect(warned.status).toBe(200)
    expect(warned.headers["x-policy-verdict"]).toBe("warn")
    expect((await agent.send(["send_mail"], txn("enforce"))).status).toBe(403)
    expect((await agent.send(["issue_refund"], txn("enforce"))).headers["x-policy-verdict"]).toBe("pass")
  })

  it("an unknown id, or another agent's, is 403 transaction_error (transaction_unknown) and announced", async () => {
    const other = await newAgent({ transactions: [await transaction(txn("other"), ["issue_refund"])] })
    const agent = await newAgent({ policy: agentPolicy("warn") })
    const before = upstream.requests.length
    for (const id of [txn("nope"), txn("other")]) {
      const res = await agent.send(["issue_refund"], id)
      expect(res.status).toBe(403)
      expect(res.headers["content-type"]).toBe("application/json")
      expect(bodyOf(res)).toEqual({
        error: `transaction "${id}" is not open for this agent (unknown, another agent's, or completed)`,
        type: "transaction_error",
        reason: "transaction_unknown",
        transaction_error: {
          type: "transaction_error",
          reason: "transaction_unknown",
          transaction_id: id,
          agent_id: agent.agentId,
          expires_at: null
        }
      })
    }
    expect(upstream.requests.length).toBe(before)
    expect((await other.send(["issue_refund"], txn("other"))).status).toBe(200)
    const blocked = await blockedOf(agent.agentId)
    expect(blocked.data).toMatchObject({ agent_id: agent.agentId, rule: "transaction", reason: "transaction_unknown" })
  })

  it("an expired one is refused from expires_at on (test clock); a completed one is unknown", async () => {
    const open = await transaction(txn("short"), ["issue_refund"], 1)
    const agent = await newAgent({ transactions: [open] })
    await run(clock.setTime(Date.parse(open.expires_at) - 1))
    expect((await agent.send(["issue_refund"], txn("short"))).status).toBe(200)
    await run(clock.setTime(Date.parse(open.expires_at)))
    const expired = await agent.send(["issue_refund"], txn("short"))
    expect(expired.status).toBe(403)
    expect(bodyOf(expired)).toMatchObject({
      error: `transaction "${txn("short")}" expired at ${open.expires_at}; open a new one`,
      type: "transaction_error",
      reason: "transaction_expired",
      transaction_error: { expires_at: open.expires_at }
    })
    // Closed: the API pushes the list without it.
    const closing = await newAgent({ transactions: [await transaction(txn("closed"), ["issue_refund"], 2)] })
    expect((await closing.send(["issue_refund"], txn("closed"))).status).toBe(200)
    await run(state.update(closing.agentId, { transactions: [] }))
    expect(bodyOf(await closing.send(["issue_refund"], txn("closed"))).reason).toBe("transaction_unknown")
  })

  it("a copy that has not caught up asks the shared state once before refusing", async () => {
    const agent = await newAgent({ policy: agentPolicy("warn") })
    lagging.stale.set(agent.agentId, await run(state.get(agent.agentId)))
    await run(state.update(agent.agentId, { transactions: [await transaction(txn("new"), ["issue_refund"])] }))
    expect((await run(state.get(agent.agentId))).transactions).toBeUndefined() // the copy is behind

    const before = lagging.refreshes
    const res = await agent.send(["issue_refund"], txn("new"))
    expect(res.status).toBe(200)
    expect(res.headers["x-policy-verdict"]).toBe("pass")
    expect(lagging.refreshes).toBe(before + 1)
    // Caught up: the next request is decided from the copy.
    expect((await agent.send(["issue_refund"], txn("new"))).status).toBe(200)
    expect(lagging.refreshes).toBe(before + 1)
    // An id the shared state does not know either: one look, then the refusal.
    expect((await agent.send(["issue_refund"], txn("missing"))).status).toBe(403)
    expect(lagging.refreshes).toBe(before + 2)
    expect(defaultSettings.transactions).toBeUndefined()
  })
})
