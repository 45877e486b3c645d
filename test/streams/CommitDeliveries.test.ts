/**
 * One partition batch through `commitDeliveries`, on the real store (PGlite): first deliveries are
 * committed without looking up stored ids, a duplicate among them is still caught (and acked, not
 * committed twice), and looked up first when the consumer was just rewound (`lookUpStored`); an outage of the store is waited out with the deliveries kept alive (nothing
 * handed back, nothing counted towards the dead-letter subject); a batch a reachable store keeps
 * refusing is handed back with a redelivery delay that grows with each delivery; an invalid event
 * is dead-lettered. The gateway's enforcement records among the events are stored before the acks,
 * once per record id however often they are delivered, and held with the batch through an outage.
 */
import { layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"
import { randomUUID } from "node:crypto"
import { expect } from "vitest"
import { generateSigningKey } from "../../core/Signing.js"
import type { Delivery } from "../../adapters/bus/Bus.js"
import { eventSubject } from "../../adapters/bus/Subjects.js"
import * as SqlStore from "../../adapters/store/SqlStore.js"
import { Store, StoreError } from "../../adapters/store/Store.js"
import { defaultActorsOptions, makeAgentActors } from "../../streams/AgentActors.js"
import { commitDeliveries, type CommitOptions } from "../../streams/CommitDeliveries.js"
import { gatewayEvent } from "../support/Events.js"
import * as SecretKeys from "../../adapters/keys/SecretKeys.js"
import { migratedPglite } from "../support/PgliteTemplate.js"

const options: CommitOptions = {
  key: generateSigningKey(),
  logOrigin: "candor.test",
  subjectPrefix: "candor",
  conflictRetries: 3,
  retryDelayMs: 1_000,
  keepAliveMs: 10_000
}

interface Settled {
  acked: number
  naks: Array<number | undefined>
  working: number
  dead: Array<string>
}

const settledNone = (): Settled => ({ acked: 0, naks: [], working: 0, dead: [] })

/** A delivery of `payload` that counts how it was settled. */
const deliveryOf = <P extends { readonly agent_id: string }>(
  payload: P,
  settled: Settled,
  deliveryCount = 1
): Delivery => ({
  subject: eventSubject(payload.agent_id),
  payload: JSON.parse(JSON.stringify(payload)),
  deliveryCount,
  ack: Effect.sync(() => void settled.acked++),
  nak: (delayMs) => Effect.sync(() => void settled.naks.push(delayMs)),
  working: Effect.sync(() => void settled.working++),
  deadLetter: (reason) => Effect.sync(() => void settled.dead.push(reason))
})

/** The store, with commits (and, while `down.unreachable`, pings) failing while `down.failing`. */
const flaky = (store: Store["Type"], down: { failing: boolean; unreachable: boolean }) =>
  Store.of({
    ...store,
    commitBatch: (inputs) =>
      down.failing
        ? Effect.fail(new StoreError({ operation: "commitBatch", cause: "connection refused" }))
        : store.commitBatch(inputs),
    ping: Effect.suspend(() =>
      down.unreachable ? Effect.fail(new StoreError({ operation: "ping", cause: "connection refused" })) : store.ping
    )
  })

/** Moves the TestClock on a second at a time until the fiber is done. */
const runOnTestClock = <A>(fiber: Fiber.RuntimeFiber<A>) =>
  Effect.gen(function* () {
    for (let i = 0; i < 600 && fiber.unsafePoll() === null; i++) yield* TestClock.adjust("1 second")
    return yield* Fiber.join(fiber)
  })

const Pglite = SqlStore.layer.pipe(Layer.provide(SecretKeys.layerEphemeral), Layer.provideMerge(migratedPglite))

layer(Pglite, { timeout: "60 seconds" })("commitDeliveries", (it) => {
  it.scoped("commits first deliveries and catches a duplicate among them", () =>
    Effect.gen(function* () {
      const actors = yield* makeAgentActors(defaultActorsOptions)
      const agentId = "agt-cd-dup"
      const first = gatewayEvent(agentId)
      const settled = settledNone()
      expect(yield* commitDeliveries(actors, [deliveryOf(first, settled)], options)).toMatchObject({
        committed: 1,
        duplicates: 0,
        invalid: 0,
        retried: 0
      })
      // The same checkpoint published again (beyond the bus's duplicate window): a first delivery too.
      const next = gatewayEvent(agentId)
      const outcome = yield* commitDeliveries(actors, [deliveryOf(first, settled), deliveryOf(next, settled)], options)
      expect(outcome).toMatchObject({ committed: 1, duplicates: 1, invalid: 0, retried: 0 })
      expect(settled).toEqual({ ...settledNone(), acked: 3 })
      const store = yield* Store
      expect((yield* store.listCheckpoints({ agentId, limit: 10, offset: 0 })).total).toBe(2)
      expect((yield* store.loadLogState(agentId)).head.position).toBe(2)
    })
  )

  it.scoped(
    "looks a first delivery up when told (a rewound consumer): a stored event is dropped before the commit",
    () =>
      Effect.gen(function* () {
        const store = yield* Store
        let commits = 0
        const counting = Store.of({
          ...store,
          commitBatch: (inputs) =>
            Effect.zipRight(
              Effect.sync(() => void commits++),
              store.commitBatch(inputs)
            )
        })
        const run = (deliveries: ReadonlyArray<Delivery>, lookUpStored: boolean) =>
          Effect.flatMap(makeAgentActors(defaultActorsOptions), (actors) =>
            commitDeliveries(actors, deliveries, { ...options, lookUpStored })
          ).pipe(Effect.provideService(Store, counting))
        const settled = settledNone()
        // Committed by a worker that died before its acks; its new owner gets it again as a first delivery.
        const committed = gatewayEvent("agt-cd-rewound")
        yield* run([deliveryOf(committed, settled)], false)
        const next = gatewayEvent("agt-cd-rewound")
        commits = 0
        expect(yield* run([deliveryOf(committed, settled), deliveryOf(next, settled)], true)).toMatchObject({
          committed: 1,
          duplicates: 1,
          retried: 0
        })
        // A batch found stored whole still names its agent: its committer may have died before marking
        // it for a reputation recomputation.
        const stored = yield* run([deliveryOf(committed, settled), deliveryOf(next, settled)], true)
        expect(stored).toMatchObject({ committed: 0, duplicates: 2, retried: 0 })
        expect([...stored.agentIds]).toEqual(["agt-cd-rewound"])
        // One commit: without the lookup the first would have met the taken id (a conflict) and a second
        // followed; the batch found stored whole commits nothing.
        expect(commits).toBe(1)
        // Without it (the same redelivery, a consumer not just rewound): the conflict, then the commit.
        const other = gatewayEvent("agt-cd-rewound-2")
        yield* run([deliveryOf(other, settled)], false)
        commits = 0
        expect(
          yield* run([deliveryOf(other, settled), deliveryOf(gatewayEvent("agt-cd-rewound-2"), settled)], false)
        ).toMatchObject({ committed: 1, duplicates: 1, retried: 0 })
        expect(commits).toBe(2)
        expect((yield* store.loadLogState("agt-cd-rewound")).head.position).toBe(2)
      })
  )

  it.scoped("holds a batch through a store outage, keeping its deliveries alive, and commits it after", () =>
    Effect.gen(function* () {
      const down = { failing: true, unreachable: true }
      const store = flaky(yield* Store, down)
      const actors = yield* makeAgentActors(defaultActorsOptions).pipe(Effect.provideService(Store, store))
      const settled = settledNone()
      const agentId = "agt-cd-outage"
      // Fifth deliveries: handed back now, each would be dead-lettered on its next delivery.
      const deliveries = [1, 2, 3].map(() => deliveryOf(gatewayEvent(agentId), settled, 5))
      const fiber = yield* commitDeliveries(actors, deliveries, options).pipe(
        Effect.provideService(Store, store),
        Effect.fork
      )
      // Two minutes of outage: four times the bus's ack wait.
      yield* TestClock.adjust("2 minutes")
      expect(fiber.unsafePoll()).toBeNull()
      expect(settled.naks).toEqual([])
      expect(settled.working).toBe(3 * 12)
      down.failing = false
      down.unreachable = false
      expect(yield* runOnTestClock(fiber)).toMatchObject({ committed: 3, duplicates: 0, invalid: 0, retried: 0 })
      expect(settled).toMatchObject({ acked: 3, naks: [], dead: [] })
      expect((yield* store.loadLogState(agentId)).head.position).toBe(3)
    })
  )

  it.scoped("hands back a batch a reachable store keeps refusing, later with each delivery", () =>
    Effect.gen(function* () {
      const down = { failing: true, unreachable: false }
      const store = flaky(yield* Store, down)
      const actors = yield* makeAgentActors(defaultActorsOptions).pipe(Effect.provideService(Store, store))
      const settled = settledNone()
      const deliveries = [1, 2, 3, 4, 5].map((count) => deliveryOf(gatewayEvent("agt-cd-refused"), settled, count))
      const fiber = yield* commitDeliveries(actors, deliveries, options).pipe(
        Effect.provideService(Store, store),
        Effect.fork
      )
      expect(yield* runOnTestClock(fiber)).toMatchObject({ committed: 0, duplicates: 0, invalid: 0, retried: 5 })
      expect(settled).toMatchObject({ acked: 0, naks: [1_000, 4_000, 16_000, 60_000, 60_000], dead: [] })
    })
  )

  it.scoped("dead-letters an invalid event with the reason and commits the rest", () =>
    Effect.gen(function* () {
      const actors = yield* makeAgentActors(defaultActorsOptions)
      const settled = settledNone()
      const outcome = yield* commitDeliveries(
        actors,
        [
          deliveryOf({ agent_id: "agt-cd-invalid", type: "gateway.response" }, settled),
          deliveryOf(gatewayEvent("agt-cd-invalid"), settled)
        ],
        options
      )
      expect(outcome).toMatchObject({ committed: 1, duplicates: 0, invalid: 1, retried: 0 })
      expect(settled).toMatchObject({ acked: 1, naks: [] })
      expect(settled.dead).toHaveLength(1)
      // The field that failed and how, never its value (issue 24: the reason is recorded and published).
      expect(settled.dead[0]).toBe("not a gateway event: session_id (Missing)")
    })
  )

  it.scoped("stores the gateway's enforcement records before the acks, once however often delivered", () =>
    Effect.gen(function* () {
      const actors = yield* makeAgentActors(defaultActorsOptions)
      const store = yield* Store
      const agentId = "agt-cd-records"
      const enforcement = (kind: string, minute: number) => ({
        agent_id: agentId,
        type: "gateway.enforcement",
        mode: "enforce",
        record: {
          record_id: `enf-${randomUUID()}`,
          agent_id: agentId,
          kind,
          rule: "containment",
          reason: "agent_paused",
          session_id: "ses-1",
          actor: "gateway",
          created_at: `2026-11-01T00:0${minute}:00.000Z`
        }
      })
      const blocked = enforcement("blocked", 1)
      const settled = settledNone()
      const outcome = yield* commitDeliveries(
        actors,
        [deliveryOf(blocked, settled), deliveryOf(gatewayEvent(agentId), settled)],
        options
      )
      expect(outcome).toMatchObject({ committed: 1, invalid: 0, retried: 0 })
      expect(settled).toEqual({ ...settledNone(), acked: 2 })
      // Redelivered alone (a crash before the ack), and again beside a new record: stored once.
      const nudged = enforcement("nudged", 2)
      yield* commitDeliveries(actors, [deliveryOf(blocked, settled, 2)], options)
      yield* commitDeliveries(actors, [deliveryOf(blocked, settled, 3), deliveryOf(nudged, settled)], options)
      expect(settled.acked).toBe(5)
      const page = yield* store.enforcementRecordPage({ agentId, limit: 10, offset: 0 })
      expect(page).toEqual({ items: [nudged.record, blocked.record], total: 2 })
      // A record that does not decode (a reason past the bound) is dead-lettered, never stored.
      const tooLong = enforcement("blocked", 3)
      const invalid = { ...tooLong, record: { ...tooLong.record, reason: "x".repeat(2001) } }
      const dead = settledNone()
      expect(yield* commitDeliveries(actors, [deliveryOf(invalid, dead)], options)).toMatchObject({ invalid: 1 })
      expect(dead.dead).toEqual(["not a gateway event: record.reason (Refinement)"])
      expect((yield* store.enforcementRecordPage({ agentId, limit: 10, offset: 0 })).total).toBe(2)
    })
  )

  it.scoped("holds the enforcement records of a batch through a store outage, acking them only once stored", () =>
    Effect.gen(function* () {
      const down = { failing: true, unreachable: true }
      const real = yield* Store
      const store = Store.of({
        ...flaky(real, down),
        recordEnforcements: (drafts) =>
          down.failing
            ? Effect.fail(new StoreError({ operation: "recordEnforcements", cause: "connection refused" }))
            : real.recordEnforcements(drafts)
      })
      const actors = yield* makeAgentActors(defaultActorsOptions).pipe(Effect.provideService(Store, store))
      const agentId = "agt-cd-records-outage"
      const record = {
        record_id: `enf-${randomUUID()}`,
        agent_id: agentId,
        kind: "blocked",
        rule: "policy",
        reason: "forbidden tools: shell_exec",
        actor: "gateway",
        created_at: "2026-11-01T00:00:00.000Z"
      }
      const settled = settledNone()
      const fiber = yield* commitDeliveries(
        actors,
        [deliveryOf({ agent_id: agentId, type: "gateway.enforcement", mode: "enforce", record }, settled)],
        options
      ).pipe(Effect.provideService(Store, store), Effect.fork)
      yield* TestClock.adjust("1 minute")
      expect(settled).toMatchObject({ acked: 0, naks: [], dead: [] })
      down.failing = false
      down.unreachable = false
      yield* runOnTestClock(fiber)
      expect(settled).toMatchObject({ acked: 1, naks: [], dead: [] })
      expect((yield* real.enforcementRecordPage({ agentId, limit: 10, offset: 0 })).items).toEqual([record])
    })
  )
})
