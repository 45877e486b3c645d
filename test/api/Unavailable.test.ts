/**
 * The API while its PostgreSQL cannot be reached (a proxy between them taken down, as during a
 * restart): 503 with Retry-After and an `{error}` body, for a handler's read and for the credential
 * lookup of the auth middleware and for a route through a domain service alike, instead of 500; and
 * answers again once the database is back.
 * Likewise 503 when the gateways' shared state (NATS KV) cannot be written: the change is stored.
 */
import * as PgClient from "@effect/sql-pg/PgClient"
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { AgentState } from "../../adapters/bus/AgentState.js"
import { BusError } from "../../adapters/bus/BusError.js"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { type TcpProxy, tcpProxy } from "../integration/TcpProxy.js"
import { testDatabaseUrl, throwawayDatabase } from "../support/Postgres.js"
import * as Harness from "./Support.js"
import { ApiHarness } from "./Support.js"
import { layerIntegration } from "../support/Integration.js"

let proxy: TcpProxy | undefined

/** A throwaway database on TEST_DATABASE_URL's server, reached through a proxy the tests hold. */
const throughProxy = Layer.unwrapScoped(
  Effect.gen(function* () {
    const url = new URL(Redacted.value(yield* throwawayDatabase))
    const server = new URL(testDatabaseUrl())
    proxy = yield* tcpProxy({ host: server.hostname, port: Number(server.port || 5432) })
    url.hostname = "127.0.0.1"
    url.port = String(proxy.port)
    return PgClient.layer({ url: Redacted.make(url.toString()) })
  })
)

layerIntegration("postgres", Harness.layer({ databaseClient: throughProxy }), {
  timeout: "60 seconds",
  excludeTestServices: true
})("database unreachable", (it) => {
  it.effect("answers 503 with Retry-After while the database is down, and 200 once it is back", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const path = `/v1/agents/${api.fixtures.agentA}/checkpoints`
      const read = api.call("GET", path, { token: api.fixtures.userA.token })
      expect((yield* read).status).toBe(200)
      const apiKey = yield* api.createApiKey(api.fixtures.userA.userId)

      yield* proxy!.down
      const down = yield* read
      expect(down.status).toBe(503)
      expect(down.headers.get("retry-after")).toBe("5")
      expect(down.body).toEqual({ error: expect.stringContaining("database cannot be reached") })
      // An API key is looked up in the database by the middleware: the same answer.
      const key = yield* api.call("GET", path, { apiKey })
      expect(key.status).toBe(503)

      yield* proxy!.up
      let again = yield* read
      for (let i = 0; i < 100 && again.status !== 200; i++)
        again = yield* Effect.zipRight(Effect.sleep("100 millis"), read)
      expect(again.status).toBe(200)
    })
  )

  it.effect("a route through a domain service answers 503 alike: its StoreError is answered once for every route", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const teams = api.call("GET", `/v1/orgs/${api.fixtures.orgId}/teams`, { token: api.fixtures.owner.token })
      expect((yield* teams).status).toBe(200)

      yield* proxy!.down
      const down = yield* teams
      expect(down.status).toBe(503)
      expect(down.headers.get("retry-after")).toBe("5")
      expect(down.body).toEqual({ error: expect.stringContaining("database cannot be reached") })

      yield* proxy!.up
      let again = yield* teams
      for (let i = 0; i < 100 && again.status !== 200; i++)
        again = yield* Effect.zipRight(Effect.sleep("100 millis"), teams)
      expect(again.status).toBe(200)
    })
  )
})

/** Shared state whose writes fail, as KvAgentState's do once NATS stays unreachable past its retries. */
const unwritableState = Layer.effect(
  AgentState,
  Effect.map(AgentState, (state) =>
    AgentState.of({
      ...state,
      update: () => Effect.fail(new BusError({ operation: "write agent settings", cause: "connection closed" }))
    })
  )
).pipe(Layer.provide(AgentState.layerMemory))

layer(Harness.layer({ agentState: unwritableState }), { timeout: "60 seconds" })("gateways unreachable", (it) => {
  it.effect("a settings change that cannot reach the gateways answers 503, and is stored", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const path = `/v1/agents/${api.fixtures.agentA}/enforcement`
      const token = api.fixtures.userA.token
      const put = yield* api.call("PUT", path, { token, body: { mode: "enforce" } })
      expect(put.status).toBe(503)
      expect(put.headers.get("retry-after")).toBe("5")
      expect(put.body.error).toContain("send it again")
      expect((yield* api.call("GET", path, { token })).body.enforcement_mode).toBe("enforce")
    })
  )
})
