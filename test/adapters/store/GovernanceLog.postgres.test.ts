/**
 * The governance logs on PostgreSQL under real concurrency: appends racing on one log from a pool of
 * connections get consecutive indexes (the head row lock), every stored head verifies, and an append
 * that fails with its transaction leaves no entry behind.
 */
import { expect } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { SigningKeys } from "../../../adapters/keys/SigningKeys.js"
import * as GovernanceLog from "../../../adapters/store/GovernanceLog.js"
import * as StoreDatabase from "../../../adapters/store/StoreDatabase.js"
import { transaction } from "../../../adapters/store/Transaction.js"
import { agentGovernanceLog, verifyGovernanceEntry } from "../../../core/Governance.js"
import { generateSigningKey } from "../../../core/Signing.js"
import { layerIntegration } from "../../support/Integration.js"
import { throwawayDatabase } from "../../support/Postgres.js"
import * as SecretKeys from "../../../adapters/keys/SecretKeys.js"

const key = generateSigningKey()

const Live = Layer.unwrapScoped(
  Effect.map(throwawayDatabase, (url) =>
    GovernanceLog.layer({ logOrigin: "candor.test" }).pipe(
      Layer.provideMerge(
        StoreDatabase.layer({ databaseUrl: Option.some(url), dataDir: "unused" }).pipe(
          Layer.provide(SecretKeys.layerEphemeral)
        )
      ),
      Layer.provideMerge(SigningKeys.fromKey(key))
    )
  )
)

const draft = (i: number) => ({
  action: "enforcement.mode" as const,
  actor: "u1",
  previous_state: { mode: "observe" },
  new_state: { mode: i % 2 === 0 ? "enforce" : "nudge" }
})

layerIntegration("postgres", Live, { timeout: "60 seconds" })("GovernanceLog on PostgreSQL", (it) => {
  it.effect("racing appends on one log get consecutive indexes and verifying heads", () =>
    Effect.gen(function* () {
      const logs = yield* GovernanceLog.GovernanceLog
      const log = agentGovernanceLog("agent-race")
      const entries = yield* Effect.forEach(
        Array.from({ length: 24 }, (_, i) => i),
        (i) => logs.append(log, draft(i)),
        {
          concurrency: 8
        }
      )
      expect(entries.map((entry) => entry.index).sort((a, b) => a - b)).toEqual(Array.from({ length: 24 }, (_, i) => i))
      const origin = logs.origin(log)
      for (const entry of entries) {
        const head = (yield* logs.treeHead(log, 24))!
        const path = (yield* logs.inclusionProof(log, entry.index, 24))!
        expect(
          verifyGovernanceEntry({
            record: entry.record,
            index: entry.index,
            auditPath: path,
            signedTreeHead: head.note,
            verifiers: [{ name: origin, publicKey: key.publicKey }]
          })
        ).toEqual({ ok: true })
      }
    })
  )

  it.effect("an append rolled back with its transaction leaves the log as it was", () =>
    Effect.gen(function* () {
      const logs = yield* GovernanceLog.GovernanceLog
      const sql = yield* SqlClient.SqlClient
      const log = agentGovernanceLog("agent-rollback")
      yield* logs.append(log, draft(0))
      const failed = yield* transaction(sql, Effect.zipRight(logs.append(log, draft(1)), Effect.fail("refused"))).pipe(
        Effect.flip
      )
      expect(failed).toBe("refused")
      const { entries, size } = yield* logs.entries(log, 0, 10)
      expect(size).toBe(1)
      expect(entries).toHaveLength(1)
      expect((yield* logs.append(log, draft(2))).index).toBe(1)
    })
  )
})
