/**
 * Shared helpers for the prover tests: the WASM kernels (built on the spot when `npm ci` has not
 * built them yet, so these tests never skip), a seeded generator of field elements, and statements.
 */
import { existsSync } from "node:fs"
import { buildWasm, KERNELS_WASM } from "../../prover/assembly/Build.js"
import { P } from "../../prover/field/Goldilocks.js"
import type { Kernels } from "../../prover/kernels/Kernels.js"
import { loadWasmKernels } from "../../prover/kernels/Wasm.js"

export const wasmKernels = async (): Promise<Kernels> => {
  if (!existsSync(KERNELS_WASM)) {
    const built = await buildWasm()
    if (!built) throw new Error("assemblyscript is not installed: cannot build the WASM kernels")
  }
  const kernels = loadWasmKernels()
  if (kernels === undefined) throw new Error(`no ${KERNELS_WASM}`)
  return kernels
}

/** Deterministic field elements (SplitMix64), with the edge values mixed in. */
export const elements = (seed: bigint) => {
  let state = seed
  const EDGES = [0n, 1n, 2n, P - 1n, P - 2n, 0xffff_ffffn, 0x1_0000_0000n, P - 0x1_0000_0000n, (P - 1n) / 2n]
  const next = (): bigint => {
    state = (state + 0x9e37_79b9_7f4a_7c15n) & 0xffff_ffff_ffff_ffffn
    let z = state
    z = ((z ^ (z >> 30n)) * 0xbf58_476d_1ce4_e5b9n) & 0xffff_ffff_ffff_ffffn
    z = ((z ^ (z >> 27n)) * 0x94d0_49bb_1331_11ebn) & 0xffff_ffff_ffff_ffffn
    return (z ^ (z >> 31n)) % P
  }
  let i = 0
  return {
    next: (): bigint => (i++ % 7 === 3 ? EDGES[(i >> 3) % EDGES.length]! : next()),
    nonzero: (): bigint => {
      for (;;) {
        const x = next()
        if (x !== 0n) return x
      }
    },
    vector: (n: number): BigUint64Array =>
      BigUint64Array.from({ length: n }, () => (i++ % 7 === 3 ? EDGES[(i >> 3) % EDGES.length]! : next()))
  }
}

import { CONCERN_CATEGORIES, SEVERITIES } from "../../core/schema/Concern.js"
import { ruleVerdict, type StatementConcern, type VerdictStatement } from "../../prover/Statement.js"

export const checkpointId = (n: number): string => `ic-00000000-0000-4000-8000-${String(n).padStart(12, "0")}`

/** A statement claiming the rule's verdict for these concerns (or `verdict` when given). */
export const statementFor = (
  concerns: ReadonlyArray<StatementConcern>,
  overrides: Partial<VerdictStatement> = {}
): VerdictStatement => {
  const base: VerdictStatement = {
    checkpoint_id: checkpointId(1),
    rules_version: "candor-verdict/1",
    concerns,
    verdict: "clear",
    analysis_hash: "a1".repeat(32),
    thinking_block_hash: "b2".repeat(32),
    card_hash: "c3".repeat(32),
    values_hash: "d4".repeat(32),
    model: "claude-sonnet-4"
  }
  return { ...base, verdict: ruleVerdict(base), ...overrides }
}

/** n concerns cycling through every category and severity, with a flag on every third. */
export const cyclingConcerns = (n: number): Array<StatementConcern> =>
  Array.from({ length: n }, (_, i) => ({
    category: CONCERN_CATEGORIES[i % CONCERN_CATEGORIES.length]!,
    severity: SEVERITIES[(i * 3 + 1) % SEVERITIES.length]!,
    boundary: i % 3 === 2
  }))
