/**
 * The console's routes over HTTP: the local operator's code exchange (POST /v1/console/sessions)
 * where the operator sign-in is on, its session's service-role rights (unclaimed agents listed),
 * single use, throttling, expiry; refused where it is off (a deployment with its own database or
 * NATS); and GET /v1/console/session describing each kind of caller.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { randomBytes } from "node:crypto"
import * as OperatorSignIn from "../../adapters/auth/OperatorSignIn.js"
import { SERVICE_KEY_IN_BROWSER } from "../../adapters/auth/CredentialAuthentication.js"
import { SERVICE_KEY_REFUSED } from "../../src/api/handlers/Console.js"
import { cardFor, seed } from "./AgentData.js"
import { ApiHarness, layer as harness } from "./Support.js"

let now = Date.parse("2026-11-24T12:00:00.000Z")
const store = OperatorSignIn.makeOperatorSignIn({ now: () => now, maxFailures: 3, sessionTtlMs: 3_600_000 })
const signIn = Layer.succeed(OperatorSignIn.OperatorSignIn, store)

layer(harness({ operatorSignIn: signIn }), { timeout: "90 seconds" })("console sign-in (embedded default)", (it) => {
  it.effect("a printed code becomes a session with the service-role key's rights, once", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { code } = store.issueCode()
      const exchanged = yield* api.call("POST", "/v1/console/sessions", { body: { code } })
      expect(exchanged.status).toBe(201)
      expect(exchanged.body).toEqual({
        token: expect.stringMatching(/^cos_/),
        expires_at: new Date(now + 3_600_000).toISOString(),
        kind: "operator"
      })
      const token: string = exchanged.body.token

      // An agent nobody claimed (traffic through the gateway only): the operator sees it.
      const unclaimed = `agt-${randomBytes(8).toString("hex")}`
      yield* Effect.orDie(seed(unclaimed, 2))
      const agents = yield* api.call("GET", "/v1/agents", { token })
      expect(agents.body.agents.find((a: { agent_id: string }) => a.agent_id === unclaimed)).toMatchObject({
        claimed: false,
        total_checkpoints: 2
      })
      const paused = yield* api.call("POST", `/v1/agents/${unclaimed}/pause`, { token, body: { reason: "console" } })
      expect(paused.body).toMatchObject({ containment_status: "paused", contained_by: "service" })
      expect((yield* api.call("GET", "/v1/console/session", { token })).body).toEqual({
        kind: "operator",
        user_id: null,
        email: null,
        org_id: null,
        role: null,
        read_only: false,
        expires_at: exchanged.body.expires_at
      })

      const again = yield* api.call("POST", "/v1/console/sessions", { body: { code } })
      expect(again).toMatchObject({ status: 401, body: { error: "sign-in code invalid, used or expired" } })

      now += 3_600_000
      const expired = yield* api.call("GET", "/v1/agents", { token })
      expect(expired).toMatchObject({ status: 401, body: { error: "console session expired or ended" } })
    })
  )

  it.effect("an operator session keeps the service-role key's rights but the routes reserved to the key", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { orgAgent, member } = api.fixtures
      const exchanged = store.exchange(store.issueCode().code)
      if (exchanged._tag !== "Session") return yield* Effect.dieMessage(`exchange: ${exchanged._tag}`)
      const token = exchanged.token
      const card = () => ({
        card_json: cardFor(orgAgent, `card-${randomBytes(4).toString("hex")}`),
        conscience_values: []
      })
      // Reserved to the key (spec: the card update and administration): refused to the browser's session.
      const reserved: ReadonlyArray<readonly [string, string, unknown]> = [
        ["PATCH", `/v1/agents/${orgAgent}/card`, card()],
        ["PUT", `/v1/admin/users/${member.userId}`, { is_admin: true }],
        ["PUT", `/v1/admin/orgs/${api.fixtures.orgId}/plan`, { plan_id: "team" }],
        ["PUT", "/v1/admin/promos/OPERATOR", { name: "x", discount_percent: 100, discount_amount_cents: 0 }],
        ["PUT", "/v1/admin/blog/posts/op-post", { agent_id: orgAgent, title: "t", slug: "op-post" }],
        ["POST", "/v1/admin/impersonate", { user_id: member.userId }]
      ]
      for (const [method, path, body] of reserved) {
        const res = yield* api.call(method, path, { token, body })
        expect(res.status, `${method} ${path}`).toBe(403)
        expect(Object.keys(res.body)).toEqual(["error"])
      }
      // The key itself still may.
      expect(
        (yield* api.call("PATCH", `/v1/agents/${orgAgent}/card`, { token: api.serviceRoleKey, body: card() })).status
      ).toBe(200)
      // Everything else of the key's rights stays: every agent, containment, the enforcement mode.
      expect((yield* api.call("GET", "/v1/agents", { token })).status).toBe(200)
      expect(
        (yield* api.call("PUT", `/v1/agents/${orgAgent}/enforcement`, { token, body: { mode: "nudge" } })).status
      ).toBe(200)
    })
  )

  it.effect("bad bodies are 400; failed exchanges are throttled (429, Retry-After) without burning the code", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { code } = store.issueCode()
      expect(yield* api.call("POST", "/v1/console/sessions", { body: {} })).toMatchObject({
        status: 400,
        body: { error: "code: is missing" }
      })
      expect((yield* api.call("POST", "/v1/console/sessions", { body: { code: "" } })).status).toBe(400)
      for (let i = 0; i < 3; i++) {
        expect((yield* api.call("POST", "/v1/console/sessions", { body: { code: `guess-${i}` } })).status).toBe(401)
      }
      const throttled = yield* api.call("POST", "/v1/console/sessions", { body: { code } })
      expect(throttled.status).toBe(429)
      expect(throttled.headers.get("retry-after")).toBe("60")
      expect(Object.keys(throttled.body)).toEqual(["error"])
      now += 60_000
      expect((yield* api.call("POST", "/v1/console/sessions", { body: { code } })).status).toBe(201)
    })
  )
})

layer(harness(), { timeout: "90 seconds" })("console routes elsewhere", (it) => {
  it.effect("without the operator sign-in the exchange is 404 and a cos_ token is refused", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const exchange = yield* api.call("POST", "/v1/console/sessions", { body: { code: "anything" } })
      expect(exchange).toMatchObject({
        status: 404,
        body: { error: "operator sign-in links exist only on the embedded default (no DATABASE_URL, no NATS_URL)" }
      })
      const forged = yield* api.call("GET", "/v1/agents", { token: `cos_${randomBytes(32).toString("base64url")}` })
      expect(forged).toMatchObject({ status: 401, body: { error: "console session expired or ended" } })
    })
  )

  it.effect(
    "the console refuses the service-role key (403, saying why); a browser's request with it is refused anywhere",
    () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const refused = yield* api.call("GET", "/v1/console/session", { token: api.serviceRoleKey })
        expect(refused).toMatchObject({ status: 403, body: { error: SERVICE_KEY_REFUSED } })
        expect(Object.keys(refused.body)).toEqual(["error"])
        // A browser marks its requests with fetch metadata; servers' clients do not.
        const browser = { "sec-fetch-site": "same-origin", "sec-fetch-mode": "cors" }
        const fromPage = yield* api.call("GET", "/v1/agents", { token: api.serviceRoleKey, headers: browser })
        expect(fromPage).toMatchObject({ status: 403, body: { error: SERVICE_KEY_IN_BROWSER } })
        // The same key from a server's client still works; a user's token from a browser too.
        expect((yield* api.call("GET", "/v1/agents", { token: api.serviceRoleKey })).status).toBe(200)
        const member = api.fixtures.member.token
        expect((yield* api.call("GET", "/v1/console/session", { token: member, headers: browser })).status).toBe(200)
      })
  )

  it.effect("GET /v1/console/session describes users, API keys and impersonation", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { orgId, owner, member } = api.fixtures
      const whoami = (credential: { token?: string; apiKey?: string }) =>
        Effect.map(api.call("GET", "/v1/console/session", credential), (r) => r.body)
      expect(yield* whoami({ token: member.token })).toEqual({
        kind: "user",
        user_id: member.userId,
        email: member.email,
        org_id: null,
        role: null,
        read_only: false,
        expires_at: null
      })
      const key = yield* api.createApiKey(owner.userId, { orgId, role: "admin" })
      expect(yield* whoami({ apiKey: key })).toMatchObject({ kind: "api_key", org_id: orgId, role: "admin" })
      const started = yield* api.call("POST", "/v1/admin/impersonate", {
        token: api.serviceRoleKey,
        body: { user_id: member.userId }
      })
      expect(yield* whoami({ token: started.body.token })).toMatchObject({
        kind: "user",
        user_id: member.userId,
        read_only: true,
        expires_at: started.body.expires_at
      })
    })
  )
})
