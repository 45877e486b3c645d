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
import { seed } from "./AgentData.js"
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

  it.effect("GET /v1/console/session describes users, API keys, the service-role key and impersonation", () =>
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
      expect(yield* whoami({ token: api.serviceRoleKey })).toMatchObject({ kind: "service", expires_at: null })
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
