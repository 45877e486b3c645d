/**
 * The governance logs over HTTP: entries appended (as the governance routes do, in a transaction) are
 * served in index order with the signed tree head; each entry's inclusion proof and the consistency
 * between two heads verify with core's verifiers and the signing key alone, and `candor verify`'s
 * check accepts a saved proof and rejects a tampered one. Readers of the agent or organization only.
 * Reclassification entries signed before `hashes.chain_hash` keep `hashes.certificate_hash` and verify.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { SigningKeys } from "../../adapters/keys/SigningKeys.js"
import { GovernanceLog } from "../../adapters/store/GovernanceLog.js"
import { fromHex } from "../../core/Bytes.js"
import { agentGovernanceLog, orgGovernanceLog, verifyGovernanceEntry } from "../../core/Governance.js"
import { verifyConsistency } from "../../core/Merkle.js"
import { verifyGovernanceProof } from "../../src/cli/Verify.js"
import { ApiHarness, layer as harness, TEST_LOG_ORIGIN } from "./Support.js"

const hashes = (hex: ReadonlyArray<string>) => hex.map((h) => fromHex(h)!)

layer(harness(), { timeout: "90 seconds" })("governance logs", (it) => {
  it.effect("serves entries with a signed head; every inclusion proof and consistency verifies offline", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const logs = yield* GovernanceLog
      const key = (yield* SigningKeys).active
      const { agentA, userA, userB } = api.fixtures
      const log = agentGovernanceLog(agentA)
      // Concurrent appends get consecutive indexes: the head row is locked while appending.
      const appended = yield* Effect.forEach(
        Array.from({ length: 7 }, (_, i) => i),
        (i) =>
          logs.append(log, {
            action: i % 2 === 0 ? "containment.pause" : "containment.resume",
            actor: userA.userId,
            reason: `step ${i}`,
            previous_state: { status: i % 2 === 0 ? "active" : "paused" },
            new_state: { status: i % 2 === 0 ? "paused" : "active" }
          }),
        { concurrency: "unbounded" }
      )
      expect(appended.map((entry) => entry.index).sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6])

      const page = yield* api.call("GET", `/v1/agents/${agentA}/governance-log?limit=5`, { token: userA.token })
      expect(page.status).toBe(200)
      expect(page.body).toMatchObject({
        origin: `${TEST_LOG_ORIGIN}/agents/${agentA}/governance`,
        tree_size: 7,
        offset: 0,
        limit: 5
      })
      expect(page.body.entries.map((entry: { index: number }) => entry.index)).toEqual([0, 1, 2, 3, 4])
      expect(page.body.signed_tree_head.startsWith(`${TEST_LOG_ORIGIN}/agents/${agentA}/governance\n7\n`)).toBe(true)

      const verifiers = [{ name: page.body.origin, publicKey: key.publicKey }]
      for (let index = 0; index < 7; index++) {
        const proof = yield* api.call("GET", `/v1/agents/${agentA}/governance-log/${index}/inclusion-proof`, {
          token: userA.token
        })
        expect(proof.status).toBe(200)
        expect(
          verifyGovernanceEntry({
            record: proof.body.record,
            index,
            auditPath: proof.body.audit_path,
            signedTreeHead: proof.body.signed_tree_head,
            verifiers
          })
        ).toEqual({ ok: true })
        expect(verifyGovernanceProof(proof.body, [key], undefined).valid).toBe(true)
      }

      // An entry against an older head, and the proof that the log only grew since.
      const old = yield* api.call("GET", `/v1/agents/${agentA}/governance-log/2/inclusion-proof?tree_size=3`, {
        token: userA.token
      })
      expect(old.body.tree_size).toBe(3)
      expect(verifyGovernanceProof(old.body, [key], undefined).valid).toBe(true)
      const consistency = yield* api.call("GET", `/v1/agents/${agentA}/governance-log/consistency-proof?from=3&to=7`, {
        token: userA.token
      })
      expect(consistency.status).toBe(200)
      expect(
        verifyConsistency({
          size1: 3,
          size2: 7,
          proof: hashes(consistency.body.proof),
          root1: fromHex(consistency.body.from.root)!,
          root2: fromHex(consistency.body.to.root)!
        })
      ).toBe(true)
      expect(consistency.body.to.signed_tree_head).toBe(page.body.signed_tree_head)

      // A changed record, a head of another log, a foreign key: each is refused.
      const proof = (yield* api.call("GET", `/v1/agents/${agentA}/governance-log/4/inclusion-proof`, {
        token: userA.token
      })).body
      const tampered = { ...proof, record: { ...proof.record, actor: "someone-else" } }
      expect(verifyGovernanceProof(tampered, [key], undefined).valid).toBe(false)
      expect(verifyGovernanceProof(proof, [{ publicKey: new Uint8Array(32).fill(7) }], undefined).valid).toBe(false)

      // Not a reader: 404, as for any agent it may not see.
      const foreign = yield* api.call("GET", `/v1/agents/${agentA}/governance-log`, { token: userB.token })
      expect(foreign.status).toBe(404)
      expect(Object.keys(foreign.body)).toEqual(["error"])
    })
  )

  it.effect("a reclassification entry signed before the chain_hash rename keeps certificate_hash and verifies", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const logs = yield* GovernanceLog
      const key = (yield* SigningKeys).active
      const { agentB, userB } = api.fixtures
      const chainHash = "ab".repeat(32)
      // The old format, as entries written before issue 27 hold it: the chain hash as `certificate_hash`.
      const old = yield* logs.append(agentGovernanceLog(agentB), {
        action: "reclassification.create",
        actor: userB.userId,
        reason: "signed before the rename",
        previous_state: { checkpoint_id: "chk-old", verdict: "boundary_violation" },
        new_state: { reclassification_id: "rcl-old", checkpoint_id: "chk-old", new_type: "card_gap" },
        hashes: { certificate_hash: chainHash }
      })
      const current = yield* logs.append(agentGovernanceLog(agentB), {
        action: "reclassification.create",
        actor: userB.userId,
        reason: "signed after the rename",
        previous_state: { checkpoint_id: "chk-new", verdict: "boundary_violation" },
        new_state: { reclassification_id: "rcl-new", checkpoint_id: "chk-new", new_type: "card_gap" },
        hashes: { chain_hash: chainHash }
      })
      for (const [entry, hashes] of [
        [old, { certificate_hash: chainHash }],
        [current, { chain_hash: chainHash }]
      ] as const) {
        const proof = yield* api.call("GET", `/v1/agents/${agentB}/governance-log/${entry.index}/inclusion-proof`, {
          token: userB.token
        })
        expect(proof.status).toBe(200)
        // Served as signed: the field keeps its name, and no other is added.
        expect(proof.body.record.hashes).toEqual(hashes)
        expect(proof.body.leaf_hash).toBe(entry.leaf_hash)
        expect(
          verifyGovernanceEntry({
            record: proof.body.record,
            index: entry.index,
            auditPath: proof.body.audit_path,
            signedTreeHead: proof.body.signed_tree_head,
            verifiers: [{ name: proof.body.origin, publicKey: key.publicKey }]
          })
        ).toEqual({ ok: true })
        expect(verifyGovernanceProof(proof.body, [key], undefined).valid).toBe(true)
        // Renaming the field of a signed entry breaks its leaf: each name is checked as signed.
        const renamed = Object.fromEntries(
          Object.entries(hashes).map(([name, value]) => [
            name === "chain_hash" ? "certificate_hash" : "chain_hash",
            value
          ])
        )
        const altered = { ...proof.body, record: { ...proof.body.record, hashes: renamed } }
        expect(verifyGovernanceProof(altered, [key], undefined).valid).toBe(false)
      }
    })
  )

  it.effect("an organization's log: members read it, others get 404; bad sizes are 400 or 404", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const logs = yield* GovernanceLog
      const { member, orgId, userB } = api.fixtures
      const empty = yield* api.call("GET", `/v1/orgs/${orgId}/governance-log`, { token: member.token })
      expect(empty.body).toMatchObject({ tree_size: 0, root: null, signed_tree_head: null, entries: [] })
      yield* logs.append(orgGovernanceLog(orgId), {
        action: "conscience.mode_change",
        actor: "service",
        previous_state: { mode: "augment", enabled: true },
        new_state: { mode: "replace", enabled: true }
      })
      const one = yield* api.call("GET", `/v1/orgs/${orgId}/governance-log`, { token: member.token })
      expect(one.body.tree_size).toBe(1)
      expect(one.body.entries[0].record).toMatchObject({ action: "conscience.mode_change", reason: null })
      expect((yield* api.call("GET", `/v1/orgs/${orgId}/governance-log`, { token: userB.token })).status).toBe(404)
      const past = yield* api.call("GET", `/v1/orgs/${orgId}/governance-log/1/inclusion-proof`, { token: member.token })
      expect(past.status).toBe(404)
      const bad = yield* api.call("GET", `/v1/orgs/${orgId}/governance-log/consistency-proof?from=0`, {
        token: member.token
      })
      expect(bad.status).toBe(400)
      expect(Object.keys(bad.body)).toEqual(["error"])
      expect((yield* api.call("GET", `/v1/orgs/${orgId}/governance-log`)).status).toBe(401)
    })
  )
})
