/**
 * The chain audit as a fold: carried over batches it reaches the same result as in one pass (what
 * lets the API verify only a grown log's new certificates), and it finds what a pass finds: a
 * changed certificate, a gap, a foreign key; errors are counted and their list stays bounded.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import { auditCertificates, MAX_LISTED, startAudit } from "../../core/ChainAudit.js"
import { toHex } from "../../core/Bytes.js"
import { frontierRoot } from "../../core/Merkle.js"
import { many, signedLog } from "../support/ReputationLog.js"
import { fuzzParameters } from "../support/Fuzz.js"

const log = signedLog("agt-audit", many(40, "clear"))
const keys = new Map([[log.key.keyId, log.key.publicKey]])

describe("ChainAudit", () => {
  it("a whole signed log audits clean, its frontier giving the signed root", () => {
    const audit = auditCertificates(startAudit("agt-audit"), log.certificates, keys)
    expect(audit).toMatchObject({ position: 40, chainErrorCount: 0, failedSignatureCount: 0 })
    expect(audit.frontier.size).toBe(40)
    expect(toHex(frontierRoot(audit.frontier))).toBe(log.root)
  })

  it("carried over any split into batches, it is the audit of one pass (property)", () => {
    const whole = auditCertificates(startAudit("agt-audit"), log.certificates, keys)
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 1, max: 39 }), { maxLength: 8 }), (cuts) => {
        const bounds = [0, ...cuts.sort((a, b) => a - b), 40]
        let audit = startAudit("agt-audit")
        for (let i = 0; i + 1 < bounds.length; i++)
          audit = auditCertificates(audit, log.certificates.slice(bounds[i], bounds[i + 1]), keys)
        expect(audit).toStrictEqual(whole)
      }),
      fuzzParameters(100)
    )
  })

  it("finds a changed certificate, a gap and an unknown key", () => {
    const [first, second, third, ...rest] = log.certificates
    const changed = { ...second!, claims: { ...second!.claims, verdict: "boundary_violation" as const } }
    const audit = auditCertificates(startAudit("agt-audit"), [first!, changed, third!, ...rest], keys)
    expect(audit.failedSignatures).toStrictEqual([second!.subject.checkpoint_id])
    expect(audit.chainErrors.some((error) => error.startsWith("position 1:"))).toBe(true)
    const gap = auditCertificates(startAudit("agt-audit"), [first!, third!], keys)
    expect(gap.chainErrors).toContain("position 1: missing (next stored is 2)")
    const foreign = auditCertificates(startAudit("agt-audit"), log.certificates, new Map())
    expect(foreign.failedSignatureCount).toBe(40)
  })

  it(`keeps at most ${MAX_LISTED} errors of each kind, and counts them all`, () => {
    const big = signedLog("agt-many", many(150, "clear"))
    const audit = auditCertificates(startAudit("agt-many"), big.certificates, new Map())
    expect(audit.failedSignatureCount).toBe(150)
    expect(audit.failedSignatures).toHaveLength(MAX_LISTED)
  })
})
