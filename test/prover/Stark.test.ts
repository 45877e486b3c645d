import { beforeAll, describe, expect, it } from "@effect/vitest"
import { FastCheck } from "effect"
import { CONCERN_CATEGORIES, SEVERITIES } from "../../core/schema/Concern.js"
import { VERDICTS } from "../../core/schema/Verdict.js"
import { P } from "../../prover/field/Goldilocks.js"
import type { Kernels } from "../../prover/kernels/Kernels.js"
import { typescriptKernels } from "../../prover/kernels/Typescript.js"
import { PARAMS, traceLengthFor } from "../../prover/Params.js"
import { ruleVerdict, type StatementConcern, type VerdictStatement } from "../../prover/Statement.js"
import { buildTrace, COLUMN, TRACE_WIDTH } from "../../prover/stark/Air.js"
import { proveStatement, StatementRefused } from "../../prover/stark/Prove.js"
import { verifyStatement } from "../../prover/stark/Verify.js"
import { concernCodes } from "../../prover/Statement.js"
import { checkpointId, cyclingConcerns, statementFor, wasmKernels } from "./Support.js"

let wasm: Kernels
beforeAll(async () => {
  wasm = await wasmKernels()
})

const prove = (statement: VerdictStatement) => proveStatement(statement, { kernels: wasm })
const verify = (statement: VerdictStatement, proof: Uint8Array) => verifyStatement(statement, proof, { kernels: wasm })

/** A boundary violation only through the boundary-value clause, next to a review concern. */
const CONCERNS: Array<StatementConcern> = [
  { category: "undeclared_intent", severity: "medium", boundary: false },
  { category: "value_misalignment", severity: "high", boundary: true },
  { category: "reasoning_corruption", severity: "low", boundary: false }
]
const statement = statementFor(CONCERNS)

describe("an honest proof", () => {
  it("verifies, and the statement is the rule's", () => {
    expect(statement.verdict).toBe("boundary_violation")
    expect(verify(statement, prove(statement))).toEqual({ ok: true })
  })

  it("is deterministic", () => {
    expect(prove(statement)).toEqual(prove(statement))
  })

  it("verifies for no concerns at all (clear)", () => {
    const empty = statementFor([])
    expect(empty.verdict).toBe("clear")
    expect(verify(empty, prove(empty)).ok).toBe(true)
  })
})

describe("a proof is rejected for any other statement", () => {
  const proof = (() => {
    let cached: Uint8Array | undefined
    return () => (cached ??= prove(statement))
  })()
  const rejects = (other: VerdictStatement) => expect(verify(other, proof()).ok).toBe(false)

  it("a wrong verdict", () => {
    for (const verdict of VERDICTS.filter((v) => v !== statement.verdict)) rejects({ ...statement, verdict })
  })

  it("a changed concern: category, severity, flag, order, one more, one fewer", () => {
    const change = (i: number, patch: Partial<StatementConcern>) => ({
      ...statement,
      concerns: statement.concerns.map((c, j) => (j === i ? { ...c, ...patch } : c))
    })
    rejects(change(0, { category: "autonomy_violation" }))
    rejects(change(2, { severity: "medium" }))
    rejects(change(2, { boundary: true }))
    rejects(change(1, { boundary: false }))
    rejects({ ...statement, concerns: [...statement.concerns].reverse() })
    rejects({ ...statement, concerns: [...statement.concerns, CONCERNS[2]!] })
    rejects({ ...statement, concerns: statement.concerns.slice(1) })
  })

  it("a changed input commitment", () => {
    rejects({ ...statement, analysis_hash: "ff".repeat(32) })
    rejects({ ...statement, thinking_block_hash: "none" })
    rejects({ ...statement, card_hash: "ff".repeat(32) })
    rejects({ ...statement, values_hash: "ff".repeat(32) })
    rejects({ ...statement, model: "claude-sonnet-4 " })
  })

  it("a statement that is not well-formed (an unknown category would otherwise read as a padding row)", () => {
    const unknown = {
      ...statement,
      concerns: [...statement.concerns, { category: "made_up", severity: "low", boundary: false }]
    }
    expect(verify(unknown as unknown as VerdictStatement, proof())).toEqual({
      ok: false,
      reason: "not a well-formed verdict statement"
    })
    expect(() => prove(unknown as unknown as VerdictStatement)).toThrow(StatementRefused)
  })

  it("another checkpoint's statement with the same concerns and inputs", () => {
    rejects({ ...statement, checkpoint_id: checkpointId(2) })
    const other = { ...statement, checkpoint_id: checkpointId(2) }
    expect(verify(statement, prove(other)).ok).toBe(false)
  })
})

describe("a tampered proof is rejected", () => {
  const proof = prove(statementFor(cyclingConcerns(5)))
  const subject = statementFor(cyclingConcerns(5))

  it("a flipped byte anywhere: header, roots, frame, FRI, nonce, openings and Merkle paths", () => {
    // Every byte of the first 1.2 KB (everything before the openings), then every 13th byte after.
    const positions = Array.from({ length: proof.length }, (_, i) => i).filter((i) => i < 1200 || i % 13 === 0)
    expect(positions.length).toBeGreaterThan(1900)
    for (const [n, position] of positions.entries()) {
      const tampered = proof.slice()
      tampered[position]! ^= 1 << (n % 8)
      const result = verify(subject, tampered)
      expect(result.ok, `byte ${position}`).toBe(false)
    }
  })

  it("a truncated proof, or one with bytes appended", () => {
    for (const length of [0, 3, 4, 100, proof.length / 2, proof.length - 32, proof.length - 1]) {
      expect(verify(subject, proof.subarray(0, length))).toEqual({ ok: false, reason: "proof is truncated" })
    }
    const longer = new Uint8Array(proof.length + 1)
    longer.set(proof)
    expect(verify(subject, longer)).toEqual({ ok: false, reason: "trailing bytes after the proof" })
  })

  it("field elements out of range, in the out-of-domain frame and in an opened trace row", () => {
    const frame = 4 + 32 + 32 // magic, trace root, composition root
    const firstOpening = frame + (2 * TRACE_WIDTH + 1) * 24 + (Math.log2(traceLengthFor(5)) - 1) * 32 + 24 + 8
    for (const [offset, value] of [
      [frame, P],
      [frame + 8, 0xffff_ffff_ffff_ffffn],
      [firstOpening, P + 5n]
    ] as const) {
      const tampered = proof.slice()
      new DataView(tampered.buffer).setBigUint64(offset, value, true)
      expect(verify(subject, tampered)).toEqual({ ok: false, reason: "non-canonical field element" })
    }
  })

  it("something that is not a proof at all", () => {
    expect(verify(subject, new Uint8Array(20_000)).ok).toBe(false)
    expect(verify(subject, crypto.getRandomValues(new Uint8Array(proof.length))).ok).toBe(false)
  })
})

describe("a cheating prover", () => {
  it("is refused by the honest prover when the claim is not the rule's", () => {
    expect(() => prove({ ...statement, verdict: "clear" })).toThrow(StatementRefused)
  })

  it("cannot prove 'clear' for a boundary violation with a forged trace", () => {
    const claim = { ...statement, verdict: "clear" as const }
    const n = traceLengthFor(claim.concerns.length)
    const forged = buildTrace(concernCodes(claim), n)
    for (const column of [COLUMN.b1, COLUMN.b2, COLUMN.f1, COLUMN.f2]) forged[column]!.fill(0n)
    const proof = proveStatement(claim, { kernels: wasm, forgedTrace: forged })
    expect(verify(claim, proof).ok).toBe(false)
  })

  it("cannot claim another verdict over the honest trace", () => {
    const claim = { ...statement, verdict: "review_needed" as const }
    const honest = buildTrace(concernCodes(claim), traceLengthFor(claim.concerns.length))
    expect(verify(claim, proveStatement(claim, { kernels: wasm, forgedTrace: honest })).ok).toBe(false)
  })

  it("cannot use another parameter set: the verifier pins its own", () => {
    const light = { ...PARAMS, id: "light", queries: 8 }
    const proof = proveStatement(statement, { kernels: wasm, params: light })
    expect(verifyStatement(statement, proof, { kernels: wasm, params: light }).ok).toBe(true)
    expect(verify(statement, proof).ok).toBe(false)
  })
})

describe("property: the proof verifies exactly when the claimed verdict is the rule's", () => {
  const concern = FastCheck.record({
    category: FastCheck.constantFrom(...CONCERN_CATEGORIES),
    severity: FastCheck.constantFrom(...SEVERITIES),
    boundary: FastCheck.boolean()
  })
  it("for random concern lists of 0 to 64 concerns", () => {
    FastCheck.assert(
      FastCheck.property(FastCheck.array(concern, { maxLength: 64 }), FastCheck.nat(999), (concerns, id) => {
        const honest = statementFor(concerns, { checkpoint_id: checkpointId(id) })
        const proof = prove(honest)
        expect(verify(honest, proof).ok).toBe(true)
        for (const verdict of VERDICTS.filter((v) => v !== ruleVerdict(honest))) {
          const claim = { ...honest, verdict }
          expect(() => prove(claim)).toThrow(StatementRefused)
          expect(verify(claim, proof).ok).toBe(false)
        }
      }),
      { numRuns: 30, seed: 20261121 }
    )
  })
})

describe("the WASM and TypeScript paths", () => {
  it("produce identical proofs, each verifying on the other", () => {
    for (const n of [0, 4, 16, 64]) {
      const subject = statementFor(cyclingConcerns(n))
      const fromWasm = proveStatement(subject, { kernels: wasm })
      const fromTypescript = proveStatement(subject, { kernels: typescriptKernels })
      expect(Buffer.from(fromTypescript).equals(Buffer.from(fromWasm)), `${n} concerns`).toBe(true)
      expect(verifyStatement(subject, fromWasm, { kernels: typescriptKernels }).ok).toBe(true)
      expect(verifyStatement(subject, fromTypescript, { kernels: wasm }).ok).toBe(true)
    }
  })
})
