/**
 * GET /v1/stream over real HTTP, on the embedded feed: events published to the feed reach the
 * clients that may read them, filtered by type, agent and organization; a client that reconnects
 * with Last-Event-ID gets exactly what it missed; NDJSON; heartbeats (a 200 ms interval here);
 * refusals (400, 404, 429) and the release of a connection when its client leaves.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { randomUUID } from "node:crypto"
import { EventFeed } from "../../adapters/bus/EventFeed.js"
import { newEnvelope } from "../../core/Events.js"
import type { WebhookEventType } from "../../core/schema/WebhookEvents.js"
import { waitUntil } from "../adapters/bus/NatsSupport.js"
import { connectStream, type StreamClient } from "./StreamClient.js"
import * as Harness from "./Support.js"
import { ApiHarness } from "./Support.js"

const MAX_CONNECTIONS = 3

const event = (type: WebhookEventType, orgId: string | null, agentId?: string) =>
  newEnvelope({
    type,
    source: randomUUID(),
    org_id: orgId,
    agent_id: agentId,
    created_at: new Date(),
    data: { marker: randomUUID() }
  })

const publish = (...envelopes: ReadonlyArray<ReturnType<typeof event>>) =>
  Effect.flatMap(EventFeed, (feed) => Effect.forEach(envelopes, feed.publish, { discard: true })).pipe(Effect.orDie)

const ids = (client: StreamClient) => client.events.map((e) => e.id)

/** Waits until the client received `id` (published last, after what the test checks). */
const received = (client: StreamClient, id: string) =>
  waitUntil(
    `event ${id}`,
    Effect.sync(() => ids(client).includes(id)),
    10_000
  ).pipe(Effect.orDie)

const metric = (api: ApiHarness["Type"], name: string) =>
  Effect.map(api.call("GET", "/metrics"), (res) => {
    const line = String(res.body)
      .split("\n")
      .find((l) => l.startsWith(`${name} `))
    return line === undefined ? 0 : Number(line.split(" ")[1])
  })

layer(Harness.layer({ stream: { heartbeatMs: 200, maxConnections: MAX_CONNECTIONS } }), {
  timeout: "120 seconds",
  excludeTestServices: true
})("GET /v1/stream", (it) => {
  it.scoped("sends the events the caller may read, as Server-Sent Events, filtered by type and agent", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { agentA, agentB, member, orgAgent, orgId, otherOrgId, userA } = api.fixtures
      const all = yield* connectStream(`${api.url}/v1/stream`, { token: member.token })
      expect(all.headers.get("content-type")).toMatch(/^text\/event-stream/)
      expect(all.headers.get("cache-control")).toBe("no-cache")
      expect(all.headers.get("x-accel-buffering")).toBe("no")
      const agentsOnly = yield* connectStream(`${api.url}/v1/stream?types=agent.*,verdict.boundary_violation`, {
        token: member.token
      })
      const oneAgent = yield* connectStream(`${api.url}/v1/stream?agent_id=${orgAgent}`, { token: member.token })
      const paused = event("agent.paused", orgId, orgAgent)
      const review = event("verdict.review_needed", orgId, orgAgent)
      const orgChange = event("conscience.values_updated", orgId)
      const otherOrg = event("agent.killed", otherOrgId, agentB)
      const otherOrgChange = event("conscience.values_updated", otherOrgId)
      const personal = event("agent.paused", null, agentA)
      const last = event("verdict.boundary_violation", orgId, orgAgent)
      yield* publish(paused, review, orgChange, otherOrg, otherOrgChange, personal, last)
      yield* received(all, last.id)
      yield* received(agentsOnly, last.id)
      yield* received(oneAgent, last.id)
      // The member reads its organization's agent and events, never another organization's nor userA's agent.
      expect(ids(all)).toEqual([paused.id, review.id, orgChange.id, last.id])
      expect(ids(agentsOnly)).toEqual([paused.id, last.id])
      expect(ids(oneAgent)).toEqual([paused.id, review.id, last.id])
      // Frames carry the id, the type and the whole envelope.
      expect(all.events[0]).toMatchObject({ id: paused.id, type: "agent.paused", envelope: paused })
      // userA sees its own agent only.
      const owner = yield* connectStream(`${api.url}/v1/stream`, { token: userA.token })
      const mine = event("agent.resumed", null, agentA)
      yield* publish(event("agent.resumed", orgId, orgAgent), mine)
      yield* received(owner, mine.id)
      expect(ids(owner)).toEqual([mine.id])
    })
  )

  it.scoped("a member of another organization sees none of this organization's events", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { agentB, orgAgent, orgId, otherOrgId, userB } = api.fixtures
      const other = yield* connectStream(`${api.url}/v1/stream`, { token: userB.token })
      const own = event("agent.paused", otherOrgId, agentB)
      yield* publish(
        event("agent.paused", orgId, orgAgent),
        event("conscience.values_updated", orgId),
        event("verdict.boundary_violation", orgId, orgAgent),
        own
      )
      yield* received(other, own.id)
      expect(ids(other)).toEqual([own.id])
    })
  )

  it.scoped("reconnecting with Last-Event-ID replays exactly what was missed, then follows live", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { member, orgAgent, orgId } = api.fixtures
      const url = `${api.url}/v1/stream?agent_id=${orgAgent}`
      const first = yield* connectStream(url, { token: member.token })
      const before = Array.from({ length: 3 }, () => event("agent.paused", orgId, orgAgent))
      yield* publish(...before)
      yield* received(first, before[2]!.id)
      const lastSeen = first.lastEventId()
      expect(lastSeen).toBe(before[2]!.id)
      first.close()
      // Published while the client is away.
      const missed = Array.from({ length: 5 }, () => event("agent.resumed", orgId, orgAgent))
      yield* publish(...missed)
      const again = yield* connectStream(url, { token: member.token, headers: { "last-event-id": lastSeen! } })
      const live = event("agent.killed", orgId, orgAgent)
      yield* publish(live)
      yield* received(again, live.id)
      expect(ids(again)).toEqual([...missed.map((e) => e.id), live.id])
      // ?since= with an id does the same; with a time, replays what was stored since.
      const bySince = yield* connectStream(`${url}&since=${before[0]!.id}`, { token: member.token })
      yield* received(bySince, live.id)
      expect(ids(bySince)).toEqual([...before.slice(1), ...missed, live].map((e) => e.id))
    })
  )

  it.scoped("format=ndjson: one envelope per line, empty lines as heartbeats", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { member, orgAgent, orgId } = api.fixtures
      const client = yield* connectStream(`${api.url}/v1/stream?format=ndjson&types=agent.paused`, {
        token: member.token
      })
      expect(client.headers.get("content-type")).toMatch(/^application\/x-ndjson/)
      const paused = event("agent.paused", orgId, orgAgent)
      yield* publish(event("agent.killed", orgId, orgAgent), paused)
      yield* received(client, paused.id)
      expect(client.events.map((e) => e.envelope)).toEqual([paused])
      yield* waitUntil(
        "three heartbeats",
        Effect.sync(() => client.heartbeats() >= 3)
      ).pipe(Effect.orDie)
    })
  )

  it.scoped("writes a heartbeat comment on an idle SSE stream", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const client = yield* connectStream(`${api.url}/v1/stream`, { token: api.fixtures.member.token })
      yield* waitUntil(
        "three heartbeats",
        Effect.sync(() => client.heartbeats() >= 3)
      ).pipe(Effect.orDie)
      expect(client.events).toEqual([])
    })
  )

  it.effect("refuses bad filters (400) and filters on what the caller may not read (404)", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { agentB, member, otherOrgId } = api.fixtures
      const get = (query: string, headers?: Record<string, string>) =>
        api.call("GET", `/v1/stream${query}`, { token: member.token, headers, headersOnly: true })
      for (const query of [
        "?types=agent.paused,nope",
        "?types=zzz*",
        "?types=a*b*",
        "?since=yesterday",
        "?format=xml"
      ]) {
        const res = yield* get(query)
        expect(res.status, query).toBe(400)
        expect(Object.keys(res.body)).toEqual(["error"])
      }
      expect((yield* get("", { "last-event-id": "not-an-id" })).status).toBe(400)
      expect((yield* get(`?org_id=${otherOrgId}`)).status).toBe(404)
      expect((yield* get(`?agent_id=${agentB}`)).status).toBe(404)
      expect((yield* get("?types=verdict.*,agent.paused")).status).toBe(200)
      expect((yield* api.call("GET", "/v1/stream", { headersOnly: true })).status).toBe(401)
    })
  )

  it.scoped("holds at most N streams per credential (429), and frees a slot when a client leaves", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const user = yield* api.freshUser
      const clients = yield* Effect.forEach(Array.from({ length: MAX_CONNECTIONS }), () =>
        connectStream(`${api.url}/v1/stream`, { token: user.token })
      )
      const gauge = yield* metric(api, "candor_stream_clients")
      expect(gauge).toBeGreaterThanOrEqual(MAX_CONNECTIONS)
      const refused = yield* connectStream(`${api.url}/v1/stream`, { token: user.token })
      expect(refused.status).toBe(429)
      expect(refused.error).toMatchObject({ error: expect.stringContaining(`${MAX_CONNECTIONS}`) })
      // Another credential is not affected.
      expect((yield* connectStream(`${api.url}/v1/stream`, { token: api.fixtures.member.token })).status).toBe(200)
      const open = yield* metric(api, "candor_stream_clients")
      clients[0]!.close()
      yield* waitUntil(
        "the server to release the connection",
        Effect.map(metric(api, "candor_stream_clients"), (n) => n < open)
      ).pipe(Effect.orDie)
      expect((yield* connectStream(`${api.url}/v1/stream`, { token: user.token })).status).toBe(200)
      const sent = yield* metric(api, "candor_stream_events_sent_total")
      expect(sent).toBeGreaterThan(0)
    })
  )
})
