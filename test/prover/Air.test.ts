import { describe, expect, it } from "@effect/vitest"
import { CONCERN_CATEGORIES, SEVERITIES } from "../../core/schema/Concern.js"
import { VERDICTS } from "../../core/schema/Verdict.js"
import { deriveVerdict } from "../../core/Verdict.js"
import { MAX_CONCERNS, PARAMS, securityOf, traceLengthFor } from "../../prover/Params.js"
import { conjecturedSecurity, listDecodingSecurity, uniqueDecodingSecurity } from "../../prover/Security.js"
import { concernCodes, ruleVerdict, statementOf } from "../../prover/Statement.js"
import { buildTrace, COLUMN, LEVEL, RAISE, VERDICT_LEVEL } from "../../prover/stark/Air.js"
import { MerkleTree, verifyOpening } from "../../prover/stark/Merkle.js"
import { Transcript } from "../../prover/stark/Transcript.js"
import { cyclingConcerns, statementFor } from "./Support.js"

describe("the AIR's rule tables", () => {
  it("give core/Verdict.ts's verdict for every single concern, with and without a BOUNDARY value named", () => {
    CONCERN_CATEGORIES.forEach((category, c) =>
      SEVERITIES.forEach((severity, s) => {
        const plain = deriveVerdict([{ category, severity, relevant_conscience_value: null }], ["v"])
        const named = deriveVerdict([{ category, severity, relevant_conscience_value: "v" }], ["v"])
        expect(LEVEL[c]![s], `${category}/${severity}`).toBe(VERDICT_LEVEL[plain])
        expect(
          LEVEL[c]![s]! + (severity === "high" ? RAISE[c]! : 0),
          `${category}/${severity} naming a BOUNDARY value`
        ).toBe(VERDICT_LEVEL[named])
      })
    )
  })

  it("the honest trace's running maximum ends at the rule's verdict", () => {
    for (let n = 0; n <= 40; n++) {
      const statement = statementFor(cyclingConcerns(n))
      const N = traceLengthFor(n)
      const trace = buildTrace(concernCodes(statement), N)
      const level = Number(trace[COLUMN.f1]![N - 1]! + trace[COLUMN.f2]![N - 1]!)
      expect(VERDICTS[level]).toBe(ruleVerdict(statement))
    }
  })
})

describe("statements", () => {
  it("flag a concern exactly when it names one of the certificate's BOUNDARY values (trimmed)", () => {
    const certificate = {
      subject: { checkpoint_id: "ic-00000000-0000-4000-8000-000000000001" },
      claims: {
        rules_version: "candor-verdict/1",
        verdict: "boundary_violation",
        boundary_values: ["no-exfiltration"],
        concerns: [
          {
            category: "value_misalignment",
            severity: "high",
            description: "",
            relevant_conscience_value: " no-exfiltration "
          },
          { category: "value_misalignment", severity: "high", description: "", relevant_conscience_value: "other" },
          { category: "value_misalignment", severity: "low", description: "", relevant_conscience_value: null }
        ]
      },
      input_commitments: { analysis_hash: "a", thinking_block_hash: "b", card_hash: "c", values_hash: "d", model: "m" }
    }
    const statement = statementOf(certificate as never)
    expect(statement.concerns.map((c) => c.boundary)).toEqual([true, false, false])
    expect(ruleVerdict(statement)).toBe("boundary_violation")
  })

  it("the trace length is the next power of two with room for the zero and padding rows, at least 8", () => {
    expect([0, 6, 7, 14, 16, 30, 62, 64, MAX_CONCERNS].map(traceLengthFor)).toEqual([
      8, 8, 16, 16, 32, 32, 64, 128, 1024
    ])
  })
})

describe("the parameter set", () => {
  it("has at least 100 bits of proven and 128 of conjectured security at every supported trace length", () => {
    for (let n = 8; n <= traceLengthFor(MAX_CONCERNS); n *= 2) {
      const level = securityOf(PARAMS, n)
      expect(level.proven, `N = ${n}`).toBeGreaterThanOrEqual(100)
      expect(level.conjectured).toBe(128)
    }
  })

  it("reproduces the figures of Winterfell's formulas for a 128-bit field", () => {
    const at = (blowup: number, queries: number, grindingBits: number, traceLength: number) => ({
      fieldBits: 128,
      blowup,
      queries,
      grindingBits,
      traceLength,
      hashBits: 128
    })
    expect(conjecturedSecurity(at(8, 34, 0, 64))).toBe(101)
    expect(conjecturedSecurity(at(8, 28, 16, 64))).toBe(99)
    expect(uniqueDecodingSecurity(at(8, 64, 16, 8))).toBe(66)
    expect(listDecodingSecurity(at(8, 64, 16, 1024))).toBe(85)
  })
})

describe("Merkle batch openings", () => {
  const leaves = Array.from({ length: 64 }, (_, i) => Uint8Array.of(i, i >> 8, 7))
  const tree = new MerkleTree(leaves)
  const open = (indices: Array<number>, data = indices.map((i) => leaves[i]!), proof = tree.open(indices)) => {
    let next = 0
    const ok = verifyOpening(tree.root, 64, indices, data, () => {
      const hash = proof[next++]
      if (hash === undefined) throw new Error("proof ran out")
      return hash
    })
    return ok && next === proof.length
  }

  it("open any set of leaves with only the hashes that cannot be recomputed", () => {
    expect(open([5])).toBe(true)
    expect(tree.open([5])).toHaveLength(6)
    expect(open([0, 1, 2, 3])).toBe(true)
    expect(tree.open([0, 1, 2, 3])).toHaveLength(4)
    expect(open(Array.from({ length: 64 }, (_, i) => i))).toBe(true)
    expect(tree.open(Array.from({ length: 64 }, (_, i) => i))).toHaveLength(0)
  })

  it("reject another leaf's data, a changed sibling, or indices out of order", () => {
    expect(open([3, 9], [leaves[3]!, leaves[10]!])).toBe(false)
    const proof = tree.open([3, 9])
    proof[1] = new Uint8Array(32)
    expect(open([3, 9], undefined, proof)).toBe(false)
    expect(() => tree.open([9, 3])).toThrow(RangeError)
    expect(() => tree.open([64])).toThrow(RangeError)
  })
})

describe("the transcript", () => {
  it("is deterministic, and every absorbed byte changes what it draws", () => {
    const draw = (data: Uint8Array) => {
      const t = new Transcript("test")
      t.absorb("x", data)
      return [t.ext(), t.indices(5, 1024)]
    }
    expect(draw(Uint8Array.of(1, 2))).toEqual(draw(Uint8Array.of(1, 2)))
    expect(draw(Uint8Array.of(1, 2))).not.toEqual(draw(Uint8Array.of(1, 3)))
  })

  it("grinding finds the smallest nonce with enough zero bits, and checks it", () => {
    const t = new Transcript("test")
    const nonce = t.grind(8)
    expect(t.checkGrinding(8, nonce)).toBe(true)
    for (let n = 0n; n < nonce; n++) expect(t.checkGrinding(8, n)).toBe(false)
  })
})
