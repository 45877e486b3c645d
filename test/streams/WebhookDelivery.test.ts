/**
 * Webhooks and auto-containment through the whole worker on the embedded default (in-process bus,
 * PGlite), against real loopback receivers: signed deliveries a receiver verifies, retries until a
 * failing receiver answers 2xx (delivered exactly once, finally), dead items kept, no secret in the
 * outbox, and a pause reaching the stored settings, the enforcement records and the gateways' state.
 */
import { layer } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import { randomUUID } from "node:crypto"
import { expect } from "vitest"
import { agentGovernanceLog } from "../../core/Governance.js"
import { generateSigningKey } from "../../core/Signing.js"
import { verifyWebhook } from "../../core/WebhookSignature.js"
import { Bus } from "../../adapters/bus/Bus.js"
import { eventSubject } from "../../adapters/bus/Subjects.js"
import { AgentState } from "../../adapters/bus/AgentState.js"
import { SigningKeys } from "../../adapters/keys/SigningKeys.js"
import * as PgliteClient from "../../adapters/store/PgliteClient.js"
import * as GovernanceLog from "../../adapters/store/GovernanceLog.js"
import * as SqlStore from "../../adapters/store/SqlStore.js"
import { Store } from "../../adapters/store/Store.js"
import { migrated } from "../../adapters/store/StoreDatabase.js"
import { newWebhookRegistration } from "../../adapters/webhooks/WebhookRegistration.js"
import { relayDefaults } from "../../streams/OutboxRelay.js"
import { PartitionOwnership } from "../../adapters/bus/PartitionOwnership.js"
import { runWorkers } from "../../streams/PartitionWorkers.js"
import type { WebhookBody } from "../../streams/Webhooks.js"
import { makeReceiver } from "../adapters/webhooks/Receiver.js"
import { gatewayEvent, violation } from "../support/Events.js"
import { awaitCommitted } from "./PipelineChecks.js"
import * as EventFeedStore from "../../adapters/bus/EventFeedStore.js"
import * as SecretKeys from "../../adapters/keys/SecretKeys.js"

const key = generateSigningKey()
const PARTITIONS = 4
const MAX_ATTEMPTS = 3

const Infra = Layer.mergeAll(
  Bus.layerMemoryWith({ partitions: PARTITIONS, ackWaitMs: 2_000 }),
  AgentState.layerMemory,
  SigningKeys.fromKey(key),
  PartitionOwnership.layerAll(PARTITIONS),
  SqlStore.layer.pipe(Layer.provide(SecretKeys.layerEphemeral), Layer.provideMerge(migrated(PgliteClient.layer())))
).pipe(
  (infra) => GovernanceLog.layer({ logOrigin: "candor.test" }).pipe(Layer.provideMerge(infra)),
  // The feed the event relay publishes to and the webhook fan-out consumes.
  (infra) => EventFeedStore.layer().pipe(Layer.orDie, Layer.provideMerge(infra))
)
// Retries after 50 ms instead of 1 s, 4 s, 16 s: the schedule is the relay's, the test only shortens it.
const webhookRelay = {
  ...relayDefaults,
  backoffMs: () => 50,
  pollInterval: "50 millis",
  maxAttempts: MAX_ATTEMPTS
} as const
const Workers = Layer.scopedDiscard(
  runWorkers({ logOrigin: "candor.test", subjectPrefix: "candor", webhookRelay })
).pipe(Layer.provideMerge(Infra))

const publish = (event: ReturnType<typeof gatewayEvent>) =>
  Effect.flatMap(Bus, (bus) => bus.publish(eventSubject(event.agent_id, "candor", PARTITIONS), event))

const uniqueAgent = (name: string) => `agt-${name}-${randomUUID().slice(0, 8)}`

/** Registers a webhook for the agent (before its first event, so its actor loads it). */
const register = (agentId: string, url: string, events: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const secret = `whsec-${randomUUID()}-${randomUUID()}`
    const registration = Either.getOrThrow(
      newWebhookRegistration({ agent_id: agentId, callback_url: url, secret, events }, new Date())
    )
    yield* Effect.flatMap(Store, (store) => store.putWebhook(registration))
    return registration
  })

/** Webhook outbox rows of a registration, dead ones included. */
const outboxRows = (registrationId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ payload: string; attempts: number; dead: boolean }>`
      select payload::text as payload, attempts, dead from outbox
      where kind = 'webhook' and payload::text like ${`%${registrationId}%`}`
  )

/** Polls `check` until it holds, with a deadline. */
const eventually = <A, E, R>(effect: Effect.Effect<A, E, R>, check: (a: A) => boolean, what: string) =>
  effect.pipe(
    Effect.filterOrFail(check, () => new Error(`not yet: ${what}`)),
    Effect.retry(Schedule.spaced("20 millis").pipe(Schedule.upTo("30 seconds")))
  )

layer(Workers, { timeout: "120 seconds", excludeTestServices: true })(
  "webhooks and auto-containment through the workers",
  (it) => {
    it.scoped("delivers a verdict a receiver verifies with the registration's secret", () =>
      Effect.gen(function* () {
        const agentId = uniqueAgent("hook")
        const receiver = yield* makeReceiver(() => 200)
        const registration = yield* register(agentId, receiver.url, ["verdict"])
        const event = gatewayEvent(agentId, { concerns: [violation] })
        yield* publish(event)
        const request = yield* receiver.take
        expect(verifyWebhook(registration.secret, request.body, request.headers, new Date())).toMatchObject({
          ok: true
        })
        expect(request.headers["content-type"]).toBe("application/aip+json")
        expect(request.headers["x-aip-version"]).toBe("1.0.0")
        const body = JSON.parse(request.body) as WebhookBody
        expect(body).toMatchObject({
          id: `verdict:${event.checkpoint.checkpoint_id}`,
          event: "verdict",
          agent_id: agentId,
          data: { checkpoint_id: event.checkpoint.checkpoint_id, verdict: "boundary_violation" }
        })
        expect(request.body).not.toContain(violation.evidence)
        expect(
          yield* eventually(outboxRows(registration.registration_id), (rows) => rows.length === 0, "delivery completed")
        ).toEqual([])
      })
    )

    it.scoped("retries a failing receiver until it answers 2xx: delivered exactly once, no secret in the outbox", () =>
      Effect.gen(function* () {
        const agentId = uniqueAgent("retry")
        const receiver = yield* makeReceiver((n) => (n <= 2 ? 500 : 200))
        const registration = yield* register(agentId, receiver.url, ["verdict"])
        yield* publish(gatewayEvent(agentId))
        const first = yield* receiver.take
        // Not completed before the third answer: the item is in the outbox, naming the registration only.
        const [pending] = yield* outboxRows(registration.registration_id)
        expect(pending?.payload).toContain(registration.registration_id)
        expect(pending?.payload).not.toContain(registration.secret)
        const retries = [yield* receiver.take, yield* receiver.take]
        expect(retries.map((r) => r.body)).toEqual([first.body, first.body])
        expect(new Set([first, ...retries].map((r) => r.headers["x-candor-delivery"])).size).toBe(1)
        yield* eventually(outboxRows(registration.registration_id), (rows) => rows.length === 0, "delivery completed")
        // Completed after the 200: nothing more arrives (the next commit's delivery comes after it).
        yield* publish(gatewayEvent(agentId))
        const next = yield* receiver.take
        expect(JSON.parse(next.body).id).not.toBe(JSON.parse(first.body).id)
        expect(receiver.received).toHaveLength(4)
        const sql = yield* SqlClient.SqlClient
        const all = yield* sql<{ text: string }>`select coalesce(string_agg(payload::text, ''), '') as text from outbox`
        expect(all[0]!.text).not.toContain(registration.secret)
      })
    )

    it.scoped("keeps a delivery as dead after its last attempt", () =>
      Effect.gen(function* () {
        const agentId = uniqueAgent("dead")
        const receiver = yield* makeReceiver(() => 503)
        const registration = yield* register(agentId, receiver.url, ["verdict"])
        yield* publish(gatewayEvent(agentId))
        const [row] = yield* eventually(
          outboxRows(registration.registration_id),
          (rows) => rows[0]?.dead === true,
          "dead"
        )
        expect(row).toMatchObject({ attempts: MAX_ATTEMPTS, dead: true })
        expect(receiver.received).toHaveLength(MAX_ATTEMPTS)
      })
    )

    it.scoped("keeps a webhook item whose payload is not a webhook payload as dead at once, unsent", () =>
      Effect.gen(function* () {
        const registrationId = `wh-malformed-${randomUUID()}`
        const sql = yield* SqlClient.SqlClient
        // Another version's shape: no event, no body. No retry could send it.
        yield* sql`insert into outbox (kind, payload, due_at, created_at)
        values ('webhook', ${JSON.stringify({ registration_id: registrationId, url: "http://127.0.0.1:9/" })}::json, now(), now())`
        const [row] = yield* eventually(outboxRows(registrationId), (rows) => rows[0]?.dead === true, "dead")
        expect(row).toMatchObject({ attempts: 1, dead: true })
      })
    )

    it.scoped("auto-containment after N violations: stored settings, enforcement record, gateway state, webhook", () =>
      Effect.gen(function* () {
        const store = yield* Store
        const agentState = yield* AgentState
        const bus = yield* Bus
        const agentId = uniqueAgent("contain")
        const receiver = yield* makeReceiver(() => 200)
        yield* register(agentId, receiver.url, ["agent.paused"])
        yield* store.putAgentSettings(agentId, { auto_containment_threshold: 3, mode: "enforce" })
        const published = yield* bus.subscribe(`candor.containment.${agentId}`)
        const violations = Array.from({ length: 3 }, () => gatewayEvent(agentId, { concerns: [violation] }))
        for (const event of violations) yield* publish(event)
        yield* awaitCommitted([agentId], 3)

        const state = yield* eventually(
          agentState.get(agentId),
          (s) => s.containment !== undefined,
          "gateway state paused"
        )
        expect(state.containment).toMatchObject({ status: "paused" })
        const settings = yield* store.agentSettings(agentId)
        expect(settings).toMatchObject({
          mode: "enforce",
          auto_containment_threshold: 3,
          containment: { status: "paused" }
        })
        expect(settings.containment).toEqual(state.containment)
        const records = yield* store.enforcementRecords(agentId, 10)
        expect(records).toHaveLength(1)
        expect(records[0]).toMatchObject({
          agent_id: agentId,
          checkpoint_id: violations[2]!.checkpoint.checkpoint_id,
          session_id: violations[2]!.session_id,
          mode: "enforce",
          action: "pause",
          body: { trigger: "auto_containment", violations: 3 }
        })
        expect(settings.containment).toEqual({
          status: "paused",
          reason: "Auto-contained: 3 consecutive boundary violations",
          contained_at: expect.any(String),
          contained_by: "system"
        })
        expect((yield* published.take).payload).toEqual({ agent_id: agentId, ...settings.containment })
        // The same event as a manual pause, from the same transition.
        const hook = yield* receiver.take
        expect(JSON.parse(hook.body)).toMatchObject({
          event: "agent.paused",
          agent_id: agentId,
          data: {
            agent_id: agentId,
            org_id: null,
            action: "auto_pause",
            actor: "system",
            reason: "Auto-contained: 3 consecutive boundary violations",
            previous_status: "active",
            new_status: "paused"
          }
        })
        const log = yield* store.containmentLog(agentId, 10)
        expect(log).toEqual([
          expect.objectContaining({
            action: "auto_pause",
            actor: "system",
            previous_status: "active",
            new_status: "paused",
            metadata: { checkpoint_id: violations[2]!.checkpoint.checkpoint_id, violations: 3 }
          })
        ])
        const governance = yield* (yield* GovernanceLog.GovernanceLog).entries(agentGovernanceLog(agentId), 0, 10)
        expect(governance.entries.map((e) => e.record)).toEqual([
          expect.objectContaining({
            action: "containment.auto_pause",
            actor: "system",
            previous_state: { status: "active" },
            new_state: settings.containment
          })
        ])

        // A fourth violation in the same streak pauses nothing again.
        yield* publish(gatewayEvent(agentId, { concerns: [violation] }))
        yield* awaitCommitted([agentId], 4)
        const sql = yield* SqlClient.SqlClient
        yield* eventually(
          sql<{
            n: number
          }>`select count(*)::int as n from outbox where kind = 'decision' and payload::text like ${`%${agentId}%`}`,
          (rows) => rows[0]?.n === 0,
          "decisions sent"
        )
        expect(yield* store.enforcementRecords(agentId, 10)).toHaveLength(1)
        expect(yield* store.containmentLog(agentId, 10)).toHaveLength(1)
        expect(receiver.received).toHaveLength(1)
      })
    )
  }
)
