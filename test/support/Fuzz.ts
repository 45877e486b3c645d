/**
 * fast-check parameters shared by the property tests (issue 24): a fixed seed and
 * a bounded number of runs in `npm test`, so a failure replays; `npm run fuzz` runs the same
 * properties longer (`FUZZ_RUNS`, default 2,000 there) under a fresh seed (`FUZZ_SEED`), and
 * fast-check prints the seed and the shrunk counterexample of any failure.
 */
import type * as fc from "fast-check"

/** The seed of every property in `npm test`. */
export const FIXED_SEED = 24

const integerFromEnv = (name: string): number | undefined => {
  const raw = process.env[name]
  if (raw === undefined || raw === "") return undefined
  const value = Number(raw)
  return Number.isSafeInteger(value) ? value : undefined
}

/** `numRuns` in `npm test` unless FUZZ_RUNS asks for more; the fixed seed unless FUZZ_SEED names one. */
export const fuzzParameters = <T>(numRuns: number): fc.Parameters<T> => ({
  seed: integerFromEnv("FUZZ_SEED") ?? FIXED_SEED,
  numRuns: integerFromEnv("FUZZ_RUNS") ?? numRuns
})
