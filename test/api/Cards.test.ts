/**
 * PATCH /v1/agents/{agent_id}/card (service-role key only) and PUT /conscience-values over HTTP:
 * what is stored, what reaches the gateways (AgentState), who is refused, and bodies refused with a
 * 400 naming the field.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { AgentState } from "../../adapters/bus/AgentState.js"
import { Store } from "../../adapters/store/Store.js"
import { type ConscienceValue, DEFAULT_CONSCIENCE_VALUES } from "../../core/schema/Conscience.js"
import { cardFor } from "./AgentData.js"
import { ApiHarness, layer as harness } from "./Support.js"

const values: ReadonlyArray<ConscienceValue> = [
  { type: "BOUNDARY", name: "no-wire-transfers", content: "Never move money without a human's approval." },
  { type: "FEAR", name: "fear-overreach", content: "Doing more than the principal asked." }
]

layer(harness(), { timeout: "90 seconds" })("cards API", (it) => {
  it.effect(
    "PATCH card with the service-role key stores a new active version and its values, and tells the gateways",
    () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const store = yield* Store
        const state = yield* AgentState
        const { agentA } = api.fixtures
        // What a client sends: aap_version and trace_format may be left to their defaults.
        const { aap_version: _, ...card } = cardFor(agentA, "card-v1")
        const first = yield* api.call("PATCH", `/v1/agents/${agentA}/card`, {
          token: api.serviceRoleKey,
          body: { card_json: card, conscience_values: values }
        })
        expect(first).toMatchObject({ status: 200, body: { updated: true, card_id: "card-v1" } })
        expect(Object.keys(first.body).sort()).toEqual(["card_id", "updated"])
        const active = yield* store.activeCard(agentA)
        expect(active).toMatchObject({ version: 1, card: { card_id: "card-v1", aap_version: "0.5.0" } })
        expect(yield* store.conscienceValues(agentA)).toEqual(values)
        // The gateways get the resolved values: the agent's add to the defaults (they used to replace them).
        expect(yield* state.get(agentA)).toMatchObject({
          cardId: "card-v1",
          card: { card_id: "card-v1" },
          conscienceValues: [...DEFAULT_CONSCIENCE_VALUES, ...values]
        })

        // A later card replaces it; the record's own members besides these two are accepted and ignored.
        const second = yield* api.call("PATCH", `/v1/agents/${agentA}/card`, {
          token: api.serviceRoleKey,
          body: { card_id: "card-v2", is_active: true, card_json: cardFor(agentA, "card-v2"), conscience_values: [] }
        })
        expect(second.body).toEqual({ updated: true, card_id: "card-v2" })
        expect(yield* store.activeCard(agentA)).toMatchObject({ version: 2, card: { card_id: "card-v2" } })
        expect(yield* store.conscienceValues(agentA)).toEqual([])
        expect((yield* state.get(agentA)).conscienceValues).toEqual(DEFAULT_CONSCIENCE_VALUES)

        // The card update may register a card before the agent's first request.
        const unseen = "agent-registered-by-card"
        const early = yield* api.call("PATCH", `/v1/agents/${unseen}/card`, {
          token: api.serviceRoleKey,
          body: { card_json: cardFor(unseen, "card-early"), conscience_values: values }
        })
        expect(early.body).toEqual({ updated: true, card_id: "card-early" })
      })
  )

  it.effect("PATCH card refuses every credential but the service-role key", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { admin, agentA, orgAgent, orgId, owner, userA } = api.fixtures
      const body = { card_json: cardFor(agentA, "card-x"), conscience_values: values }
      const orgBody = { card_json: cardFor(orgAgent, "card-x"), conscience_values: values }
      const adminKey = yield* api.createApiKey(admin.userId, { orgId, role: "admin" })
      const personalKey = yield* api.createApiKey(userA.userId)
      const refusals = [
        [{ token: userA.token }, agentA, body],
        [{ apiKey: personalKey }, agentA, body],
        [{ token: owner.token }, orgAgent, orgBody],
        [{ apiKey: adminKey }, orgAgent, orgBody]
      ] as const
      for (const [credential, agent, payload] of refusals) {
        const response = yield* api.call("PATCH", `/v1/agents/${agent}/card`, { ...credential, body: payload })
        expect(response).toMatchObject({ status: 403, body: { error: "this operation needs the service-role key" } })
      }
      expect((yield* api.call("PATCH", `/v1/agents/${agentA}/card`, { body })).status).toBe(401)
      expect((yield* api.call("PATCH", `/v1/agents/${agentA}/card`, { token: "wrong-service-key", body })).status).toBe(
        401
      )
    })
  )

  it.effect("PATCH card refuses a malformed body with a 400 naming the field", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { agentA } = api.fixtures
      const card = cardFor(agentA, "card-bad")
      const cases: ReadonlyArray<readonly [unknown, string]> = [
        [{ card_json: card }, "conscience_values"],
        [{ conscience_values: values }, "card_json"],
        [
          {
            card_json: { ...card, audit_commitment: { ...card.audit_commitment, retention_days: 0 } },
            conscience_values: []
          },
          "card_json.audit_commitment.retention_days"
        ],
        [
          { card_json: card, conscience_values: [{ type: "WISH", name: "n", content: "c" }] },
          "conscience_values.0.type: must be one of BOUNDARY, FEAR, COMMITMENT, BELIEF, HOPE"
        ],
        [
          { card_json: cardFor("someone-else", "card-bad"), conscience_values: [] },
          `card_json.agent_id: must be the agent of the path (${agentA})`
        ],
        ["{not json", "not valid JSON"]
      ]
      for (const [body, field] of cases) {
        const response = yield* api.call("PATCH", `/v1/agents/${agentA}/card`, { token: api.serviceRoleKey, body })
        expect(response.status, field).toBe(400)
        expect(Object.keys(response.body)).toEqual(["error"])
        expect(response.body.error).toContain(field)
      }
    })
  )

  it.effect(
    "PUT conscience-values stores them for Owners and Admins and tells the gateways; an empty list restores the defaults",
    () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const store = yield* Store
        const state = yield* AgentState
        const { admin, orgAgent, orgId } = api.fixtures
        const response = yield* api.call("PUT", `/v1/agents/${orgAgent}/conscience-values`, {
          token: admin.token,
          body: { conscience_values: values }
        })
        expect(response).toMatchObject({ status: 200 })
        expect(response.body).toEqual({ agent_id: orgAgent, conscience_values: values, updated: true })
        expect(yield* store.conscienceValues(orgAgent)).toEqual(values)
        expect((yield* state.get(orgAgent)).conscienceValues).toEqual([...DEFAULT_CONSCIENCE_VALUES, ...values])

        const adminKey = yield* api.createApiKey(admin.userId, { orgId, role: "admin" })
        const reset = yield* api.call("PUT", `/v1/agents/${orgAgent}/conscience-values`, {
          apiKey: adminKey,
          body: { conscience_values: [] }
        })
        expect(reset.body).toEqual({ agent_id: orgAgent, conscience_values: [], updated: true })
        expect(yield* store.conscienceValues(orgAgent)).toEqual([])
        expect((yield* state.get(orgAgent)).conscienceValues).toEqual(DEFAULT_CONSCIENCE_VALUES)
      })
  )

  it.effect(
    "PUT conscience-values: 403 for read-only roles, 404 for agents not visible, 400 naming the field, 401 without credentials",
    () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const { agentA, member, orgAgent, orgId, userA, userB } = api.fixtures
        const body = { conscience_values: values }
        const memberKey = yield* api.createApiKey(member.userId, { orgId, role: "member" })
        for (const credential of [{ token: member.token }, { apiKey: memberKey }]) {
          const refused = yield* api.call("PUT", `/v1/agents/${orgAgent}/conscience-values`, { ...credential, body })
          expect(refused.status).toBe(403)
          expect(Object.keys(refused.body)).toEqual(["error"])
        }
        for (const [token, agent] of [
          [userB.token, agentA],
          [userA.token, orgAgent]
        ] as const) {
          expect((yield* api.call("PUT", `/v1/agents/${agent}/conscience-values`, { token, body })).status).toBe(404)
        }
        const bad = yield* api.call("PUT", `/v1/agents/${agentA}/conscience-values`, {
          token: userA.token,
          body: { conscience_values: [{ type: "BOUNDARY", name: "", content: "c" }] }
        })
        expect(bad.status).toBe(400)
        expect(bad.body.error).toContain("conscience_values.0.name")
        const missing = yield* api.call("PUT", `/v1/agents/${agentA}/conscience-values`, {
          token: userA.token,
          body: {}
        })
        expect(missing).toMatchObject({ status: 400, body: { error: expect.stringContaining("conscience_values") } })
        expect((yield* api.call("PUT", `/v1/agents/${agentA}/conscience-values`, { body })).status).toBe(401)
        // The owner of a personal agent may write it.
        expect(
          (yield* api.call("PUT", `/v1/agents/${agentA}/conscience-values`, { token: userA.token, body })).status
        ).toBe(200)
      })
  )
})
