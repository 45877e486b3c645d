/**
 * Scoped transactions over HTTP: open (201, the merged policy, the gateways told, the governance
 * entry), read, list with a status filter, close (completed, 409 once ended), expiry on the (test)
 * clock, the limit of open transactions, every bad input a 400 naming the field, and the roles
 * (writers of the agent's policy open and close, readers read, other organizations get 404).
 */
import { describe, expect, layer } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"
import { AgentState } from "../../adapters/bus/AgentState.js"
import { GovernanceLog } from "../../adapters/store/GovernanceLog.js"
import { policyHash } from "../../core/Commitments.js"
import { agentGovernanceLog } from "../../core/Governance.js"
import { transactionPolicy, withUnsetDefaultsLoosest } from "../../core/ScopedTransaction.js"
import { decodePolicy, type Policy } from "../../core/schema/Policy.js"
import { TRANSACTION_LIMITS } from "../../core/schema/ScopedTransaction.js"
import { ApiHarness, layer as harness } from "./Support.js"

/** The test clock at least at the real time, never back (the API's rate limiter must not see time run backwards). */
const realTime = Effect.flatMap(Clock.currentTimeMillis, (at) => TestClock.setTime(Math.max(at, Date.now())))

const AGENT_POLICY = {
  capability_mappings: { reading: { tools: ["db_*"], card_actions: ["read"] } },
  forbidden: [{ pattern: "shell_*", reason: "no shells" }],
  defaults: { enforcement_mode: "warn", unmapped_tool_action: "allow" }
}

const policyOf = (encoded: unknown): Policy => {
  const decoded = decodePolicy(encoded)
  if (decoded._tag === "Left") throw new Error(decoded.left.message)
  return decoded.right
}

/** A fresh agent of the fixtures' organization, with a policy of its own. */
const orgAgentWithPolicy = Effect.gen(function* () {
  const api = yield* ApiHarness
  const { orgId, owner } = api.fixtures
  const agentId = yield* api.claimAgent({ userId: owner.userId, orgId })
  const put = yield* api.call("PUT", `/v1/agents/${agentId}/policy`, { token: owner.token, body: AGENT_POLICY })
  expect(put.status).toBe(200)
  return agentId
})

const governance = (agentId: string) =>
  Effect.flatMap(GovernanceLog, (log) => log.entries(agentGovernanceLog(agentId), 0, 100)).pipe(
    Effect.orDie,
    Effect.map(({ entries }) => entries.filter((e) => e.record.action.startsWith("transaction.")))
  )

layer(harness(), { timeout: "120 seconds" })("scoped transactions API", (it) => {
  describe("POST /v1/transactions, GET, DELETE", () => {
    it.effect("opens with the merged policy, tells the gateways, records it; closes once", () =>
      Effect.gen(function* () {
        yield* realTime
        const api = yield* ApiHarness
        const state = yield* AgentState
        const { admin, owner } = api.fixtures
        const agentId = yield* orgAgentWithPolicy
        const extra = { defaults: { enforcement_mode: "enforce" } }
        const opened = yield* api.call("POST", "/v1/transactions", {
          token: admin.token,
          body: {
            agent_id: agentId,
            action_type: "refund",
            tools: ["db_read", "issue_refund", "db_read"],
            duration_hours: 2,
            policy: extra
          }
        })
        expect(opened.status, JSON.stringify(opened.body)).toBe(201)
        const now = yield* Clock.currentTimeMillis
        const record = opened.body
        expect(record).toMatchObject({
          agent_id: agentId,
          action_type: "refund",
          tools: ["db_read", "issue_refund"],
          status: "active",
          created_by: admin.userId,
          created_at: new Date(now).toISOString(),
          expires_at: new Date(now + 2 * 3_600_000).toISOString(),
          ended_at: null,
          ended_by: null
        })
        expect(record.transaction_id).toMatch(/^txn-[0-9a-f-]{36}$/)
        const agentPolicy = (yield* api.call("GET", `/v1/agents/${agentId}/policy/resolved`, { token: owner.token }))
          .body.resolved_policy
        expect(record.merged_policy).toEqual(
          transactionPolicy(
            policyOf(agentPolicy),
            ["db_read", "issue_refund"],
            withUnsetDefaultsLoosest(policyOf({ ...extra, meta: { schema_version: "1.0", scope: "agent" } }), extra)
          )
        )
        // Only what the transaction's policy sets tightens: the defaults it leaves out are at their loosest.
        expect(record.policy.defaults).toEqual({
          enforcement_mode: "enforce",
          unmapped_tool_action: "allow",
          unmapped_severity: "low",
          fail_open: true,
          grace_period_hours: 8760
        })
        expect(record.merged_policy.defaults).toMatchObject({
          enforcement_mode: "enforce",
          unmapped_tool_action: "deny"
        })

        // The gateways hold the open transaction with the agent's settings.
        expect((yield* state.get(agentId)).transactions).toEqual([
          {
            transaction_id: record.transaction_id,
            tools: ["db_read", "issue_refund"],
            policy: record.policy,
            expires_at: record.expires_at
          }
        ])

        const path = `/v1/transactions/${record.transaction_id}`
        expect(yield* api.call("GET", path, { token: api.fixtures.member.token })).toMatchObject({
          status: 200,
          body: record
        })
        const listed = yield* api.call("GET", `/v1/agents/${agentId}/transactions`, { token: owner.token })
        expect(listed.body).toEqual({ agent_id: agentId, transactions: [record] })

        const opening = yield* governance(agentId)
        expect(opening.map((e) => e.record)).toMatchObject([
          {
            action: "transaction.open",
            actor: admin.userId,
            previous_state: null,
            new_state: {
              transaction_id: record.transaction_id,
              action_type: "refund",
              tools: ["db_read", "issue_refund"],
              expires_at: record.expires_at
            },
            hashes: { policy_hash: policyHash(record.merged_policy) }
          }
        ])

        const closed = yield* api.call("DELETE", path, { token: owner.token })
        expect(closed.status).toBe(200)
        expect(closed.body).toEqual({
          ...record,
          status: "completed",
          ended_at: new Date(now).toISOString(),
          ended_by: owner.userId
        })
        expect((yield* api.call("GET", path, { token: owner.token })).body.status).toBe("completed")
        expect((yield* state.get(agentId)).transactions).toEqual([])
        expect(yield* api.call("DELETE", path, { token: owner.token })).toEqual(
          expect.objectContaining({
            status: 409,
            body: { error: `transaction ${record.transaction_id} is already completed` }
          })
        )
        const entries = yield* governance(agentId)
        expect(entries.map((e) => [e.record.action, e.record.actor, e.record.new_state])).toEqual([
          ["transaction.open", admin.userId, expect.anything()],
          ["transaction.close", owner.userId, { transaction_id: record.transaction_id, status: "completed" }]
        ])
      })
    )

    it.effect("expires on the clock: GET says expired, DELETE is 409, the list filters by status", () =>
      Effect.gen(function* () {
        yield* realTime
        const api = yield* ApiHarness
        const key = api.serviceRoleKey
        const agentId = yield* orgAgentWithPolicy
        const open = (hours: number) =>
          Effect.map(
            api.call("POST", "/v1/transactions", {
              token: key,
              body: { agent_id: agentId, action_type: "export", tools: ["db_read"], duration_hours: hours }
            }),
            (res) => {
              expect(res.status).toBe(201)
              return res.body.transaction_id as string
            }
          ).pipe(Effect.tap(() => TestClock.adjust("1 second"))) // newest first: each a second apart
        const short = yield* open(1)
        const long = yield* open(3)
        const ended = yield* open(3)
        expect((yield* api.call("DELETE", `/v1/transactions/${ended}`, { token: key })).status).toBe(200)

        const expiresAt = Date.parse(
          (yield* api.call("GET", `/v1/transactions/${short}`, { token: key })).body.expires_at
        )
        yield* TestClock.setTime(expiresAt - 1)
        expect((yield* api.call("GET", `/v1/transactions/${short}`, { token: key })).body.status).toBe("active")
        yield* TestClock.setTime(expiresAt)
        const read = yield* api.call("GET", `/v1/transactions/${short}`, { token: key })
        expect(read.body.status).toBe("expired")
        const refused = yield* api.call("DELETE", `/v1/transactions/${short}`, { token: key })
        expect(refused).toMatchObject({ status: 409, body: { error: expect.stringContaining("is already expired") } })

        const ids = (status?: string) =>
          Effect.map(
            api.call("GET", `/v1/agents/${agentId}/transactions${status === undefined ? "" : `?status=${status}`}`, {
              token: key
            }),
            (res) => res.body.transactions.map((t: { transaction_id: string }) => t.transaction_id)
          )
        expect(yield* ids()).toEqual([ended, long, short])
        expect(yield* ids("active")).toEqual([long])
        expect(yield* ids("expired")).toEqual([short])
        expect(yield* ids("completed")).toEqual([ended])
        expect(yield* api.call("GET", `/v1/agents/${agentId}/transactions?status=open`, { token: key })).toMatchObject({
          status: 400,
          body: { error: expect.stringContaining("status") }
        })
      })
    )

    it.effect(`at most ${TRANSACTION_LIMITS.maxActivePerAgent} open per agent (409, nothing stored)`, () =>
      Effect.gen(function* () {
        yield* realTime
        const api = yield* ApiHarness
        const key = api.serviceRoleKey
        const agentId = yield* orgAgentWithPolicy
        const body = { agent_id: agentId, action_type: "bulk", tools: ["db_read"], duration_hours: 1 }
        for (let i = 0; i < TRANSACTION_LIMITS.maxActivePerAgent; i++)
          expect((yield* api.call("POST", "/v1/transactions", { token: key, body })).status).toBe(201)
        const refused = yield* api.call("POST", "/v1/transactions", { token: key, body })
        expect(refused).toMatchObject({ status: 409, body: { error: expect.stringContaining("close one first") } })
        const listed = yield* api.call("GET", `/v1/agents/${agentId}/transactions`, { token: key })
        expect(listed.body.transactions).toHaveLength(TRANSACTION_LIMITS.maxActivePerAgent)
        expect((yield* governance(agentId)).length).toBe(TRANSACTION_LIMITS.maxActivePerAgent)
        expect((yield* (yield* AgentState).get(agentId)).transactions).toHaveLength(
          TRANSACTION_LIMITS.maxActivePerAgent
        )
      })
    )
  })

  describe("errors and roles", () => {
    it.effect("every bad input is a 400 naming the field; an unknown agent or transaction is 404", () =>
      Effect.gen(function* () {
        yield* realTime
        const api = yield* ApiHarness
        const { orgAgent, owner } = api.fixtures
        const base = { agent_id: orgAgent, action_type: "refund", tools: ["issue_refund"], duration_hours: 1 }
        const cases: ReadonlyArray<readonly [Record<string, unknown>, number, string]> = [
          [{ duration_hours: 0 }, 400, "duration_hours: must be a whole number of hours from 1 to 24"],
          [{ duration_hours: 25 }, 400, "duration_hours: must be a whole number of hours from 1 to 24"],
          [{ duration_hours: 1.5 }, 400, "duration_hours: must be a whole number of hours from 1 to 24"],
          [{ duration_hours: "2" }, 400, "duration_hours"],
          [{ duration_hours: undefined }, 400, "duration_hours"],
          [{ tools: [] }, 400, "tools: must list 1 to 64 tool names"],
          [{ tools: Array.from({ length: 65 }, (_, i) => `t${i}`) }, 400, "tools: must list 1 to 64 tool names"],
          [{ tools: ["db_*"] }, 400, "tools.0: must be a tool name"],
          [{ tools: "issue_refund" }, 400, "tools"],
          [{ action_type: "  " }, 400, "action_type: must be 1 to 128 characters"],
          [{ action_type: "x".repeat(129) }, 400, "action_type: must be 1 to 128 characters"],
          [{ agent_id: undefined }, 400, "agent_id"],
          [{ policy: { forbiden: [] } }, 400, "policy.forbiden: is unexpected"],
          [
            { policy: { forbidden: [{ pattern: "", reason: "x" }] } },
            400,
            "policy.forbidden[0].pattern: tool pattern must not be empty"
          ],
          [{ policy: { meta: { schema_version: "1.0", scope: "org" } } }, 400, 'policy.meta.scope: must be "agent"'],
          [{ policy: [] }, 400, "policy: must be a JSON object"],
          [
            {
              policy: {
                forbidden: Array.from({ length: 800 }, (_, i) => ({ pattern: `tool_${i}`, reason: "r".repeat(80) }))
              }
            },
            400,
            "policy: must be at most 65536 bytes"
          ],
          [
            { policy: { forbidden: Array.from({ length: 1001 }, (_, i) => ({ pattern: `t${i}`, reason: "" })) } },
            400,
            "policy: the policy has 1001 rules"
          ],
          [{ agent_id: "agt-nobody" }, 404, "agent agt-nobody not found"]
        ]
        for (const [patch, status, error] of cases) {
          const res = yield* api.call("POST", "/v1/transactions", {
            token: api.serviceRoleKey,
            body: { ...base, ...patch }
          })
          expect(res.status, JSON.stringify(patch).slice(0, 80)).toBe(status)
          expect(res.body.error).toContain(error)
        }
        expect(yield* api.call("GET", "/v1/transactions/txn-none", { token: owner.token })).toMatchObject({
          status: 404,
          body: { error: "transaction txn-none not found" }
        })
        expect((yield* api.call("DELETE", "/v1/transactions/txn-none", { token: owner.token })).status).toBe(404)
        expect(
          (yield* api.call("GET", "/v1/agents/agt-nobody/transactions", { token: api.serviceRoleKey })).status
        ).toBe(404)
      })
    )

    it.effect("writers of the agent's policy open and close, readers read, others see nothing", () =>
      Effect.gen(function* () {
        yield* realTime
        const api = yield* ApiHarness
        const { admin, member, orgAgent, owner, userB } = api.fixtures
        const body = { agent_id: orgAgent, action_type: "refund", tools: ["issue_refund"], duration_hours: 1 }
        const post = (token: string) => api.call("POST", "/v1/transactions", { token, body })
        expect((yield* post(member.token)).status).toBe(403)
        expect((yield* post(userB.token)).status).toBe(404)
        const opened = yield* post(admin.token)
        expect(opened.status).toBe(201)
        const path = `/v1/transactions/${opened.body.transaction_id}`
        expect((yield* api.call("GET", path, { token: member.token })).status).toBe(200)
        expect(yield* api.call("GET", path, { token: userB.token })).toMatchObject({
          status: 404,
          body: { error: `transaction ${opened.body.transaction_id} not found` }
        })
        expect((yield* api.call("GET", `/v1/agents/${orgAgent}/transactions`, { token: userB.token })).status).toBe(404)
        expect((yield* api.call("DELETE", path, { token: userB.token })).status).toBe(404)
        expect((yield* api.call("DELETE", path, { token: member.token })).status).toBe(403)
        expect((yield* api.call("GET", path, { token: member.token })).body.status).toBe("active")
        expect((yield* api.call("DELETE", path, { token: owner.token })).status).toBe(200)
        expect((yield* api.call("POST", "/v1/transactions", { body })).status).toBe(401)
      })
    )
  })
})
