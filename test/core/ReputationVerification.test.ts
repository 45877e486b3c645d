/**
 * A published reputation checked against its signed log prefix (core/ReputationVerification.ts): the
 * honest record verifies, and each kind of tampering fails the check that should catch it, naming the
 * field.
 */
import { describe, expect, it } from "@effect/vitest"
import { verifyReputation } from "../../core/ReputationVerification.js"
import type { AgentReputation } from "../../core/schema/Reputation.js"
import { generateSigningKey } from "../../core/Signing.js"
import {
  publishedReputation,
  signedLog,
  WORKED_EXAMPLE_AT,
  WORKED_EXAMPLE_COHERENCE,
  workedExampleEntries
} from "../support/ReputationLog.js"

const log = signedLog("agt-verify-rep", workedExampleEntries())
const published = publishedReputation(log, WORKED_EXAMPLE_AT, WORKED_EXAMPLE_COHERENCE)
const keys = log.keys.keys

const verify = (
  reputation: AgentReputation = published,
  certificates: ReadonlyArray<unknown> = log.certificates,
  note: string | null = reputation.computed_over.checkpoint
) => verifyReputation(reputation, certificates, note, keys)

const failing = (report: ReturnType<typeof verify>) =>
  Object.entries(report.checks)
    .filter(([, check]) => !check.ok)
    .map(([name]) => name)

const clone = <A>(value: A): A => structuredClone(value)

describe("verifyReputation", () => {
  it("the honest record verifies: every check holds and the recomputation reproduces the published numbers", () => {
    const report = verify()
    expect(failing(report)).toStrictEqual([])
    expect(report.valid).toBe(true)
    expect(report.mismatches).toStrictEqual([])
    expect(report.computed_root).toBe(log.root)
    expect(report.recomputed.score).toBe(805)
    expect(report.tally.certified).toBe(240)
  })

  it("an empty log, with no root and no tree head, verifies", () => {
    const empty = signedLog("agt-empty", [])
    const reputation = publishedReputation(empty, WORKED_EXAMPLE_AT)
    const report = verifyReputation(reputation, [], null, empty.keys.keys)
    expect(failing(report)).toStrictEqual([])
    expect(reputation).toMatchObject({ score: 575, grade: "NR", computed_over: { tree_size: 0, root: null } })
  })

  it("a certificate whose verdict was changed fails its signature and its chain link, and the scores move", () => {
    const certificates = clone(log.certificates) as Array<any>
    const index = certificates.findIndex((c) => c.claims.verdict === "boundary_violation")
    certificates[index].claims.verdict = "clear"
    const report = verify(published, certificates)
    expect(report.valid).toBe(false)
    expect(failing(report)).toStrictEqual(["certificates", "chain", "scores"])
    expect(report.checks.certificates.errors[0]).toContain(`certificate ${index}`)
    expect(report.checks.certificates.errors[0]).toContain("signature: does not verify")
    expect(report.mismatches.map((m) => m.field)).toContain("components.integrity_ratio.score")
  })

  it("a bumped score is reported by field, the rest still holds", () => {
    const report = verify({ ...published, score: published.score + 1 })
    expect(failing(report)).toStrictEqual(["scores"])
    expect(report.mismatches).toStrictEqual([{ field: "score", published: 806, recomputed: 805 }])
  })

  it("bumped components, inputs, grades and counts are each named", () => {
    const reputation = clone(published) as any
    reputation.components[1].score = 300
    reputation.components[1].inputs.impact_sum = 1
    reputation.components[2].inputs.stable_sessions = 30
    reputation.grade = "AAA"
    reputation.tier = "Exemplary"
    reputation.checkpoint_count = 240
    reputation.confidence = "high"
    const report = verify(reputation)
    expect(report.mismatches.map((m) => m.field)).toStrictEqual([
      "grade",
      "tier",
      "checkpoint_count",
      "confidence",
      "components.compliance.score",
      "components.compliance.inputs.impact_sum",
      "components.drift_stability.inputs.stable_sessions"
    ])
  })

  it("a computation at another time changes compliance", () => {
    const report = verify({ ...published, computed_at: "2026-03-27T12:00:00.000Z" })
    expect(report.mismatches.map((m) => m.field)).toContain("components.compliance.score")
  })

  it("the coherence inputs are taken as published, and must be there", () => {
    const reputation = clone(published) as any
    reputation.components[4].inputs = {}
    const report = verify(reputation)
    expect(report.checks.scores.errors[0]).toContain("mean_pair_score must be a number or null")
    const changed = clone(published) as any
    changed.components[4].inputs.trust_adjustment = 50
    expect(verify(changed).mismatches.map((m) => m.field)).toStrictEqual([
      "score",
      "components.coherence_compatibility.score",
      "components.coherence_compatibility.weighted_score"
    ])
  })

  it("a missing certificate fails the prefix, the chain and the root", () => {
    const report = verify(
      published,
      log.certificates.filter((_, i) => i !== 100)
    )
    expect(failing(report)).toEqual(expect.arrayContaining(["prefix", "chain", "merkle"]))
    expect(report.checks.prefix.errors[0]).toBe("239 certificates given, the score is over 240")
  })

  it("certificates out of order fail the prefix and the chain", () => {
    const certificates = [...log.certificates]
    ;[certificates[3], certificates[4]] = [certificates[4]!, certificates[3]!]
    const report = verify(published, certificates)
    expect(failing(report)).toEqual(expect.arrayContaining(["prefix", "chain", "merkle"]))
    expect(report.checks.prefix.errors).toContain("certificate 3: at position 4")
  })

  it("a root that is not the certificates' fails the Merkle check; a tree head of another size fails its own", () => {
    const reputation = clone(published) as any
    reputation.computed_over.root = "0".repeat(64)
    const report = verify(reputation)
    expect(failing(report)).toStrictEqual(["merkle"])
    const other = signedLog("agt-verify-rep", workedExampleEntries().slice(0, 239), log.key)
    const wrongSize = verify(published, log.certificates, other.note)
    expect(failing(wrongSize)).toStrictEqual(["tree_head"])
    expect(wrongSize.checks.tree_head.errors).toContain("the signed tree head is of size 239, the score's is 240")
  })

  it("a tree head of another agent's log, or signed by an unlisted key, does not count", () => {
    const elsewhere = signedLog("agt-other", workedExampleEntries(), log.key)
    expect(verify(published, log.certificates, elsewhere.note).checks.tree_head.errors[0]).toContain(
      "not agent agt-verify-rep"
    )
    const forged = signedLog("agt-verify-rep", workedExampleEntries(), generateSigningKey())
    const report = verifyReputation(
      publishedReputation(forged, WORKED_EXAMPLE_AT, WORKED_EXAMPLE_COHERENCE),
      forged.certificates,
      forged.note,
      keys
    )
    expect(failing(report)).toStrictEqual(["certificates", "tree_head"])
    expect(report.checks.certificates.errors[0]).toContain("unknown key_id")
    expect(report.checks.certificates.errors.at(-1)).toBe("… and 220 more")
  })

  it("a score over an empty log with a tree head missing, or certificates of another agent, fail", () => {
    const reputation = { ...published, computed_over: { ...published.computed_over, checkpoint: null } }
    expect(failing(verify(reputation, log.certificates, null))).toStrictEqual(["tree_head"])
    const other = signedLog("agt-other", workedExampleEntries(), log.key)
    expect(failing(verify(published, other.certificates))).toEqual(
      expect.arrayContaining(["prefix", "chain", "merkle"])
    )
  })

  it("never throws on garbage certificates", () => {
    const report = verify(published, [null, 1, "x", { type: "IntegrityCertificate" }, ...log.certificates.slice(4)])
    expect(report.valid).toBe(false)
    expect(report.checks.certificates.errors.slice(0, 4)).toStrictEqual([
      "certificate 0: malformed",
      "certificate 1: malformed",
      "certificate 2: malformed",
      "certificate 3: malformed"
    ])
  })
})
