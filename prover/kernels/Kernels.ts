/**
 * The prover's hot loops over vectors of field elements: NTTs, pointwise arithmetic in the base
 * field and its cubic extension, batch inversion and FRI folding. Two implementations, one in
 * AssemblyScript compiled to WASM and one in plain TypeScript (BigInt), behind this interface; the
 * protocol code above them is shared, and since every value is a canonical field element, both give
 * bit-identical proofs.
 *
 * Vectors are `BigUint64Array`s of canonical elements (< p); an extension vector interleaves the
 * three limbs of each element. Kernels never modify their arguments: results are new arrays.
 */
import type { Ext } from "../field/Cubic.js"

export type BaseVec = BigUint64Array
export type ExtVec = BigUint64Array

export interface Kernels {
  readonly name: "wasm" | "typescript"
  /** The values at root^0 … root^(n−1) of the polynomial with these n coefficients (n a power of two, root of order n). */
  readonly ntt: (coefficients: BaseVec, root: bigint) => BaseVec
  /** start · step^i for i < n. */
  readonly powers: (start: bigint, step: bigint, n: number) => BaseVec
  readonly add: (a: BaseVec, b: BaseVec) => BaseVec
  readonly sub: (a: BaseVec, b: BaseVec) => BaseVec
  readonly mul: (a: BaseVec, b: BaseVec) => BaseVec
  /** Elementwise inverses; every element must be nonzero. */
  readonly batchInverse: (a: BaseVec) => BaseVec
  /** acc + alpha · v, elementwise (acc extension, v base). */
  readonly extAxpy: (acc: ExtVec, alpha: Ext, v: BaseVec) => ExtVec
  /** a · v, elementwise (a extension, v base). */
  readonly extMulBase: (a: ExtVec, v: BaseVec) => ExtVec
  readonly extAdd: (a: ExtVec, b: ExtVec) => ExtVec
  readonly extSub: (a: ExtVec, b: ExtVec) => ExtVec
  readonly extMul: (a: ExtVec, b: ExtVec) => ExtVec
  /** k · a for an extension scalar k. */
  readonly extScale: (a: ExtVec, k: Ext) => ExtVec
  /** Elementwise inverses in the extension; every element must be nonzero. */
  readonly extBatchInverse: (a: ExtVec) => ExtVec
  /** x_i − z for base x_i and an extension z. */
  readonly extShift: (xs: BaseVec, z: Ext) => ExtVec
  /**
   * One FRI folding step: for i < n/2, out_i = (f_i + f_{i+n/2})/2 + beta · (f_i − f_{i+n/2}) · inv2x_i,
   * where inv2x_i = 1/(2·x_i) and x_i, −x_i are the points of f_i, f_{i+n/2}.
   */
  readonly friFold: (layer: ExtVec, beta: Ext, inv2x: BaseVec) => ExtVec
  /** The polynomial with these base-field coefficients at an extension point (Horner). */
  readonly evaluate: (coefficients: BaseVec, z: Ext) => Ext
}
