/**
 * Scoped transactions on PostgreSQL: the row and its governance entry stored together, the jsonb
 * policies read back as they were decoded, the status filters' timestamp comparisons at the
 * instant of expiry, and the close that only an open row takes.
 */
import { expect } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"
import { AgentState } from "../../adapters/bus/AgentState.js"
import { layerIntegration } from "../support/Integration.js"
import { ApiHarness, layer as harness } from "./Support.js"

const realTime = Effect.flatMap(Clock.currentTimeMillis, (at) => TestClock.setTime(Math.max(at, Date.now())))

layerIntegration("postgres", harness({ database: "postgres" }), { timeout: "90 seconds" })(
  "scoped transactions on PostgreSQL",
  (it) => {
    it.effect("open, read back, expire at expires_at, close only an open one", () =>
      Effect.gen(function* () {
        yield* realTime
        const api = yield* ApiHarness
        const token = api.fixtures.owner.token
        const agentId = yield* api.claimAgent({ userId: api.fixtures.owner.userId, orgId: api.fixtures.orgId })
        const open = (hours: number) =>
          api.call("POST", "/v1/transactions", {
            token,
            body: {
              agent_id: agentId,
              action_type: "refund",
              tools: ["issue_refund", "db_read"],
              duration_hours: hours,
              policy: { forbidden: [{ pattern: "db_write", reason: "read only", severity: "critical" }] }
            }
          })
        const short = yield* open(1)
        expect(short.status, JSON.stringify(short.body)).toBe(201)
        yield* TestClock.adjust("1 second")
        const long = yield* open(2)
        const read = yield* api.call("GET", `/v1/transactions/${short.body.transaction_id}`, { token })
        expect(read.body).toEqual(short.body)
        expect((yield* (yield* AgentState).get(agentId)).transactions?.map((t) => t.transaction_id)).toEqual([
          long.body.transaction_id,
          short.body.transaction_id
        ])

        yield* TestClock.setTime(Date.parse(short.body.expires_at))
        const statuses = (status: string) =>
          Effect.map(api.call("GET", `/v1/agents/${agentId}/transactions?status=${status}`, { token }), (res) =>
            res.body.transactions.map((t: { transaction_id: string }) => t.transaction_id)
          )
        expect(yield* statuses("expired")).toEqual([short.body.transaction_id])
        expect(yield* statuses("active")).toEqual([long.body.transaction_id])
        expect((yield* api.call("DELETE", `/v1/transactions/${short.body.transaction_id}`, { token })).status).toBe(409)
        const closed = yield* api.call("DELETE", `/v1/transactions/${long.body.transaction_id}`, { token })
        expect(closed.body).toMatchObject({ status: "completed", ended_by: api.fixtures.owner.userId })
        expect(yield* statuses("completed")).toEqual([long.body.transaction_id])
        expect((yield* (yield* AgentState).get(agentId)).transactions).toEqual([])
        const log = yield* api.call("GET", `/v1/agents/${agentId}/governance-log`, { token })
        expect(log.body.entries.map((e: { record: { action: string } }) => e.record.action)).toEqual([
          "transaction.open",
          "transaction.open",
          "transaction.close"
        ])
      })
    )
  }
)
