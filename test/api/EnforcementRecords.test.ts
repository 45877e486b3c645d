/**
 * GET /v1/agents/{agent_id}/enforcement-records over HTTP: an agent's records newest first, filtered
 * by kind and time, paged with the total; Members of the agent's organization read them, another
 * organization sees no such agent (404), and bad parameters are 400s naming the field.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { randomUUID } from "node:crypto"
import { Store } from "../../adapters/store/Store.js"
import { ApiHarness, layer as harness } from "./Support.js"

const at = (minute: number) => `2026-11-01T00:${String(minute).padStart(2, "0")}:00.000Z`

const record = (agentId: string, kind: string, minute: number) => ({
  record: {
    record_id: `enf-${randomUUID()}`,
    agent_id: agentId,
    kind,
    rule: "containment",
    reason: kind === "blocked" ? "agent_paused" : "investigating",
    session_id: "ses-1",
    actor: kind === "blocked" ? "gateway" : "user-1",
    created_at: at(minute)
  }
})

layer(harness(), { timeout: "90 seconds" })("enforcement records API", (it) => {
  it.effect("lists an agent's records newest first, by kind and time, a page at a time with the total", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { agentB, member, orgAgent } = api.fixtures
      const drafts = [record(orgAgent, "paused", 1), record(orgAgent, "blocked", 2), record(orgAgent, "blocked", 3)]
      yield* (yield* Store).recordEnforcements([...drafts, record(agentB, "blocked", 4)])
      const list = (query: string) =>
        api.call("GET", `/v1/agents/${orgAgent}/enforcement-records${query}`, { token: member.token })

      const all = yield* list("")
      expect(all).toMatchObject({ status: 200 })
      expect(all.body).toEqual({
        records: [drafts[2]!.record, drafts[1]!.record, drafts[0]!.record],
        total: 3,
        limit: 100,
        offset: 0
      })
      expect((yield* list("?kind=blocked&limit=1&offset=1")).body).toEqual({
        records: [drafts[1]!.record],
        total: 2,
        limit: 1,
        offset: 1
      })
      expect((yield* list(`?from=${at(2)}&to=${at(3)}`)).body).toMatchObject({ records: [drafts[1]!.record], total: 1 })
      // An open enum: a kind nothing wrote yet is an empty page, not an error.
      expect((yield* list("?kind=quarantined")).body).toMatchObject({ records: [], total: 0 })
    })
  )

  it.effect("400 naming the parameter for a limit outside 1..1000, a bad kind, time or range", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { member, orgAgent } = api.fixtures
      for (const query of ["limit=0", "limit=1001", "limit=abc", "offset=-1", "kind=Blocked!", "from=yesterday"]) {
        const response = yield* api.call("GET", `/v1/agents/${orgAgent}/enforcement-records?${query}`, {
          token: member.token
        })
        expect(response.status, query).toBe(400)
        expect(Object.keys(response.body)).toEqual(["error"])
        expect(response.body.error, query).toContain(query.split("=")[0])
      }
      const range = yield* api.call("GET", `/v1/agents/${orgAgent}/enforcement-records?from=${at(3)}&to=${at(3)}`, {
        token: member.token
      })
      expect(range).toMatchObject({ status: 400, body: { error: "from: must be before to" } })
      expect(
        (yield* api.call("GET", `/v1/agents/${orgAgent}/enforcement-records?limit=1000`, { token: member.token }))
          .status
      ).toBe(200)
    })
  )

  it.effect("keeps tenants apart: another organization's member gets 404, no credentials 401", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { orgAgent, userB } = api.fixtures
      const hidden = yield* api.call("GET", `/v1/agents/${orgAgent}/enforcement-records`, { token: userB.token })
      expect(hidden).toMatchObject({ status: 404, body: { error: `agent ${orgAgent} not found` } })
      expect((yield* api.call("GET", `/v1/agents/${orgAgent}/enforcement-records`)).status).toBe(401)
    })
  )
})
