/**
 * The policy API on PostgreSQL (a throwaway database): `pg` runs concurrent requests on separate
 * connections, so concurrent writes to one owner's policy must still get distinct, consecutive
 * versions (the head row is locked while a version is allocated), each with its governance entry,
 * and the version in force is the last one.
 */
import { expect } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { GovernanceLog } from "../../adapters/store/GovernanceLog.js"
import { agentGovernanceLog } from "../../core/Governance.js"
import { layerIntegration } from "../support/Integration.js"
import { ApiHarness, layer as harness } from "./Support.js"

layerIntegration("postgres", harness({ database: "postgres" }), { timeout: "90 seconds" })(
  "policy API on PostgreSQL",
  (it) => {
    it.effect("concurrent PUTs and DELETEs: distinct consecutive versions, one governance entry each", () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const { agentA, userA } = api.fixtures
        const path = `/v1/agents/${agentA}/policy`
        const put = (i: number) =>
          api.call("PUT", path, {
            token: userA.token,
            body: { meta: { schema_version: "1.0", name: `p${i}` }, forbidden: [{ pattern: `t${i}`, reason: "r" }] }
          })
        const results = yield* Effect.all(
          Array.from({ length: 12 }, (_, i) => put(i)),
          { concurrency: "unbounded" }
        )
        expect(results.map((r) => r.status)).toEqual(results.map(() => 200))
        expect(results.map((r) => r.body.version).sort((a, b) => a - b)).toEqual(
          Array.from({ length: 12 }, (_, i) => i + 1)
        )
        const current = yield* api.call("GET", path, { token: userA.token })
        expect(current.body.version).toBe(12)

        const deletes = yield* Effect.all(
          [api.call("DELETE", path, { token: userA.token }), api.call("DELETE", path, { token: userA.token })],
          { concurrency: "unbounded" }
        )
        expect(deletes.map((r) => r.status).sort()).toEqual([204, 404])
        expect((yield* put(99)).body.version).toBe(13)

        const log = yield* Effect.orDie((yield* GovernanceLog).entries(agentGovernanceLog(agentA), 0, 100))
        expect(log.entries.map((e) => e.record.action)).toEqual([
          ...Array.from({ length: 12 }, () => "policy.put"),
          "policy.delete",
          "policy.put"
        ])
        // Each entry names the version it replaced: together they form one chain 1 → 2 → … → 13.
        const puts = log.entries.filter((e) => e.record.action === "policy.put").map((e) => e.record)
        expect(puts.map((r) => (r.new_state as { version: number }).version).sort((a, b) => a - b)).toEqual([
          ...Array.from({ length: 12 }, (_, i) => i + 1),
          13
        ])
      })
    )
  }
)
