/**
 * The approvals' expiry sweep (streams/ApprovalExpiry.ts) on PGlite with the TestClock: an approval
 * nobody waits for becomes `expired` at the first sweep after its `expires_at`, not before, and one
 * still in time stays pending.
 */
import { expect, layer } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"
import { ApprovalSignal } from "../../adapters/bus/ApprovalSignal.js"
import { SigningKeys } from "../../adapters/keys/SigningKeys.js"
import * as SecretKeys from "../../adapters/keys/SecretKeys.js"
import * as ApprovalRepo from "../../adapters/store/ApprovalRepo.js"
import * as GovernanceLog from "../../adapters/store/GovernanceLog.js"
import * as SqlStore from "../../adapters/store/SqlStore.js"
import { generateSigningKey } from "../../core/Signing.js"
import * as Approvals from "../../services/Approvals.js"
import { runExpiry } from "../../streams/ApprovalExpiry.js"
import { migratedPglite } from "../support/PgliteTemplate.js"

const World = Approvals.layer.pipe(
  Layer.provideMerge(
    Layer.mergeAll(GovernanceLog.layer({ logOrigin: "candor.test" }), ApprovalRepo.layer, ApprovalSignal.layerMemory)
  ),
  Layer.provideMerge(
    Layer.mergeAll(
      SqlStore.layer.pipe(Layer.provide(SecretKeys.layerEphemeral), Layer.provideMerge(migratedPglite)),
      SigningKeys.fromKey(generateSigningKey())
    )
  )
)

/** The stored status, read without the service's lazy expiry, once the sweep's I/O has run. */
const storedStatus = (approvalId: string, until: string) =>
  Effect.gen(function* () {
    const repo = yield* ApprovalRepo.ApprovalRepo
    // The sweep's queries are real I/O: give the event loop turns until it shows, at most 500.
    for (let turn = 0; turn < 500; turn++) {
      const status = (yield* repo.get(approvalId))?.status
      if (status === until) return status
      yield* Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))
    }
    return (yield* repo.get(approvalId))?.status
  })

layer(World, { timeout: "60 seconds" })("approval expiry sweep", (it) => {
  it.scoped("expires what nobody waits for at the first sweep past expires_at", () =>
    Effect.gen(function* () {
      const approvals = yield* Approvals.Approvals
      const request = (seconds: number) =>
        approvals.request({
          agent_id: "agt-sweep",
          org_id: "org-sweep",
          tool: "t",
          arguments_hash: "0".repeat(64),
          reason: "r",
          timeout: Duration.seconds(seconds)
        })
      const due = yield* request(20)
      const later = yield* request(600)
      yield* runExpiry("15 seconds")
      yield* TestClock.adjust("15 seconds")
      expect(yield* storedStatus(due.approval_id, "pending")).toBe("pending")
      yield* TestClock.adjust("15 seconds")
      expect(yield* storedStatus(due.approval_id, "expired")).toBe("expired")
      expect((yield* (yield* ApprovalRepo.ApprovalRepo).get(later.approval_id))?.status).toBe("pending")
    })
  )
})
