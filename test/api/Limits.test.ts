/**
 * Errors and limits end to end: the per-credential rate limit (429 with Retry-After, at the plan's
 * rate), the body size limit (413), unknown routes (404 {error}), and what the server publishes
 * besides the API: the OpenAPI document, the docs page, /metrics, /health/ready.
 */
import * as OpenApi from "@effect/platform/OpenApi"
import * as SqlClient from "@effect/sql/SqlClient"
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { CandorApi } from "../../src/api/Api.js"
import { seed } from "./AgentData.js"
import * as Harness from "./Support.js"
import { ApiHarness } from "./Support.js"

layer(Harness.layer(), { timeout: "60 seconds" })("limits", (it) => {
  it.effect(
    "a Free credential gets 10 requests per second, then 429 {error} with Retry-After; others are unaffected",
    () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const user = yield* api.freshUser
        // At once, so the bucket (10 tokens, refilled at 10/s) cannot keep up whatever the machine's speed.
        const responses = yield* Effect.all(
          Array.from({ length: 30 }, () => api.call("GET", "/v1/plans", { token: user.token })),
          { concurrency: "unbounded" }
        )
        const ok = responses.filter((r) => r.status === 200).length
        const limited = responses.filter((r) => r.status === 429)
        expect(ok).toBeGreaterThanOrEqual(10)
        expect(ok + limited.length).toBe(30)
        expect(limited.length).toBeGreaterThan(0)
        expect(limited[0]!.headers.get("retry-after")).toBe("1")
        expect(limited[0]!.body).toStrictEqual({ error: "rate limit of the free plan exceeded, retry in 1 s" })

        // Another credential has its own bucket.
        const other = yield* api.freshUser
        expect((yield* api.call("GET", "/v1/plans", { token: other.token })).status).toBe(200)
      })
  )

  it.effect("each API key is its own credential, limited at its owner's plan", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const user = yield* api.freshUser
      const key = yield* api.createApiKey(user.userId)
      const responses = yield* Effect.all(
        Array.from({ length: 30 }, () => api.call("GET", "/v1/plans", { apiKey: key })),
        { concurrency: "unbounded" }
      )
      expect(responses.some((r) => r.status === 429)).toBe(true)
      expect((yield* api.call("GET", "/v1/plans", { token: user.token })).status).toBe(200)
    })
  )

  it.effect("a plan upgrade raises the rate at once (Team: 200/s)", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const user = yield* api.freshUser
      const upgraded = yield* api.call("PUT", `/v1/admin/users/${user.userId}`, {
        token: api.serviceRoleKey,
        body: { plan_id: "team" }
      })
      expect(upgraded.body.plan_id).toBe("team")
      const statuses: Array<number> = []
      for (let i = 0; i < 30; i++) statuses.push((yield* api.call("GET", "/v1/plans", { token: user.token })).status)
      expect(statuses.every((s) => s === 200)).toBe(true)
      const unknownPlan = yield* api.call("PUT", `/v1/admin/users/${user.userId}`, {
        token: api.serviceRoleKey,
        body: { plan_id: "gold" }
      })
      expect(unknownPlan.status).toBe(400)
    })
  )

  it.effect("a body over 1 MiB is refused with 413 {error}", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const res = yield* api.call("POST", "/v1/enterprise/contact", {
        token: api.fixtures.userA.token,
        body: {
          name: "x",
          email: "x@example.test",
          company: "c",
          role: "r",
          company_size: "1",
          message: "m".repeat(1_100_000)
        }
      })
      expect(res).toMatchObject({ status: 413, body: { error: "request body is larger than 1048576 bytes" } })
    })
  )

  // Found by test/api/Bodies.fuzz.test.ts: 3,000 nested arrays overflowed the decoder's stack (500 on every route).
  it.effect("a body nesting deeper than 64 levels is refused with 400 {error} on any route; 64 levels are read", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const token = api.fixtures.owner.token
      for (const path of ["/v1/orgs", "/v1/on-chain/publish-scores", `/v1/agents/${api.fixtures.orgAgent}/pause`]) {
        const deep = yield* api.call("POST", path, { token, body: "[".repeat(5_000) + "]".repeat(5_000) })
        expect(deep).toMatchObject({ status: 400, body: { error: "request body nests deeper than 64 levels" } })
      }
      // Brackets inside strings do not count, and 64 levels reach the schema (which refuses the shape, not the depth).
      const quoted = yield* api.call("POST", "/v1/orgs", { token, body: { name: "[".repeat(5_000) } })
      expect(quoted.body.error).not.toContain("nests deeper")
      const sixtyFour = yield* api.call("POST", "/v1/orgs", { token, body: "[".repeat(64) + "]".repeat(64) })
      expect(sixtyFour.status).toBe(400)
      expect(sixtyFour.body.error).not.toContain("nests deeper")
      expect(sixtyFour.body.error.length).toBeLessThan(2_000)
    })
  )

  it.effect("unknown routes and methods answer 404 {error}, never a stack trace", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      for (const [method, path] of [
        ["GET", "/v1/nope"],
        ["GET", "/v2/agents"],
        ["DELETE", "/v1/plans"],
        ["GET", "/"]
      ] as const) {
        const res = yield* api.call(method, path, { token: api.fixtures.userA.token })
        expect(res, `${method} ${path}`).toMatchObject({ status: 404, body: { error: "not found" } })
      }
      const unknownAgent = yield* api.call("GET", "/v1/agents/agt-0000/checkpoints", {
        token: api.fixtures.userA.token
      })
      expect(unknownAgent.status).toBe(404)
      expect(Object.keys(unknownAgent.body)).toStrictEqual(["error"])
      expect(JSON.stringify(unknownAgent.body)).not.toMatch(/at .*\.ts|Error:/)
    })
  )

  it.effect('a database failure answers 500 {error: "internal error"} with nothing of the cause', () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const sql = yield* SqlClient.SqlClient
      // Only the enterprise contact route writes this table: hide it for one request.
      yield* sql`alter table enterprise_contacts rename to enterprise_contacts_hidden`
      const res = yield* api
        .call("POST", "/v1/enterprise/contact", {
          token: api.fixtures.userA.token,
          body: { name: "n", email: "n@example.test", company: "c", role: "r", company_size: "1", message: "m" }
        })
        .pipe(Effect.ensuring(Effect.orDie(sql`alter table enterprise_contacts_hidden rename to enterprise_contacts`)))
      expect(res).toStrictEqual(expect.objectContaining({ status: 500, body: { error: "internal error" } }))
    })
  )

  it.effect("serves the OpenAPI document at /v1/openapi.json and a docs page at /docs, without credentials", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const doc = yield* api.call("GET", "/v1/openapi.json")
      expect(doc.status).toBe(200)
      expect(doc.body.openapi).toMatch(/^3\./)
      expect(doc.body.info.title).toBe("Candor management API")
      // What test/api/OpenApiDocument.test.ts compares with its committed fixture is what is served.
      expect(doc.body).toEqual(JSON.parse(JSON.stringify(OpenApi.fromApi(CandorApi))))
      for (const path of ["/v1/orgs", "/v1/plans", "/v1/agents/{agent_id}/checkpoints", "/v1/license/validate"]) {
        expect(Object.keys(doc.body.paths), path).toContain(path)
      }
      expect(Object.keys(doc.body.components.securitySchemes).sort()).toStrictEqual([
        "apiKey",
        "bearer",
        "serviceApiKey"
      ])
      // Error responses are documented as they are sent: {error}, Retry-After on 429.
      const createOrg = doc.body.paths["/v1/orgs"].post.responses
      for (const status of ["400", "401", "403", "429", "500"]) {
        expect(createOrg[status].content["application/json"].schema, status).toStrictEqual({
          $ref: "#/components/schemas/Error"
        })
      }
      expect(createOrg["429"].headers["Retry-After"]).toBeDefined()
      expect(doc.body.components.schemas.Error.required).toStrictEqual(["error"])
      expect(doc.body.components.schemas.HttpApiDecodeError).toBeUndefined()
      const page = yield* Effect.promise(() => fetch(`${api.url}/docs`))
      expect(page.status).toBe(200)
      expect(page.headers.get("content-type")).toMatch(/^text\/html/)
      const html = yield* Effect.promise(() => page.text())
      expect(html).toContain("swagger-ui")
      expect(html).not.toMatch(/<script[^>]+src="https?:/)
    })
  )

  it.effect("/metrics: requests by route and status, latency histogram, verdicts, outbox lag, proofs", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      yield* seed(api.fixtures.agentA, 3)
      yield* api.call("GET", `/v1/agents/${api.fixtures.agentA}/checkpoints`, { token: api.fixtures.userA.token })
      const res = yield* Effect.promise(() => fetch(`${api.url}/metrics`))
      expect(res.status).toBe(200)
      expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/)
      const text = yield* Effect.promise(() => res.text())
      expect(text).toMatch(/^# TYPE http_requests_total counter$/m)
      expect(text).toMatch(
        /^http_requests_total\{[^}]*route="\/v1\/agents\/:agent_id\/checkpoints"[^}]*status="200"[^}]*\} \d+$/m
      )
      expect(text).toMatch(/^http_request_duration_seconds_bucket\{[^}]*le="\+Inf"[^}]*\} \d+$/m)
      expect(text).toMatch(/^candor_checkpoints\{verdict="clear"\} \d+$/m)
      expect(text).toMatch(/^# TYPE candor_outbox_lag_seconds gauge$/m)
      expect(text).toMatch(/^# TYPE candor_verdict_proofs gauge$/m)
      // Raw ids never become labels.
      expect(text).not.toContain(api.fixtures.agentA)
    })
  )

  it.effect("/health/ready checks the store", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const res = yield* api.call("GET", "/health/ready")
      expect(res).toMatchObject({ status: 200, body: { status: "ready", checks: { store: "ok" } } })
    })
  )
})
