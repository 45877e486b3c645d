/**
 * The public verification endpoints over real HTTP, on records the real actors made: shapes,
 * 404 for unknown ids and 400 naming the field, and that every answer verifies with core/ alone
 * (signatures with the listed keys, inclusion proofs against the signed roots at the newest and at an
 * older size, consistency between two signed tree heads, verdict proofs), and the certificate pages a
 * reputation is verified from.
 */
import { describe, expect, layer } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import { SigningKeys } from "../../adapters/keys/SigningKeys.js"
import { fromBase64, fromHex, toHex } from "../../core/Bytes.js"
import { canonicalBytes } from "../../core/Canonical.js"
import { taggedHash } from "../../core/Hash.js"
import { verifyCertificate } from "../../core/Certificate.js"
import { PROTOCOL_DISCLAIMER } from "../../core/schema/Disclaimer.js"
import { verifyConsistency, verifyInclusion } from "../../core/Merkle.js"
import { parseVerifierKey, verifyCheckpointNote } from "../../core/Note.js"
import { shouldProve } from "../../core/ProofSampling.js"
import { keyIdOf } from "../../core/Signing.js"
import { computeReputation, NO_COHERENCE } from "../../core/Reputation.js"
import { tallyCertificates } from "../../core/ReputationTally.js"
import { verifyReputation } from "../../core/ReputationVerification.js"
import { verifyVerdictProof } from "../../prover/VerdictProof.js"
import { ApiHarness } from "../api/Support.js"
import { commitEvents, eventually, originOf, review, violation, world } from "./Support.js"

const hexes = (list: ReadonlyArray<string>) => list.map((hex) => fromHex(hex)!)

layer(world(), { timeout: "120 seconds", excludeTestServices: true })("public verification API", (it) => {
  it.effect("GET /v1/keys lists the registered signing key, base64, with no credentials", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { active } = yield* SigningKeys
      const res = yield* api.call("GET", "/v1/keys")
      expect(res.status).toBe(200)
      expect(res.body.keys).toHaveLength(1)
      const [key] = res.body.keys
      expect(key).toEqual({
        key_id: active.keyId,
        algorithm: "Ed25519",
        public_key: Buffer.from(active.publicKey).toString("base64"),
        status: "active",
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        retired_at: null,
        expires_at: null
      })
      expect(keyIdOf(fromBase64(key.public_key)!)).toBe(key.key_id)
    })
  )

  it.effect(
    "certificates, Merkle roots and inclusion proofs verify with the listed keys, now and at an older size",
    () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const agentId = "agt-verify-merkle"
        const ids = yield* commitEvents(agentId, [[], [review], [violation], [], [], []])
        const keys = (yield* api.call("GET", "/v1/keys")).body.keys as Array<{ key_id: string; public_key: string }>
        const publicKey = fromBase64(keys[0]!.public_key)!
        const origin = originOf(agentId)

        const cert = yield* api.call("GET", `/v1/checkpoints/${ids[1]}/certificate`)
        expect(cert.status).toBe(200)
        expect(cert.body).toMatchObject({
          type: "IntegrityCertificate",
          subject: { checkpoint_id: ids[1], agent_id: agentId },
          chain: { position: 1 }
        })
        // The proof jobs run beside the test: a sampled checkpoint may already carry its verdict proof.
        expect(verifyCertificate(cert.body, { resolveKey: () => publicKey, verifyVerdictProof }).errors).toEqual([])

        const root = yield* api.call("GET", `/v1/agents/${agentId}/merkle-root`)
        expect(root.status).toBe(200)
        expect(root.body).toMatchObject({ agent_id: agentId, tree_size: 6, log_origin: origin })
        expect(root.body.checkpoint).toBe(root.body.signed_tree_head)
        const verifier = parseVerifierKey(root.body.note_verifier_key)!
        expect(verifier).toEqual({ name: origin, publicKey })
        const head = verifyCheckpointNote(root.body.signed_tree_head, [verifier], origin)!
        expect(head.size).toBe(6)
        expect(Buffer.from(head.root).toString("hex")).toBe(root.body.root)

        // At the newest size (the default) and at an older one, each against its own signed root.
        for (const [query, size] of [
          ["", 6],
          ["?tree_size=3", 3],
          ["?tree_size=2", 2]
        ] as const) {
          const res = yield* api.call("GET", `/v1/checkpoints/${ids[1]}/inclusion-proof${query}`)
          expect(res.status).toBe(200)
          expect(res.body).toMatchObject({
            checkpoint_id: ids[1],
            agent_id: agentId,
            leaf_index: 1,
            tree_size: size,
            leaf_hash: cert.body.merkle.leaf_hash
          })
          expect(res.body.proof).toEqual(res.body.audit_path)
          const signed = verifyCheckpointNote(res.body.signed_tree_head, [verifier], origin)!
          expect(signed.size).toBe(size)
          expect(Buffer.from(signed.root).toString("hex")).toBe(res.body.root)
          expect(
            verifyInclusion({
              leafIndex: 1,
              treeSize: size,
              leafHash: fromHex(res.body.leaf_hash)!,
              proof: hexes(res.body.audit_path),
              root: signed.root
            })
          ).toBe(true)
        }
        // The certificate checked against a signed tree head of its own size, through POST /v1/verify.
        const atIssue = yield* api.call("GET", `/v1/checkpoints/${ids[1]}/inclusion-proof?tree_size=2`)
        const checked = yield* api.call("POST", "/v1/verify", {
          body: { certificate: cert.body, signed_tree_head: atIssue.body.signed_tree_head }
        })
        expect(checked.body).toMatchObject({
          valid: true,
          checks: { signature: true, chain: true, merkle: true, verdict: true }
        })
        const newer = yield* api.call("POST", "/v1/verify", {
          body: { certificate: cert.body, signed_tree_head: root.body.signed_tree_head }
        })
        expect(newer.body.valid).toBe(false)
        expect(newer.body.errors.join()).toContain("another tree")

        // Bad sizes name the field; unknown ids are 404.
        for (const query of ["?tree_size=1", "?tree_size=7", "?tree_size=0", "?tree_size=x"]) {
          const res = yield* api.call("GET", `/v1/checkpoints/${ids[1]}/inclusion-proof${query}`)
          expect(res.status).toBe(400)
          expect(res.body.error).toMatch(/^tree_size/)
        }
        const unknown = yield* api.call(
          "GET",
          "/v1/checkpoints/ic-00000000-0000-4000-8000-000000000000/inclusion-proof"
        )
        expect(unknown.status).toBe(404)
        expect(unknown.body).toEqual({ error: expect.stringContaining("not found") })
        expect((yield* api.call("GET", "/v1/checkpoints/nope/certificate")).status).toBe(404)
        expect((yield* api.call("GET", "/v1/agents/agt-never-seen/merkle-root")).status).toBe(404)
      })
  )

  it.effect("consistency proofs link two signed tree heads of one log", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const agentId = "agt-verify-consistency"
      yield* commitEvents(agentId, [[], [], []])
      const origin = originOf(agentId)
      const old = yield* api.call("GET", `/v1/agents/${agentId}/merkle-root`)
      yield* commitEvents(agentId, [[], [review], [], [], []])
      const verifier = parseVerifierKey(old.body.note_verifier_key)!

      const res = yield* api.call("GET", `/v1/agents/${agentId}/consistency-proof?from=3`)
      expect(res.status).toBe(200)
      expect(res.body.from.signed_tree_head).toBe(old.body.signed_tree_head)
      expect(res.body.to.tree_size).toBe(8)
      const from = verifyCheckpointNote(res.body.from.signed_tree_head, [verifier], origin)!
      const to = verifyCheckpointNote(res.body.to.signed_tree_head, [verifier], origin)!
      const proof = { size1: from.size, size2: to.size, root1: from.root, root2: to.root, proof: hexes(res.body.proof) }
      expect(verifyConsistency(proof)).toBe(true)
      // A monitor holding the old head would notice a rewritten history.
      const forged = new Uint8Array(from.root)
      forged[0]! ^= 1
      expect(verifyConsistency({ ...proof, root1: forged })).toBe(false)

      const between = yield* api.call("GET", `/v1/agents/${agentId}/consistency-proof?from=2&to=5`)
      expect(between.status).toBe(200)
      expect([between.body.from.tree_size, between.body.to.tree_size]).toEqual([2, 5])
      expect(
        verifyConsistency({
          size1: 2,
          size2: 5,
          root1: fromHex(between.body.from.root)!,
          root2: fromHex(between.body.to.root)!,
          proof: hexes(between.body.proof)
        })
      ).toBe(true)

      for (const [query, field] of [
        ["?from=6&to=5", "from"],
        ["?from=1&to=9", "to"],
        ["", "from"],
        ["?from=0", "from"]
      ] as const) {
        const bad = yield* api.call("GET", `/v1/agents/${agentId}/consistency-proof${query}`)
        expect(bad.status).toBe(400)
        expect(bad.body.error.startsWith(field)).toBe(true)
      }
      expect((yield* api.call("GET", "/v1/agents/agt-unknown/consistency-proof?from=1")).status).toBe(404)
    })
  )

  it.effect("POST /v1/verify reports each check, and answers junk with a report or a 400, never a 500", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const agentId = "agt-verify-post"
      const [id] = yield* commitEvents(agentId, [[review]])
      const cert = (yield* api.call("GET", `/v1/checkpoints/${id}/certificate`)).body
      const ok = yield* api.call("POST", "/v1/verify", { body: cert })
      expect(ok.status).toBe(200)
      // verdict_proof: null, or true when the 10% sample picked this checkpoint and the proof is already attached.
      expect(ok.body).toEqual({
        valid: true,
        checks: {
          signature: true,
          chain: true,
          merkle: true,
          verdict: true,
          verdict_proof: cert.verdict_proof === null ? null : true
        },
        errors: [],
        disclaimer: PROTOCOL_DISCLAIMER
      })

      const tampered = yield* api.call("POST", "/v1/verify", {
        body: { ...cert, claims: { ...cert.claims, verdict: "clear" } }
      })
      expect(tampered.status).toBe(200)
      expect(tampered.body.valid).toBe(false)
      // Said whatever the outcome: a valid certificate is no safety rating either way.
      expect(tampered.body.disclaimer).toBe(PROTOCOL_DISCLAIMER)
      expect(tampered.body.checks).toMatchObject({ signature: false, chain: false, verdict: false })

      for (const junk of [{}, [], 42, "text", false, { certificate: 1 }, { ...cert, signature: "!!" }]) {
        const res = yield* api.call("POST", "/v1/verify", { body: JSON.stringify(junk) })
        expect(res.status).toBe(200)
        expect(res.body.valid).toBe(false)
        expect(res.body.errors.length).toBeGreaterThan(0)
      }
      for (const body of ["{not json", "", "null"]) {
        const res = yield* api.call("POST", "/v1/verify", { body })
        expect(res.status).toBe(400)
        expect(res.body).toEqual({ error: expect.any(String) })
      }
      const text = yield* api.call("POST", "/v1/verify", { body: "nope", headers: { "content-type": "text/plain" } })
      expect(text.status).toBe(400)
      const asText = yield* api.call("POST", "/v1/verify", {
        body: JSON.stringify(cert),
        headers: { "content-type": "text/plain" }
      })
      expect(asText.body.valid).toBe(true)
      const badHead = yield* api.call("POST", "/v1/verify", { body: { certificate: cert, signed_tree_head: 5 } })
      expect(badHead.status).toBe(400)
      expect(badHead.body.error).toMatch(/^signed_tree_head/)
      const wrongLog = yield* api.call("POST", "/v1/verify", {
        body: { certificate: cert, signed_tree_head: "other/agents/x\n1\nAAAA\n\n— x AAAA\n" }
      })
      expect(wrongLog.body.valid).toBe(false)
    })
  )

  it.effect("verdict proofs: made for every boundary violation, attached outside the signature, status visible", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const agentId = "agt-verify-proof"
      const [violating] = yield* commitEvents(agentId, [[violation]])
      const proof = yield* eventually(
        api.call("GET", `/v1/checkpoints/${violating}/proof`),
        (res) => res.body.status === "completed"
      )
      expect(proof.body).toMatchObject({
        checkpoint_id: violating,
        agent_id: agentId,
        sampled: true,
        attempts: 1,
        error: null
      })
      expect(proof.body.verdict_proof).toMatchObject({
        type: "candor-verdict-stark",
        security: { proven_bits: expect.any(Number) }
      })
      // The public inputs and the security level, beside the proof: its statement_hash names exactly these inputs.
      expect(proof.body.security).toEqual(proof.body.verdict_proof.security)
      expect(proof.body.public_inputs).toMatchObject({
        air: proof.body.verdict_proof.air,
        params: proof.body.verdict_proof.params,
        rules_version: "candor-verdict/1",
        checkpoint_id: violating,
        verdict: "boundary_violation"
      })
      expect(proof.body.public_inputs.concerns.length).toBeGreaterThan(0)
      expect(toHex(taggedHash("verdict-statement", canonicalBytes(proof.body.public_inputs)))).toBe(
        proof.body.verdict_proof.statement_hash
      )
      const cert = (yield* api.call("GET", `/v1/checkpoints/${violating}/certificate`)).body
      expect(cert.verdict_proof).toEqual(proof.body.verdict_proof)
      expect(verifyVerdictProof(cert)).toBe(true)
      const verified = yield* api.call("POST", "/v1/verify", { body: cert })
      expect(verified.body).toEqual({
        valid: true,
        checks: { signature: true, chain: true, merkle: true, verdict: true, verdict_proof: true },
        errors: [],
        disclaimer: PROTOCOL_DISCLAIMER
      })
      // A proof of another checkpoint's statement does not verify here.
      const [other] = yield* commitEvents(agentId, [[violation]])
      const otherProof = (yield* eventually(
        api.call("GET", `/v1/checkpoints/${other}/proof`),
        (res) => res.body.status === "completed"
      )).body
      const swapped = yield* api.call("POST", "/v1/verify", {
        body: { ...cert, verdict_proof: otherProof.verdict_proof }
      })
      expect(swapped.body).toMatchObject({ valid: false, checks: { signature: true, verdict_proof: false } })

      expect((yield* api.call("GET", "/v1/checkpoints/ic-00000000-0000-4000-8000-000000000000/proof")).status).toBe(404)
    })
  )

  it.effect("a checkpoint outside the sample is not_sampled until its owner asks for a proof", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { agentA, userA, userB } = api.fixtures
      // Clear checkpoints until one falls outside the deterministic 10% sample.
      let id: string | undefined
      while (id === undefined) {
        const [candidate] = yield* commitEvents(agentA, [[]])
        if (!shouldProve(candidate!, "clear")) id = candidate
      }
      const before = yield* api.call("GET", `/v1/checkpoints/${id}/proof`)
      expect(before.body).toEqual({
        checkpoint_id: id,
        agent_id: agentA,
        status: "not_sampled",
        sampled: false,
        verdict_proof: null,
        attempts: 0,
        error: null,
        updated_at: null,
        public_inputs: expect.objectContaining({ checkpoint_id: id, verdict: "clear", concerns: [] }),
        security: { conjectured_bits: expect.any(Number), proven_bits: expect.any(Number) }
      })
      expect((yield* api.call("POST", `/v1/checkpoints/${id}/prove`)).status).toBe(401)
      // Someone else's agent is not found, whoever asks.
      expect((yield* api.call("POST", `/v1/checkpoints/${id}/prove`, { token: userB.token })).status).toBe(404)
      const asked = yield* api.call("POST", `/v1/checkpoints/${id}/prove`, { token: userA.token })
      expect(asked.status).toBe(202)
      expect(["pending", "proving", "completed"]).toContain(asked.body.status)
      const done = yield* eventually(
        api.call("GET", `/v1/checkpoints/${id}/proof`),
        (res) => res.body.status === "completed"
      )
      expect(done.body.sampled).toBe(false)
      const cert = (yield* api.call("GET", `/v1/checkpoints/${id}/certificate`)).body
      expect(verifyVerdictProof(cert)).toBe(true)
      // Asking again changes nothing.
      const again = yield* api.call("POST", `/v1/checkpoints/${id}/prove`, { token: userA.token })
      expect(again.body).toMatchObject({ status: "completed", attempts: 1 })
      expect((yield* api.call("POST", "/v1/checkpoints/nope/prove", { token: userA.token })).status).toBe(404)
    })
  )

  it.effect("the proof route gives the analysis JSON to who may read the checkpoint, the hashes only to others", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { member, orgAgent, userB } = api.fixtures
      const [id] = yield* commitEvents(orgAgent, [[violation]])
      const path = `/v1/checkpoints/${id}/proof`
      const asMember = (yield* api.call("GET", path, { token: member.token })).body
      expect(typeof asMember.analysis_json).toBe("string")
      // The bytes analysis_hash commits to: the verifier hashes them, nothing else.
      expect(toHex(taggedHash("analysis", new TextEncoder().encode(asMember.analysis_json)))).toBe(
        asMember.public_inputs.analysis_hash
      )
      expect(JSON.parse(asMember.analysis_json).concerns.length).toBeGreaterThan(0)
      for (const credentials of [{}, { token: userB.token }, { token: "not-a-token" }]) {
        const shown = yield* api.call("GET", path, credentials)
        expect(shown.status).toBe(200)
        expect(shown.body.analysis_json).toBeUndefined()
        expect(shown.body.public_inputs.analysis_hash).toBe(asMember.public_inputs.analysis_hash)
      }
    })
  )

  it.effect("on demand proofs of an organization's agent: Admins and the service-role key, not Members", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { admin, member, orgAgent } = api.fixtures
      const [first, second] = yield* commitEvents(orgAgent, [[], []])
      const memberKey = yield* api.createApiKey(api.fixtures.owner.userId, {
        orgId: api.fixtures.orgId,
        role: "member"
      })
      for (const credentials of [{ token: member.token }, { apiKey: memberKey }]) {
        const refused = yield* api.call("POST", `/v1/checkpoints/${first}/prove`, credentials)
        expect(refused.status).toBe(403)
        expect(Object.keys(refused.body)).toEqual(["error"])
      }
      expect((yield* api.call("POST", `/v1/checkpoints/${first}/prove`, { token: admin.token })).status).toBe(202)
      expect((yield* api.call("POST", `/v1/checkpoints/${second}/prove`, { token: api.serviceRoleKey })).status).toBe(
        202
      )
    })
  )

  describe("GET /v1/reputation/{agent_id}/verify", () => {
    it.effect("recomputes the chain and the Merkle root from the stored certificates", () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const agentId = "agt-verify-chain"
        const ids = yield* commitEvents(agentId, [[], [review], [], [violation], [], [review], []])
        const res = yield* api.call("GET", `/v1/reputation/${agentId}/verify?limit=3&offset=2`)
        expect(res.status).toBe(200)
        const root = (yield* api.call("GET", `/v1/agents/${agentId}/merkle-root`)).body
        expect(res.body).toMatchObject({
          agent_id: agentId,
          valid: true,
          disclaimer: PROTOCOL_DISCLAIMER,
          certificates: { total: 7, offset: 2, limit: 3 },
          signatures: { valid: true, checked: 7, failed: [] },
          chain: { valid: true, length: 7, errors: [] },
          merkle: {
            valid: true,
            tree_size: 7,
            root: root.root,
            computed_root: root.root,
            signed_tree_head: root.signed_tree_head,
            signed_tree_head_valid: true
          }
        })
        expect(res.body.certificates.items.map((item: { checkpoint_id: string }) => item.checkpoint_id)).toEqual(
          ids.slice(2, 5)
        )
        expect(res.body.certificates.items[1]).toMatchObject({
          position: 3,
          verdict: "boundary_violation",
          certificate_hash: expect.stringMatching(/^[0-9a-f]{64}$/)
        })
        const last = (yield* api.call("GET", `/v1/checkpoints/${ids[6]}/certificate`)).body
        expect(res.body.chain.head).toBe(last.chain.hash)

        const bad = yield* api.call("GET", `/v1/reputation/${agentId}/verify?limit=0`)
        expect(bad.status).toBe(400)
        expect(bad.body.error).toMatch(/^limit/)
        expect((yield* api.call("GET", "/v1/reputation/agt-none/verify")).status).toBe(404)
      })
    )

    it.effect("reports a certificate changed in the database: its signature and its chain link", () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const sql = yield* SqlClient.SqlClient
        const agentId = "agt-verify-tamper"
        const ids = yield* commitEvents(agentId, [[], [violation], []])
        const [row] = yield* sql<{ body: any }>`select body from certificates where checkpoint_id = ${ids[1]!}`
        const forged = { ...row!.body, claims: { ...row!.body.claims, verdict: "clear", concerns: [] } }
        yield* sql`update certificates set body = ${JSON.stringify(forged)}::json where checkpoint_id = ${ids[1]!}`
        const res = yield* api.call("GET", `/v1/reputation/${agentId}/verify`)
        expect(res.status).toBe(200)
        expect(res.body).toMatchObject({
          valid: false,
          signatures: { valid: false, failed: [ids[1]] },
          chain: { valid: false }
        })
        expect(res.body.chain.errors[0]).toContain("position 1")
      })
    )
  })

  describe("GET /v1/agents/{agent_id}/certificates", () => {
    it.effect(
      "pages the log in position order up to the signed tree head; the tally drift finds is the actors' drift alerts",
      () =>
        Effect.gen(function* () {
          const api = yield* ApiHarness
          const sql = yield* SqlClient.SqlClient
          const agentId = "agt-verify-pages"
          // One session: three violations in a row raise one AIP drift alert in the actor.
          const ids = yield* commitEvents(agentId, [[], [violation], [violation], [violation], [review], []])
          const keys = (yield* api.call("GET", "/v1/keys")).body.keys
          const head = (yield* api.call("GET", `/v1/agents/${agentId}/merkle-root`)).body

          const all = yield* api.call("GET", `/v1/agents/${agentId}/certificates`)
          expect(all.status).toBe(200)
          expect(all.body).toMatchObject({ agent_id: agentId, from: 0, limit: 100, tree_size: 6, next: null })
          expect(all.body.certificates.map((c: any) => c.subject.checkpoint_id)).toEqual(ids)
          expect(all.body.certificates.map((c: any) => c.chain.position)).toEqual([0, 1, 2, 3, 4, 5])

          const pages: Array<any> = []
          let from: number | null = 0
          while (from !== null) {
            const page: any = (yield* api.call("GET", `/v1/agents/${agentId}/certificates?from=${from}&limit=4`)).body
            pages.push(page)
            from = page.next
          }
          expect(pages.map((page) => [page.from, page.certificates.length, page.next])).toEqual([
            [0, 4, 4],
            [4, 2, null]
          ])
          const certificates = pages.flatMap((page) => page.certificates)
          // A verdict proof may be attached between two reads (it is outside the signature): compare without it.
          const withoutProof = (list: ReadonlyArray<any>) => list.map(({ verdict_proof: _, ...rest }) => rest)
          expect(withoutProof(certificates)).toEqual(withoutProof(all.body.certificates))
          const exact = yield* api.call("GET", `/v1/agents/${agentId}/certificates?from=2&limit=4`)
          expect(exact.body.next).toBeNull()
          const end = yield* api.call("GET", `/v1/agents/${agentId}/certificates?from=6`)
          expect(end.body).toMatchObject({ certificates: [], next: null })

          const tally = tallyCertificates(certificates)
          const alerts = yield* sql<{ session_id: string }>`
            select session_id from drift_alerts where agent_id = ${agentId}`
          expect(alerts).toHaveLength(1)
          expect(tally).toMatchObject({
            certified: 6,
            analysed: 6,
            analysed_clear: 2,
            long_sessions: 1,
            stable_sessions: 0,
            violation_sessions: [{ session_id: alerts[0]!.session_id }]
          })

          // What a third party checks: a score published over these certificates verifies with them.
          const computedAt = new Date().toISOString()
          const published = {
            agent_id: agentId,
            ...computeReputation(tally, NO_COHERENCE, new Date(computedAt)),
            computed_at: computedAt,
            computed_over: { tree_size: head.tree_size, root: head.root, checkpoint: head.signed_tree_head },
            trend_30d: null,
            visibility: "unlisted" as const
          }
          const report = verifyReputation(published, certificates, head.signed_tree_head, keys)
          expect(Object.values(report.checks).filter((check) => !check.ok)).toEqual([])

          // And the score Candor itself publishes (the workers' incremental tally) verifies the same way.
          const served = yield* api.call("GET", `/v1/reputation/${agentId}`)
          expect(served.status).toBe(200)
          expect(served.body.computed_over.tree_size).toBe(6)
          const check = verifyReputation(served.body, certificates, served.body.computed_over.checkpoint, keys)
          expect(Object.values(check.checks).filter((c) => !c.ok)).toEqual([])
          expect(check.recomputed.score).toBe(served.body.score)
        })
    )

    it.effect("404 for an unknown agent, 400 naming the parameter, no credentials needed", () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const agentId = "agt-verify-pages-400"
        yield* commitEvents(agentId, [[], []])
        const unknown = yield* api.call("GET", "/v1/agents/agt-nobody/certificates")
        expect(unknown.status).toBe(404)
        expect(unknown.body).toEqual({ error: "agent agt-nobody not found" })
        for (const [query, field] of [
          ["limit=0", "limit"],
          ["limit=1001", "limit"],
          ["limit=x", "limit"],
          ["from=-1", "from"],
          ["from=1.5", "from"],
          ["from=3", "from"]
        ] as const) {
          const bad = yield* api.call("GET", `/v1/agents/${agentId}/certificates?${query}`)
          expect(bad.status, query).toBe(400)
          expect(Object.keys(bad.body)).toEqual(["error"])
          expect(bad.body.error.startsWith(field), bad.body.error).toBe(true)
        }
        const one = yield* api.call("GET", `/v1/agents/${agentId}/certificates?from=1&limit=1000`)
        expect(one.body).toMatchObject({ from: 1, limit: 1000, tree_size: 2, next: null })
        expect(one.body.certificates).toHaveLength(1)
      })
    )
  })
})
