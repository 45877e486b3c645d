/**
 * GET /v1/stream ends when the access that opened it does (issue 24, deliverable 8), over real HTTP
 * on the embedded feed, with the credential re-checked every 200 ms here (30 s by default): a
 * revoked or rotated API key, an organization key whose creator was removed or demoted, an expired
 * JWT, an ended impersonation, a filtered organization the caller left. A stream whose access holds
 * stays open beside them, and an unfiltered stream stops receiving an organization's events once
 * its caller left it.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { randomUUID } from "node:crypto"
import { EventFeed } from "../../adapters/bus/EventFeed.js"
import { newEnvelope } from "../../core/Events.js"
import { waitUntil } from "../adapters/bus/NatsSupport.js"
import { connectStream, type StreamClient } from "./StreamClient.js"
import * as Harness from "./Support.js"
import { ApiHarness, freshOrganization } from "./Support.js"

const CHECK_MS = 200

const ended = (client: StreamClient, what: string) =>
  waitUntil(`the server to close the stream (${what})`, Effect.sync(client.ended), 10_000).pipe(Effect.orDie)

/** The stream is still open after two more re-checks (heartbeats keep coming). */
const stillOpen = (client: StreamClient) =>
  Effect.gen(function* () {
    const seen = client.heartbeats()
    yield* waitUntil(
      "two more heartbeats",
      Effect.sync(() => client.heartbeats() >= seen + 2),
      10_000
    ).pipe(Effect.orDie)
    expect(client.ended()).toBe(false)
  })

const event = (orgId: string, agentId?: string) =>
  newEnvelope({
    type: "agent.paused",
    source: randomUUID(),
    org_id: orgId,
    agent_id: agentId,
    created_at: new Date(),
    data: { marker: randomUUID() }
  })

const publish = (...envelopes: ReadonlyArray<ReturnType<typeof event>>) =>
  Effect.flatMap(EventFeed, (feed) => Effect.forEach(envelopes, feed.publish, { discard: true })).pipe(Effect.orDie)

const received = (client: StreamClient, id: string) =>
  waitUntil(
    `event ${id}`,
    Effect.sync(() => client.events.some((e) => e.id === id)),
    10_000
  ).pipe(Effect.orDie)

const metric = (api: ApiHarness["Type"], name: string) =>
  Effect.map(api.call("GET", "/metrics"), (res) => {
    const line = String(res.body)
      .split("\n")
      .find((l) => l.startsWith(`${name} `))
    return line === undefined ? 0 : Number(line.split(" ")[1])
  })

layer(Harness.layer({ stream: { heartbeatMs: CHECK_MS, credentialCheckMs: CHECK_MS } }), {
  timeout: "120 seconds",
  excludeTestServices: true
})("GET /v1/stream: access ends when the credential does", (it) => {
  it.scoped("a revoked API key's stream is closed, a rotated one's too; another key's stays open", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { member } = api.fixtures
      const create = Effect.map(
        api.call("POST", "/v1/api-keys", { token: member.token, body: { name: "stream" } }),
        (res) => ({ id: res.body.key_id as string, key: res.body.key as string })
      )
      const revoked = yield* create
      const rotated = yield* create
      const kept = yield* create
      const before = yield* metric(api, "candor_stream_access_ended_total")
      const streams = {
        revoked: yield* connectStream(`${api.url}/v1/stream`, { apiKey: revoked.key }),
        rotated: yield* connectStream(`${api.url}/v1/stream`, { apiKey: rotated.key }),
        kept: yield* connectStream(`${api.url}/v1/stream`, { apiKey: kept.key })
      }
      expect(streams.revoked.status).toBe(200)
      yield* stillOpen(streams.revoked)

      expect((yield* api.call("DELETE", `/v1/api-keys/${revoked.id}`, { token: member.token })).status).toBe(200)
      yield* ended(streams.revoked, "revoked key")
      expect((yield* api.call("POST", `/v1/api-keys/${rotated.id}/rotate`, { token: member.token })).status).toBe(200)
      yield* ended(streams.rotated, "rotated key")
      // Reconnecting says why.
      const again = yield* connectStream(`${api.url}/v1/stream`, { apiKey: revoked.key })
      expect(again).toMatchObject({ status: 401, error: { error: "invalid API key" } })
      yield* stillOpen(streams.kept)
      expect(yield* metric(api, "candor_stream_access_ended_total")).toBeGreaterThanOrEqual(before + 2)
    })
  )

  it.scoped("an organization key's stream is closed when its creator is removed, or demoted below its role", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { admin, owner } = api.fixtures
      const orgKey = (orgId: string, role: "admin" | "member") =>
        Effect.map(
          api.call("POST", "/v1/api-keys", { token: admin.token, body: { name: "org", org_id: orgId, role } }),
          (res) => res.body.key as string
        )
      const removedFrom = yield* freshOrganization("Removed")
      const demotedIn = yield* freshOrganization("Demoted")
      const ofRemoved = yield* connectStream(`${api.url}/v1/stream`, { apiKey: yield* orgKey(removedFrom, "admin") })
      const adminKey = yield* connectStream(`${api.url}/v1/stream`, { apiKey: yield* orgKey(demotedIn, "admin") })
      const memberKey = yield* connectStream(`${api.url}/v1/stream`, { apiKey: yield* orgKey(demotedIn, "member") })

      const removed = yield* api.call("DELETE", `/v1/orgs/${removedFrom}/members/${admin.userId}`, {
        token: owner.token
      })
      expect(removed.status).toBe(200)
      yield* ended(ofRemoved, "creator removed")
      const demoted = yield* api.call("PUT", `/v1/orgs/${demotedIn}/members/${admin.userId}`, {
        token: owner.token,
        body: { role: "member" }
      })
      expect(demoted.status).toBe(200)
      yield* ended(adminKey, "creator demoted below the key's role")
      // The member-role key is within the creator's new role: it goes on.
      yield* stillOpen(memberKey)
    })
  )

  it.scoped("a JWT's stream is closed when the token expires, not before", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const user = yield* api.freshUser
      const issuedAt = Math.floor(Date.now() / 1000)
      const token = yield* api.token(user.userId, { issuedAt, ttlSeconds: 2 })
      const client = yield* connectStream(`${api.url}/v1/stream`, { token })
      expect(client.status).toBe(200)
      yield* ended(client, "token expired")
      expect(Date.now()).toBeGreaterThanOrEqual((issuedAt + 2) * 1000)
      expect((yield* connectStream(`${api.url}/v1/stream`, { token })).status).toBe(401)
    })
  )

  it.scoped("an impersonation session's stream is closed when the session ends", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const target = yield* api.freshUser
      const started = yield* api.call("POST", "/v1/admin/impersonate", {
        token: api.serviceRoleKey,
        body: { user_id: target.userId }
      })
      const { session_id, token } = started.body
      const client = yield* connectStream(`${api.url}/v1/stream`, { token })
      yield* stillOpen(client)
      const end = yield* api.call("POST", `/v1/admin/impersonation/${session_id}/end`, { token: api.serviceRoleKey })
      expect(end.status).toBe(200)
      yield* ended(client, "impersonation ended")
    })
  )

  it.scoped("leaving an organization closes the streams filtered on it and stops its events on the others", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { member, orgAgent, orgId, owner } = api.fixtures
      const left = yield* freshOrganization("Left")
      const agent = yield* api.claimAgent({ userId: owner.userId, orgId: left })
      const filtered = yield* connectStream(`${api.url}/v1/stream?org_id=${left}`, { token: member.token })
      const agentOnly = yield* connectStream(`${api.url}/v1/stream?agent_id=${agent}`, { token: member.token })
      const all = yield* connectStream(`${api.url}/v1/stream`, { token: member.token })
      const seen = event(left, agent)
      yield* publish(seen)
      yield* received(all, seen.id)

      const removed = yield* api.call("DELETE", `/v1/orgs/${left}/members/${member.userId}`, { token: owner.token })
      expect(removed.status).toBe(200)
      yield* ended(filtered, "organization left")
      yield* ended(agentOnly, "agent no longer readable")
      // The unfiltered stream stays (the credential holds), without the organization's events once
      // it has re-checked (two heartbeats: more than one re-check interval).
      yield* stillOpen(all)
      const hidden = event(left, agent)
      const stillMine = event(orgId, orgAgent)
      yield* publish(hidden, stillMine)
      yield* received(all, stillMine.id)
      expect(all.events.map((e) => e.id)).toEqual([seen.id, stillMine.id])
      expect(all.ended()).toBe(false)
    })
  )
})
