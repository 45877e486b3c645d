/**
 * The AIR of `candor-verdict/1` (`candor-verdict-air/1`): a trace that applies the rule to each
 * concern row and keeps a running maximum, with every constraint of degree ≤ 2 (so the composition
 * polynomial has degree < N and needs no splitting).
 *
 * Rows: row 0 is zero, concern i fills row i+1, the rest is zero padding (N ≥ n + 2, so the last
 * row is padding). Public columns, known to the verifier from the statement: category code (1..8),
 * severity code (1..4), boundary flag (0/1); 0 on the zero and padding rows.
 *
 * Trace columns (17): one-hot category (8), one-hot severity (4), `hv` = flag · [severity = high],
 * level bits b1 = [level ≥ 1] and b2 = [level ≥ 2], running ORs f1, f2.
 *
 * level = Σ_c cat_c · Σ_s LEVEL[c][s] · sev_s + Σ_c RAISE[c] · cat_c · hv, where LEVEL is the rule
 * for a concern naming no BOUNDARY value and RAISE lifts a `high` concern naming one to 2
 * (it is already 2 in the high-at-boundary categories). Claimed verdict v: f1(N−1) = [v ≥ 1],
 * f2(N−1) = [v ≥ 2].
 */
import type { Verdict } from "../../core/schema/Verdict.js"
import type { ConcernCode } from "../Statement.js"

export const CATEGORY_COLUMNS = 8
export const SEVERITY_COLUMNS = 4
export const COLUMN = { category: 0, severity: 8, highOnValue: 12, b1: 13, b2: 14, f1: 15, f2: 16 } as const
export const TRACE_WIDTH = 17

/** Index of `high` among the severity columns (low, medium, high, critical). */
const HIGH = 2

/**
 * `candor-verdict/1` for one concern naming no BOUNDARY value: 0 clear, 1 review_needed,
 * 2 boundary_violation. Rows: categories in protocol order; columns: low, medium, high, critical.
 * Written out from the rule (test/prover checks it against core/Verdict.ts).
 */
export const LEVEL: ReadonlyArray<ReadonlyArray<0 | 1 | 2>> = [
  [0, 1, 2, 2], // prompt_injection
  [0, 1, 1, 2], // value_misalignment
  [0, 1, 1, 2], // autonomy_violation
  [0, 1, 1, 2], // reasoning_corruption
  [0, 1, 2, 2], // deceptive_reasoning
  [0, 1, 1, 2], // undeclared_intent
  [0, 1, 1, 2], // output_misalignment
  [0, 1, 2, 2] //  output_injection_compliance
]

/** What naming a BOUNDARY value adds to a `high` concern's level, per category. */
export const RAISE: ReadonlyArray<0 | 1> = [0, 1, 1, 1, 0, 1, 1, 0]

export const VERDICT_LEVEL: Readonly<Record<Verdict, 0 | 1 | 2>> = { clear: 0, review_needed: 1, boundary_violation: 2 }

/** The arithmetic the constraints are written in: base-field vectors for the prover, extension scalars for the verifier. */
export interface Algebra<T> {
  readonly add: (a: T, b: T) => T
  readonly sub: (a: T, b: T) => T
  readonly mul: (a: T, b: T) => T
  readonly constant: (k: bigint) => T
}

export interface PublicRow<T> {
  readonly category: T
  readonly severity: T
  readonly boundary: T
}

export const ALL_ROW_CONSTRAINTS = 21
export const TRANSITION_CONSTRAINTS = 2

/** Σ k_i · x_i, skipping zero weights and multiplying by none of weight one. */
const weighted = <T>(A: Algebra<T>, terms: ReadonlyArray<readonly [bigint, T]>): T => {
  let sum: T | undefined
  for (const [k, x] of terms) {
    if (k === 0n) continue
    const term = k === 1n ? x : A.mul(A.constant(k), x)
    sum = sum === undefined ? term : A.add(sum, term)
  }
  return sum ?? A.constant(0n)
}

/**
 * The constraints at one point: `allRows` must vanish on every row, `transitions` on every row but
 * the last (`next` is the following row). The order fixes which random weight each one gets.
 */
export const evaluateConstraints = <T>(
  A: Algebra<T>,
  cur: ReadonlyArray<T>,
  next: ReadonlyArray<T>,
  pub: PublicRow<T>
): { readonly allRows: Array<T>; readonly transitions: Array<T> } => {
  const one = A.constant(1n)
  const col = (i: number): T => cur[i]!
  const cat = Array.from({ length: CATEGORY_COLUMNS }, (_, c) => col(COLUMN.category + c))
  const sev = Array.from({ length: SEVERITY_COLUMNS }, (_, s) => col(COLUMN.severity + s))
  const hv = col(COLUMN.highOnValue)
  const b1 = col(COLUMN.b1)
  const b2 = col(COLUMN.b2)
  const boolean = (x: T): T => A.mul(x, A.sub(x, one))

  const catSum = weighted(
    A,
    cat.map((x) => [1n, x] as const)
  )
  const sevSum = weighted(
    A,
    sev.map((x) => [1n, x] as const)
  )
  const catCode = weighted(
    A,
    cat.map((x, c) => [BigInt(c + 1), x] as const)
  )
  const sevCode = weighted(
    A,
    sev.map((x, s) => [BigInt(s + 1), x] as const)
  )
  let level = A.constant(0n)
  for (let c = 0; c < CATEGORY_COLUMNS; c++) {
    const perSeverity = weighted(
      A,
      sev.map((x, s) => [BigInt(LEVEL[c]![s]!), x] as const)
    )
    level = A.add(level, A.mul(cat[c]!, perSeverity))
  }
  level = A.add(
    level,
    A.mul(
      weighted(
        A,
        cat.map((x, c) => [BigInt(RAISE[c]!), x] as const)
      ),
      hv
    )
  )

  const allRows = [
    ...cat.map(boolean),
    ...sev.map(boolean),
    boolean(b1),
    boolean(b2),
    boolean(catSum), // at most one category per row
    A.sub(catSum, sevSum), // a severity exactly when a category
    A.sub(pub.category, catCode),
    A.sub(pub.severity, sevCode),
    A.sub(hv, A.mul(pub.boundary, sev[HIGH]!)),
    A.sub(A.add(b1, b2), level),
    A.mul(b2, A.sub(one, b1)) // b2 ≤ b1: (b1, b2) encodes the level as 00, 10, 11
  ]
  // f' = f OR b' for booleans: f' − f − b' + f·b' = 0
  const runningOr = (f: number, b: number): T =>
    A.add(A.sub(A.sub(next[f]!, col(f)), next[b]!), A.mul(col(f), next[b]!))
  const transitions = [runningOr(COLUMN.f1, COLUMN.b1), runningOr(COLUMN.f2, COLUMN.b2)]
  return { allRows, transitions }
}

export interface Assertion {
  readonly column: number
  readonly row: number
  readonly value: bigint
}

/** f1 and f2 start at 0 and end at the claimed verdict's bits. */
export const assertionsFor = (traceLength: number, verdict: Verdict): Array<Assertion> => {
  const level = VERDICT_LEVEL[verdict]
  return [
    { column: COLUMN.f1, row: 0, value: 0n },
    { column: COLUMN.f2, row: 0, value: 0n },
    { column: COLUMN.f1, row: traceLength - 1, value: level >= 1 ? 1n : 0n },
    { column: COLUMN.f2, row: traceLength - 1, value: level >= 2 ? 1n : 0n }
  ]
}

/** The public columns over the N rows: category, severity, flag. */
export const publicColumns = (
  codes: ReadonlyArray<ConcernCode>,
  traceLength: number
): [BigUint64Array, BigUint64Array, BigUint64Array] => {
  const columns: [BigUint64Array, BigUint64Array, BigUint64Array] = [
    new BigUint64Array(traceLength),
    new BigUint64Array(traceLength),
    new BigUint64Array(traceLength)
  ]
  codes.forEach(([category, severity, boundary], i) => {
    columns[0][i + 1] = BigInt(category)
    columns[1][i + 1] = BigInt(severity)
    columns[2][i + 1] = BigInt(boundary)
  })
  return columns
}

/** The honest trace for these concerns (columns of N rows). */
export const buildTrace = (codes: ReadonlyArray<ConcernCode>, traceLength: number): Array<BigUint64Array> => {
  const trace = Array.from({ length: TRACE_WIDTH }, () => new BigUint64Array(traceLength))
  let f1 = 0n
  let f2 = 0n
  for (let row = 0; row < traceLength; row++) {
    const code = row >= 1 ? codes[row - 1] : undefined
    if (code !== undefined) {
      const [category, severity, boundary] = code
      const c = category - 1
      const s = severity - 1
      const hv = boundary === 1 && s === HIGH ? 1 : 0
      const level = LEVEL[c]![s]! + RAISE[c]! * hv
      trace[COLUMN.category + c]![row] = 1n
      trace[COLUMN.severity + s]![row] = 1n
      trace[COLUMN.highOnValue]![row] = BigInt(hv)
      trace[COLUMN.b1]![row] = level >= 1 ? 1n : 0n
      trace[COLUMN.b2]![row] = level >= 2 ? 1n : 0n
    }
    f1 |= trace[COLUMN.b1]![row]!
    f2 |= trace[COLUMN.b2]![row]!
    trace[COLUMN.f1]![row] = f1
    trace[COLUMN.f2]![row] = f2
  }
  return trace
}
