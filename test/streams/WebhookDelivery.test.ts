/**
 * Webhooks and auto-containment through the whole worker on the embedded default (in-process bus,
 * PGlite), against real loopback receivers: a fanned-out event sent by the workers' relay and
 * verified by its receiver, a malformed item kept as dead unsent, and a pause reaching the stored
 * settings, the enforcement records and the gateways' state. The schedule, retries, rotation and
 * disabling are tested one relay round at a time in test/api/Webhooks.test.ts.
 */
import { layer } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
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
import * as GovernanceLog from "../../adapters/store/GovernanceLog.js"
import * as SqlStore from "../../adapters/store/SqlStore.js"
import { Store } from "../../adapters/store/Store.js"
import { orgEndpointOwner, WebhookRepo } from "../../adapters/store/WebhookRepo.js"
import { WebhookNetwork } from "../../adapters/webhooks/WebhookUrlGuard.js"
import { newEnvelope } from "../../core/Events.js"
import { fanOutEvent, fanOutEvents } from "../../streams/WebhookFanOut.js"
import { relayDefaults } from "../../streams/OutboxRelay.js"
import { PartitionOwnership } from "../../adapters/bus/PartitionOwnership.js"
import { runWorkers } from "../../streams/PartitionWorkers.js"
import { makeReceiver } from "../adapters/webhooks/Receiver.js"
import { gatewayEvent, violation } from "../support/Events.js"
import { awaitCommitted } from "./PipelineChecks.js"
import * as EventFeedStore from "../../adapters/bus/EventFeedStore.js"
import * as SecretKeys from "../../adapters/keys/SecretKeys.js"
import { migratedPglite } from "../support/PgliteTemplate.js"

const key = generateSigningKey()
const PARTITIONS = 4
const MAX_ATTEMPTS = 3

const Infra = Layer.mergeAll(
  Bus.layerMemoryWith({ partitions: PARTITIONS, ackWaitMs: 2_000 }),
  AgentState.layerMemory,
  SigningKeys.fromKey(key),
  PartitionOwnership.layerAll(PARTITIONS),
  SqlStore.layer.pipe(Layer.provide(SecretKeys.layerEphemeral), Layer.provideMerge(migratedPglite))
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
).pipe(
  // Receivers on 127.0.0.1: CANDOR_WEBHOOK_ALLOW_PRIVATE on.
  Layer.provide(Layer.succeed(WebhookNetwork, { allowPrivate: true })),
  Layer.provideMerge(Infra)
)

const publish = (event: ReturnType<typeof gatewayEvent>) =>
  Effect.flatMap(Bus, (bus) => bus.publish(eventSubject(event.agent_id, "candor", PARTITIONS), event))

const uniqueAgent = (name: string) => `agt-${name}-${randomUUID().slice(0, 8)}`

/** Webhook outbox rows naming this (a delivery id or, in a malformed payload, anything), dead ones included. */
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
    it.scoped("the workers' webhook relay sends a fanned-out event at once, signed with the endpoint's secret", () =>
      Effect.gen(function* () {
        const agentId = uniqueAgent("hook")
        const orgId = `org_${randomUUID()}`
        const receiver = yield* makeReceiver(() => 200)
        const repo = yield* WebhookRepo
        const secret = `whsec_${randomUUID()}`
        yield* repo.create(
          orgEndpointOwner(orgId),
          { url: receiver.url, description: "", event_types: ["agent.paused"], agent_ids: [] },
          secret,
          new Date()
        )
        const envelope = newEnvelope({
          type: "agent.paused",
          source: randomUUID(),
          org_id: orgId,
          created_at: new Date(),
          data: { agent_id: agentId }
        })
        yield* fanOutEvent(envelope)
        const request = yield* receiver.take
        expect(request.headers["x-candor-delivery"]).toBe(envelope.id)
        expect(JSON.parse(request.body)).toEqual(envelope)
        expect(verifyWebhook(secret, request.body, request.headers, new Date())).toMatchObject({ ok: true })
        const sql = yield* SqlClient.SqlClient
        yield* eventually(
          sql<{ status: string }>`select status from webhook_deliveries where event_id = ${envelope.id}`,
          (rows) => rows[0]?.status === "delivered",
          "delivered"
        )
        expect(yield* outboxRows(envelope.id)).toEqual([])
      })
    )

    it.scoped(
      "a batch of events is fanned out together: each to the endpoints it selects, once, whatever it repeats",
      () =>
        Effect.gen(function* () {
          const repo = yield* WebhookRepo
          const sql = yield* SqlClient.SqlClient
          const receiver = yield* makeReceiver(() => 200)
          const [orgA, orgB] = [`org_${randomUUID()}`, `org_${randomUUID()}`]
          const endpoint = (orgId: string, types: ReadonlyArray<string>) =>
            repo.create(
              orgEndpointOwner(orgId),
              { url: receiver.url, description: "", event_types: types, agent_ids: [] },
              `whsec_${randomUUID()}`,
              new Date()
            )
          const paused = yield* endpoint(orgA, ["agent.paused"])
          const both = yield* endpoint(orgA, ["agent.paused", "agent.resumed"])
          const other = yield* endpoint(orgB, ["agent.resumed"])
          const event = (type: "agent.paused" | "agent.resumed", orgId: string) =>
            newEnvelope({
              type,
              source: randomUUID(),
              org_id: orgId,
              created_at: new Date(),
              data: { agent_id: uniqueAgent("batch") }
            })
          const [pausedA, resumedA, resumedB] = [
            event("agent.paused", orgA),
            event("agent.resumed", orgA),
            event("agent.resumed", orgB)
          ]
          yield* fanOutEvents([pausedA, resumedA, pausedA, resumedB])
          const rows = yield* sql<{ event_id: string; endpoint_id: string }>`
          select event_id, endpoint_id from webhook_deliveries
          where event_id in (${pausedA.id}, ${resumedA.id}, ${resumedB.id}) order by event_id, endpoint_id`
          const pairs = (list: ReadonlyArray<readonly [string, string]>) =>
            list
              .map(([event_id, endpoint_id]) => ({ event_id, endpoint_id }))
              .sort((a, b) => `${a.event_id} ${a.endpoint_id}`.localeCompare(`${b.event_id} ${b.endpoint_id}`))
          expect(pairs(rows.map((row) => [row.event_id, row.endpoint_id] as const))).toEqual(
            pairs([
              [pausedA.id, paused.endpoint_id],
              [pausedA.id, both.endpoint_id],
              [resumedA.id, both.endpoint_id],
              [resumedB.id, other.endpoint_id]
            ])
          )
          // Handed over again (a redelivery of the feed), nothing is added.
          yield* fanOutEvents([resumedB, pausedA])
          const [count] = yield* sql<{ n: unknown }>`
          select count(*) as n from webhook_deliveries where event_id in (${pausedA.id}, ${resumedA.id}, ${resumedB.id})`
          expect(Number(count?.n)).toBe(4)
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

    it.scoped("auto-containment after N violations: stored settings, enforcement record, gateway state", () =>
      Effect.gen(function* () {
        const store = yield* Store
        const agentState = yield* AgentState
        const bus = yield* Bus
        const agentId = uniqueAgent("contain")
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
          action: "paused",
          body: { trigger: "auto_containment", violations: 3 }
        })
        expect(settings.containment).toEqual({
          status: "paused",
          reason: "Auto-contained: 3 consecutive boundary violations",
          contained_at: expect.any(String),
          contained_by: "system"
        })
        expect((yield* published.take).payload).toEqual({ agent_id: agentId, ...settings.containment })
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
            previous_state: { scope: "agent", status: "active" },
            new_state: { scope: "agent", ...settings.containment }
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
      })
    )
  }
)
