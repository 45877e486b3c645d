/**
 * The thread bridge (adapters/bus/ThreadBridge*.ts) on a real MessageChannel: the gateway side's
 * Bus, AgentState and EventFeed on one end, the backend's in-process bus, agent state and a recording
 * feed on the other. Messages are structured-cloned and delivered by the event loop exactly as
 * between threads; test/e2e/EmbeddedThreads.test.ts runs the two ends in two threads of `candor serve`.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { MessageChannel } from "node:worker_threads"
import { AgentState, defaultKeySettings } from "../../../adapters/bus/AgentState.js"
import { ApprovalDesk } from "../../../adapters/bus/ApprovalDesk.js"
import type { FinalStatus } from "../../../adapters/bus/ApprovalSignal.js"
import type { Approval, ApprovalAsk } from "../../../core/schema/Approval.js"
import * as Deferred from "effect/Deferred"
import { Bus } from "../../../adapters/bus/Bus.js"
import { EventFeed } from "../../../adapters/bus/EventFeed.js"
import { eventSubject, PARTITIONS } from "../../../adapters/bus/Subjects.js"
import * as ThreadBridgeBackend from "../../../adapters/bus/ThreadBridgeBackend.js"
import * as ThreadBridgeGateway from "../../../adapters/bus/ThreadBridgeGateway.js"
import { exchangesUnanalysed } from "../../../adapters/metrics/GatewayMetrics.js"
import type { WebhookEnvelope } from "../../../core/schema/WebhookEvents.js"
import * as RecordingEventFeed from "../../support/RecordingEventFeed.js"
import { agentIn } from "./BusConformance.js"

const ask: ApprovalAsk = {
  org_id: "org-1",
  agent_id: "agt-1",
  server_id: null,
  tool: "delete_file",
  arguments_hash: "a".repeat(64),
  reason: "deletions need a person",
  timeout_seconds: 300
}

/** The backend's desk: it records what it is asked, and settles a wait when the test says. */
const recordingDesk = Effect.gen(function* () {
  const decision = yield* Deferred.make<FinalStatus>()
  const cancelled: Array<string> = []
  const approval = (input: ApprovalAsk): Approval => ({
    ...input,
    approval_id: "apr-00000000-0000-4000-8000-000000000001",
    requested_at: new Date(0).toISOString(),
    expires_at: new Date(Date.now() + 3_600_000).toISOString(),
    status: "pending",
    decided_at: null,
    decided_by: null,
    decision_reason: null
  })
  const desk = ApprovalDesk.of({
    request: (input) => Effect.succeed(approval(input)),
    awaitDecision: () => Deferred.await(decision),
    cancel: (id) => Effect.sync(() => void cancelled.push(id))
  })
  return { desk, decision, cancelled }
})

/** Both ends, each in a scope of its own (so the gateway's can be closed alone). */
const bridged = Effect.gen(function* () {
  const { port1, port2 } = new MessageChannel()
  const desk = yield* recordingDesk
  const backendScope = yield* Scope.fork(yield* Effect.scope, ExecutionStrategy.sequential)
  const gatewayScope = yield* Scope.fork(yield* Effect.scope, ExecutionStrategy.sequential)
  const backend = yield* Layer.buildWithScope(
    ThreadBridgeBackend.serveLayer(port2).pipe(
      Layer.provideMerge(
        Layer.mergeAll(
          ThreadBridgeBackend.agentStateLayer(port2),
          Bus.layerMemory,
          RecordingEventFeed.layer(),
          Layer.succeed(ApprovalDesk, desk.desk)
        )
      )
    ),
    backendScope
  )
  const gateway = yield* Layer.buildWithScope(
    ThreadBridgeGateway.layer({ port: port1, partitions: PARTITIONS }),
    gatewayScope
  )
  return { backend, gateway, desk, closeGateway: Scope.close(gatewayScope, Exit.void) }
})

describe("thread bridge", () => {
  it.scoped("carries the gateway's publishes to the backend's bus, in order, deduplicated by msgId", () =>
    Effect.gen(function* () {
      const { backend, gateway } = yield* bridged
      const bus = Context.get(gateway, Bus)
      const agent = agentIn(3, PARTITIONS)
      const subject = eventSubject(agent)
      // Started in order, without waiting for each other: one batch, stored in that order.
      yield* Effect.all(
        [1, 2, 3, 2].map((n) => bus.publish(subject, { n }, { msgId: `m${n}` })),
        { concurrency: "unbounded" }
      )
      const stored = yield* Context.get(backend, Bus).consumePartition(3).pipe(Stream.take(3), Stream.runCollect)
      expect([...stored].map((d) => [d.subject, d.payload])).toEqual([
        [subject, { n: 1 }],
        [subject, { n: 2 }],
        [subject, { n: 3 }]
      ])
    })
  )

  it.scoped("a publish the backend's bus refuses fails on the gateway with its error", () =>
    Effect.gen(function* () {
      const { gateway } = yield* bridged
      const error = yield* Effect.flip(Context.get(gateway, Bus).publish("candor.nowhere.x", {}))
      expect(error).toMatchObject({ _tag: "BusError", permanent: true })
      expect(error.message).toContain("no stream stores subject candor.nowhere.x")
    })
  )

  it.scoped("a settings change resolves once the gateway's copy has it; nudges reach the gateway", () =>
    Effect.gen(function* () {
      const { backend, gateway } = yield* bridged
      const state = Context.get(backend, AgentState)
      const copy = Context.get(gateway, AgentState)
      expect((yield* copy.get("agt-1")).mode).toBe("observe")
      yield* state.setNudge("agt-1", "reconsider")
      yield* state.update("agt-1", {
        mode: "enforce",
        containment: {
          status: "paused",
          reason: "incident",
          contained_at: "2026-01-01T00:00:00.000Z",
          contained_by: "service"
        } as never
      })
      // No waiting: the update has answered, so the gateway's next lookup sees it (and the nudge sent before it).
      expect(yield* copy.get("agt-1")).toMatchObject({ mode: "enforce", containment: { status: "paused" } })
      expect(yield* copy.takeNudge("agt-1")).toBe("reconsider")
      expect(yield* copy.takeNudge("agt-1")).toBeUndefined()
      // The gateway's own nudges stay with it.
      yield* copy.setNudge("agt-2", "mine")
      expect(yield* copy.takeNudge("agt-2")).toBe("mine")
    })
  )

  it.scoped(
    "a key's settings resolve once the gateway's copy has them: the next request of any agent of the key sees them; the gateway's own reach the backend",
    () =>
      Effect.gen(function* () {
        const { backend, gateway } = yield* bridged
        const state = Context.get(backend, AgentState)
        const copy = Context.get(gateway, AgentState)
        const keyHash = "ab".repeat(32)
        expect(copy.peekKey(keyHash)).toBe(defaultKeySettings)
        const containment = {
          status: "killed" as const,
          reason: "key leaked",
          contained_at: "2026-01-01T00:00:00.000Z",
          contained_by: "owner"
        }
        yield* state.updateKey(keyHash, { containment })
        expect(copy.peekKey(keyHash)).toEqual({ containment })
        expect(state.peekKey(keyHash)).toEqual({ containment })
        yield* state.updateKey(keyHash, { containment: undefined })
        expect(copy.peekKey(keyHash).containment).toBeUndefined()
        // The gateway's own changes (MCP tool pins) are applied at once in its copy, then by the backend.
        const mcpPins = { pinned: { t: "sha256:aa" }, changed: {} }
        yield* copy.updateKey(keyHash, { mcpPins })
        expect(copy.peekKey(keyHash).mcpPins).toEqual(mcpPins)
        expect(state.peekKey(keyHash).mcpPins).toEqual(mcpPins)
      })
  )

  it.scoped("carries the gateway's feed events to the backend's feed", () =>
    Effect.gen(function* () {
      const { backend, gateway } = yield* bridged
      const envelope = { id: "evt-1", type: "enforcement.blocked", data: { agent_id: "agt-1" } } as never
      yield* Context.get(gateway, EventFeed).publish(envelope as WebhookEnvelope)
      expect(Context.get(backend, RecordingEventFeed.RecordedEvents).published).toEqual([envelope])
    })
  )

  it.scoped("the backend's /metrics gets the gateway thread's series", () =>
    Effect.gen(function* () {
      const { backend } = yield* bridged
      exchangesUnanalysed.unsafeUpdate(0, [])
      const families = yield* Context.get(backend, ThreadBridgeBackend.GatewayThreadMetrics)
      // Contains, not equals: in the fast lane other files' metrics share this thread's registry.
      expect(families.map((f) => f.name)).toContain("candor_gateway_exchanges_unanalysed_total")
    })
  )

  it.scoped(
    "once the gateway's end is closed, its publishes fail as an outage and changes apply on the backend alone",
    () =>
      Effect.gen(function* () {
        const { backend, closeGateway, gateway } = yield* bridged
        yield* closeGateway
        const error = yield* Effect.flip(Context.get(gateway, Bus).publish(eventSubject("agt-1"), {}))
        expect(error).toMatchObject({ _tag: "BusError", permanent: false })
        const state = Context.get(backend, AgentState)
        yield* state.update("agt-1", { mode: "nudge" })
        expect((yield* state.get("agt-1")).mode).toBe("nudge")
      })
  )

  it.scoped("the gateway's approval desk asks the backend's: request, a wait answered when it settles, cancel", () =>
    Effect.gen(function* () {
      const { desk, gateway } = yield* bridged
      const remote = Context.get(gateway, ApprovalDesk)
      const approval = yield* remote.request(ask)
      expect(approval).toMatchObject({ tool: "delete_file", status: "pending", arguments_hash: ask.arguments_hash })
      const waiting = yield* Effect.fork(remote.awaitDecision(approval))
      yield* Deferred.succeed(desk.decision, "approved")
      expect(yield* waiting.await).toEqual(Exit.succeed("approved"))
      yield* remote.cancel(approval.approval_id)
      expect(desk.cancelled).toEqual([approval.approval_id])
    })
  )

  it.scoped("a request the backend cannot read is refused, never stored", () =>
    Effect.gen(function* () {
      const { gateway } = yield* bridged
      const error = yield* Effect.flip(
        Context.get(gateway, ApprovalDesk).request({ ...ask, arguments_hash: "not a hash" })
      )
      expect(error).toMatchObject({ _tag: "ApprovalUnavailable", reason: "not an approval request" })
    })
  )
})
