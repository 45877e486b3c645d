/**
 * Dead letters are an alarm, never silence (issue 24), with the API and the workers in one process
 * as `candor serve` runs them: a gateway event the worker cannot decode (a session id with a space,
 * as `x-candor-session: a b` made before the gateway validated it) produces the metric, the
 * `pipeline.dead_lettered` event (in the live stream and at the organization's webhook), and its
 * entry on `GET /v1/admin/dead-letters` (service-role key) and on `GET /v1/orgs/{org_id}/dead-letters`
 * (Owner; only the dead letters naming the organization's agents), paginated; nothing of its payload
 * appears anywhere: routes, event, webhook body, metrics, the rows the store keeps.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import { randomUUID } from "node:crypto"
import { Bus } from "../../adapters/bus/Bus.js"
import { PartitionOwnership } from "../../adapters/bus/PartitionOwnership.js"
import { eventSubject } from "../../adapters/bus/Subjects.js"
import { WebhookNetwork } from "../../adapters/webhooks/WebhookUrlGuard.js"
import { runWorkers } from "../../streams/PartitionWorkers.js"
import { makeReceiver } from "../adapters/webhooks/Receiver.js"
import { gatewayEvent } from "../support/Events.js"
import { connectStream } from "./StreamClient.js"
import { ApiHarness, freshOrganization, layer as harness, TEST_LOG_ORIGIN } from "./Support.js"

const PARTITIONS = 4

const withWorkers = Layer.scopedDiscard(runWorkers({ logOrigin: TEST_LOG_ORIGIN, subjectPrefix: "candor" })).pipe(
  Layer.provide(Layer.succeed(WebhookNetwork, { allowPrivate: true })),
  Layer.provideMerge(
    Layer.mergeAll(Bus.layerMemoryWith({ partitions: PARTITIONS }), PartitionOwnership.layerAll(PARTITIONS))
  ),
  Layer.provideMerge(harness({ webhookAllowPrivate: true }))
)

/** An event the worker cannot decode: its session id has a space; every field carries `marker`. */
const undecodable = (agentId: string, marker: string) => {
  const event = gatewayEvent(agentId, { sessionId: `a b ${marker}` })
  return { ...event, provider: marker, checkpoint: { ...event.checkpoint, reasoning_summary: marker } }
}

/** The value of a counter sample on /metrics, 0 when absent. */
const sample = (text: string, series: string): number => {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `))
  return line === undefined ? 0 : Number(line.slice(series.length + 1))
}

const eventually = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.retry(effect, Schedule.spaced("25 millis").pipe(Schedule.upTo("30 seconds")))

layer(withWorkers, { timeout: "120 seconds", excludeTestServices: true })("dead letters", (it) => {
  it.scoped(
    "an event the worker cannot decode: the metric, the event (stream and webhook), both routes; never its payload",
    () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const bus = yield* Bus
        const sql = yield* SqlClient.SqlClient
        const { admin, member, owner, agentB } = api.fixtures
        const orgId = yield* freshOrganization("DeadLetters")
        const agentId = yield* api.claimAgent({ userId: owner.userId, orgId })
        const marker = `payload-marker-${randomUUID()}`
        const series = 'candor_dead_letters_total{cause="undecodable"}'
        const before = sample((yield* api.call("GET", "/metrics")).body, series)

        const receiver = yield* makeReceiver(() => 200)
        const hook = yield* api.call("POST", `/v1/orgs/${orgId}/webhooks`, {
          token: owner.token,
          body: { url: receiver.url, event_types: ["pipeline.dead_lettered"] }
        })
        expect(hook.status, JSON.stringify(hook.body)).toBe(201)
        const stream = yield* connectStream(`${api.url}/v1/stream?types=pipeline.dead_lettered`, { token: owner.token })
        expect(stream.status).toBe(200)

        // One of the organization's agent, one of another organization's.
        yield* bus.publish(eventSubject(agentId, "candor", PARTITIONS), undecodable(agentId, marker))
        yield* bus.publish(eventSubject(agentB, "candor", PARTITIONS), undecodable(agentB, marker))

        const all = yield* eventually(
          api.call("GET", "/v1/admin/dead-letters", { token: api.serviceRoleKey }).pipe(
            Effect.filterOrFail(
              (res) =>
                res.body.dead_letters.some((d: any) => d.agent_id === agentId) &&
                res.body.dead_letters.some((d: any) => d.agent_id === agentB),
              () => "not recorded yet"
            )
          )
        )
        expect(all.status).toBe(200)
        const ours = all.body.dead_letters.find((d: any) => d.agent_id === agentId)
        expect(ours).toEqual({
          dead_letter_id: expect.stringMatching(/^dl-[0-9a-f]{32}$/),
          subject: eventSubject(agentId, "candor", PARTITIONS),
          agent_id: agentId,
          reason: expect.stringMatching(/^not a gateway event: session_id \(\w+\)$/),
          deliveries: 1,
          dead_lettered_at: expect.any(String)
        })

        // The organization's Owner sees its agent's, not the other organization's; Admins and Members nothing.
        const org = yield* api.call("GET", `/v1/orgs/${orgId}/dead-letters`, { token: owner.token })
        expect(org.status).toBe(200)
        expect(org.body).toEqual({ dead_letters: [ours], next_before: null })
        for (const token of [admin.token, member.token]) {
          const refused = yield* api.call("GET", `/v1/orgs/${orgId}/dead-letters`, { token })
          expect(refused.status).toBe(403)
          expect(Object.keys(refused.body)).toEqual(["error"])
        }
        expect((yield* api.call("GET", "/v1/admin/dead-letters", { token: owner.token })).status).toBe(403)

        // Bounded pages, newest recorded first, each reached from the last one's cursor.
        const first = yield* api.call("GET", "/v1/admin/dead-letters?limit=1", { token: api.serviceRoleKey })
        expect(first.body.dead_letters).toHaveLength(1)
        expect(first.body.next_before).toMatch(/^\d+$/)
        const second = yield* api.call("GET", `/v1/admin/dead-letters?limit=1&before=${first.body.next_before}`, {
          token: api.serviceRoleKey
        })
        expect(second.body.dead_letters).toHaveLength(1)
        expect(second.body.dead_letters[0].dead_letter_id).not.toBe(first.body.dead_letters[0].dead_letter_id)
        for (const query of ["limit=0", "limit=101", "before=abc", "before=-1"]) {
          const bad = yield* api.call("GET", `/v1/admin/dead-letters?${query}`, { token: api.serviceRoleKey })
          expect(bad.status, query).toBe(400)
          expect(Object.keys(bad.body)).toEqual(["error"])
        }

        // The metric, once per dead letter.
        const metrics = String((yield* api.call("GET", "/metrics")).body)
        expect(sample(metrics, series) - before).toBe(2)

        // The event: to the organization's live stream and webhook, naming the same entry.
        const streamed = yield* eventually(
          Effect.suspend(() => {
            const found = stream.events.find((e) => (e.envelope.data as any).dead_letter_id === ours.dead_letter_id)
            return found === undefined ? Effect.fail("not streamed yet") : Effect.succeed(found)
          })
        )
        expect(streamed.envelope).toMatchObject({ type: "pipeline.dead_lettered", org_id: orgId, agent_id: agentId })
        expect(streamed.envelope.data).toEqual(ours)
        // The other organization's dead letter is not in this organization's stream.
        expect(stream.events.every((e) => e.envelope.agent_id === agentId)).toBe(true)
        const delivered = yield* receiver.take.pipe(Effect.timeout("30 seconds"))
        expect(JSON.parse(delivered.body)).toMatchObject({ type: "pipeline.dead_lettered", data: ours })

        // Nothing of the payload anywhere: routes, events, webhook body, metrics, the rows kept.
        const rows = yield* sql<{ text: string }>`
          select (select coalesce(json_agg(d)::text, '') from dead_letters d) ||
                 (select coalesce(json_agg(o)::text, '') from outbox o) ||
                 (select coalesce(json_agg(f)::text, '') from feed_events f) as text`
        const everywhere = [
          JSON.stringify(all.body),
          JSON.stringify(org.body),
          JSON.stringify(stream.events),
          ...receiver.received.map((r) => r.body),
          metrics,
          rows[0]!.text
        ]
        for (const text of everywhere) expect(text).not.toContain(marker)
        expect(rows[0]!.text).toContain(ours.dead_letter_id)
      })
  )
})
