/**
 * The actors on the embedded default (in-process bus, PGlite): events in, a verifiable record out,
 * redeliveries and duplicates harmless, invalid events dead-lettered, drift alerts and
 * auto-containment decided and published.
 */
import { layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { expect } from "vitest"
import { generateSigningKey } from "../../core/Signing.js"
import { Bus } from "../../adapters/bus/Bus.js"
import { eventSubject } from "../../adapters/bus/Subjects.js"
import { AgentState } from "../../adapters/bus/AgentState.js"
import { SigningKeys } from "../../adapters/keys/SigningKeys.js"
import * as GovernanceLog from "../../adapters/store/GovernanceLog.js"
import * as SqlStore from "../../adapters/store/SqlStore.js"
import { Store } from "../../adapters/store/Store.js"
import { PartitionOwnership } from "../../adapters/bus/PartitionOwnership.js"
import { runWorkers } from "../../streams/PartitionWorkers.js"
import { makeEventPublisher } from "../../adapters/gateway/EventPublisher.js"
import { buildResponseEvent } from "../../adapters/gateway/ResponseEvent.js"
import { gatewayEvent, violation } from "../support/Events.js"
import { awaitCommitted, verifyAgentRecord } from "./PipelineChecks.js"
import * as EventFeedStore from "../../adapters/bus/EventFeedStore.js"
import * as SecretKeys from "../../adapters/keys/SecretKeys.js"
import { migratedPglite } from "../support/PgliteTemplate.js"

const key = generateSigningKey()
const logOrigin = "candor.test"
const PARTITIONS = 8

const Infra = Layer.mergeAll(
  Bus.layerMemoryWith({ partitions: PARTITIONS, ackWaitMs: 2_000 }),
  AgentState.layerMemory,
  SigningKeys.fromKey(key),
  PartitionOwnership.layerAll(PARTITIONS),
  SqlStore.layer.pipe(Layer.provide(SecretKeys.layerEphemeral), Layer.provideMerge(migratedPglite))
).pipe(
  (infra) => GovernanceLog.layer({ logOrigin: logOrigin }).pipe(Layer.provideMerge(infra)),
  // The feed the event relay publishes to and the webhook fan-out consumes.
  (infra) => EventFeedStore.layer().pipe(Layer.orDie, Layer.provideMerge(infra))
)
const Workers = Layer.scopedDiscard(runWorkers({ logOrigin, subjectPrefix: "candor" })).pipe(Layer.provideMerge(Infra))

const publish = (event: ReturnType<typeof gatewayEvent>) =>
  Effect.flatMap(Bus, (bus) => bus.publish(eventSubject(event.agent_id, "candor", PARTITIONS), event))

layer(Workers, { timeout: "120 seconds", excludeTestServices: true })("agent actors on the embedded default", (it) => {
  it.effect("commits every event into a verifiable chain and Merkle log per agent", () =>
    Effect.gen(function* () {
      const agents = Array.from({ length: 6 }, (_, i) => `agt-pipe-${i}`)
      const events = Array.from({ length: 120 }, (_, i) => gatewayEvent(agents[i % agents.length]!))
      yield* Effect.forEach(events, publish, { concurrency: 16, discard: true })
      yield* awaitCommitted(agents, events.length)
      for (const agentId of agents) expect(yield* verifyAgentRecord(agentId, key, logOrigin)).toBe(20)
    })
  )

  it.effect("a republished event is a duplicate: acked, not committed twice", () =>
    Effect.gen(function* () {
      const agentId = "agt-dup"
      const first = gatewayEvent(agentId)
      yield* publish(first)
      yield* awaitCommitted([agentId], 1)
      yield* publish(first)
      // Same partition, so once the next one is committed the duplicate before it has been handled.
      yield* publish(gatewayEvent(agentId))
      yield* awaitCommitted([agentId], 2)
      const store = yield* Store
      expect((yield* store.listCheckpoints({ agentId, limit: 10, offset: 0 })).total).toBe(2)
      expect(yield* verifyAgentRecord(agentId, key, logOrigin)).toBe(2)
    })
  )

  it.scoped("an event as the gateway builds and publishes it is decoded and committed", () =>
    Effect.gen(function* () {
      const agentId = "agt-from-gateway"
      const { publish: publishFromGateway } = yield* makeEventPublisher("candor")
      const event = buildResponseEvent({
        agentId,
        cardId: undefined,
        sessionId: "ses-gateway",
        provider: "anthropic",
        outcome: { kind: "complete", status: 200, bytes: 100, cause: undefined },
        extraction: undefined,
        judgement: { verdict: "clear", thinkingHash: "none", analysis: undefined, synthetic: "no_thinking_block" },
        policy: undefined,
        now: new Date()
      })
      yield* publishFromGateway(agentId, event)
      yield* awaitCommitted([agentId], 1)
      const store = yield* Store
      const page = yield* store.listCheckpoints({ agentId, limit: 10, offset: 0 })
      expect(page.items.map((c) => c.checkpoint_id)).toEqual([event.checkpoint.checkpoint_id])
    })
  )

  it.scoped("an invalid event goes to the dead-letter subject and does not stop the partition", () =>
    Effect.gen(function* () {
      const bus = yield* Bus
      const dead = yield* bus.subscribe("candor.dead.")
      const agentId = "agt-bad"
      yield* bus.publish(eventSubject(agentId, "candor", PARTITIONS), { type: "gateway.response", agent_id: agentId })
      const letter = yield* dead.take
      expect(letter.subject).toBe(
        `candor.dead.events.${eventSubject(agentId, "candor", PARTITIONS).split(".")[2]}.${agentId}`
      )
      yield* publish(gatewayEvent(agentId))
      yield* awaitCommitted([agentId], 1)
    })
  )

  it.scoped("three violations in a session raise one drift alert, stored and published", () =>
    Effect.gen(function* () {
      const bus = yield* Bus
      const agentId = "agt-drift"
      const alerts = yield* bus.subscribe(`candor.alerts.${agentId}`)
      for (let i = 0; i < 4; i++)
        yield* publish(gatewayEvent(agentId, { sessionId: "ses-drift", concerns: [violation] }))
      yield* awaitCommitted([agentId], 4)
      const alert = yield* alerts.take
      expect(alert.payload).toMatchObject({ agent_id: agentId, session_id: "ses-drift", sustained_checks: 3 })
      const store = yield* Store
      expect(yield* store.driftAlerts(agentId, 10)).toHaveLength(1)
      const page = yield* store.listCheckpoints({ agentId, limit: 10, offset: 0 })
      expect(page.items.every((c) => c.verdict === "boundary_violation")).toBe(true)
      expect(page.items.map((c) => c.window_position.window_size).sort()).toEqual([1, 2, 3, 4])
    })
  )

  // Issue 24: two agents (two keys) sending with the same x-candor-session, violations alternating
  // X, Y, X. Keyed by the session alone, X got an alert for 3 sustained checks naming Y's checkpoint.
  it.scoped("two agents sharing a session id keep their own drift windows, streaks and alerts", () =>
    Effect.gen(function* () {
      const bus = yield* Bus
      const store = yield* Store
      const [x, y] = ["agt-shared-x", "agt-shared-y"]
      const sessionId = "ses-shared-by-two-agents"
      const alertsOfX = yield* bus.subscribe(`candor.alerts.${x}`)
      const committed = { [x]: 0, [y]: 0 }
      /** One violation of `agentId`, committed before the next is sent (the two agents are on other partitions). */
      const violate = (agentId: string) =>
        Effect.gen(function* () {
          const event = gatewayEvent(agentId, { sessionId, concerns: [violation] })
          yield* publish(event)
          yield* awaitCommitted([agentId], ++committed[agentId]!)
          return event.checkpoint.checkpoint_id
        })
      const xIds = [yield* violate(x)]
      const yIds = [yield* violate(y)]
      xIds.push(yield* violate(x))
      // X has had two violations in the session, Y one: nobody has three.
      expect(yield* store.driftAlerts(x, 10)).toEqual([])
      expect(yield* store.driftAlerts(y, 10)).toEqual([])
      const windowsOf = (agentId: string) =>
        Effect.map(store.listCheckpoints({ agentId, limit: 10, offset: 0, sessionId }), (page) =>
          page.items.map((c) => c.window_position.window_size).sort()
        )
      expect(yield* windowsOf(x)).toEqual([1, 2])
      expect(yield* windowsOf(y)).toEqual([1])
      yIds.push(yield* violate(y))
      xIds.push(yield* violate(x))
      // X's third: its alert, of its own checkpoints only.
      const alert = yield* alertsOfX.take
      expect(alert.payload).toMatchObject({ agent_id: x, session_id: sessionId, sustained_checks: 3 })
      expect((alert.payload as { checkpoint_ids: Array<string> }).checkpoint_ids).toEqual(xIds)
      const stored = yield* store.driftAlerts(x, 10)
      expect(stored.map((a) => a.checkpoint_ids)).toEqual([xIds])
      expect(yield* store.driftAlerts(y, 10)).toEqual([])
      expect(yield* windowsOf(y)).toEqual([1, 2])
    })
  )
})
