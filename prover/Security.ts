/**
 * Security estimates of a STARK parameter set, in bits: the formulas of Winterfell's
 * `air/src/proof/security.rs`.
 *
 * - Conjectured (ethSTARK, eprint 2021/582, eq. 19 variant):
 *   min(fieldBits − log2(N·blowup), log2(blowup)·queries + grinding) − 1, capped by the hash's
 *   collision resistance; grinding counts only when the query term reaches 80 bits.
 * - Proven (eprint 2024/1553, Theorems 2 and 3): the list-decoding regime (Johnson bound, best
 *   multiplicity m) and the unique-decoding regime; the proven level is the better of the two.
 */

export interface SecurityInputs {
  /** Bits of the field the challenges are drawn from (Goldilocks³: 3 · 64). */
  readonly fieldBits: number
  readonly blowup: number
  readonly queries: number
  readonly grindingBits: number
  readonly traceLength: number
  /** Collision resistance of the commitment hash (SHA-256: 128). */
  readonly hashBits: number
}

export interface SecurityLevel {
  readonly conjectured: number
  readonly proven: number
  readonly listDecoding: number
  readonly uniqueDecoding: number
}

const { log2 } = Math

export const conjecturedSecurity = (o: SecurityInputs): number => {
  const fieldSecurity = o.fieldBits - Math.floor(log2(o.traceLength * o.blowup))
  let querySecurity = Math.floor(log2(o.blowup)) * o.queries
  if (querySecurity >= 80) querySecurity += o.grindingBits
  return Math.min(Math.min(fieldSecurity, querySecurity) - 1, o.hashBits)
}

const listDecodingFor = (o: SecurityInputs, m: number): number => {
  const rho = 1 / o.blowup
  const alpha = (1 + 0.5 / m) * Math.sqrt(rho)
  const maxDegree = o.blowup + 1
  const lde = o.traceLength * o.blowup
  const h = o.traceLength
  const l = m / (rho - (2 * m) / lde)
  const e1 = o.fieldBits - log2(l)
  const e2 = o.fieldBits - log2(l * l * (maxDegree * (h + 2 - 1) + (h - 1)))
  const e3 = o.fieldBits - log2(((0.5 * Math.pow(m + 0.5, 7)) / Math.pow(rho, 1.5)) * lde * lde)
  const eQueries = o.grindingBits - o.queries * log2(alpha)
  return Math.floor(Math.min(e1, e2, e3, eQueries))
}

export const listDecodingSecurity = (o: SecurityInputs): number => {
  const h = o.traceLength
  const mMax = Math.min(Math.ceil(1 / (2 * (Math.sqrt((h + 2) / h) - 1))), 1000)
  let best = -Infinity
  for (let m = 3; m < mMax; m++) best = Math.max(best, listDecodingFor(o, m))
  return Math.min(best, o.hashBits)
}

export const uniqueDecodingSecurity = (o: SecurityInputs): number => {
  const h = o.traceLength
  const lde = h * o.blowup
  const alpha = (1 + (h + 2) / lde) / 2
  const maxDegree = o.blowup + 1
  const bits = Math.floor(
    Math.min(
      o.fieldBits,
      o.fieldBits - log2(maxDegree * (h + 1) + (h - 1)),
      o.fieldBits - log2(lde),
      o.fieldBits - log2(lde + 1),
      o.grindingBits - o.queries * log2(alpha)
    )
  )
  return Math.min(bits, o.hashBits)
}

export const securityLevel = (o: SecurityInputs): SecurityLevel => {
  const listDecoding = listDecodingSecurity(o)
  const uniqueDecoding = uniqueDecodingSecurity(o)
  return {
    conjectured: conjecturedSecurity(o),
    proven: Math.max(listDecoding, uniqueDecoding),
    listDecoding,
    uniqueDecoding
  }
}
