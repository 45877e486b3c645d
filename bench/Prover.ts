/**
 * `npm run bench:prover`: the verdict STARK at 0, 4, 16 and 64 concerns, with the WASM kernels
 * (the default when built) and the TypeScript fallback. Prove and verify times (p50, p99), proof
 * size, peak memory, and the security of the pinned parameter set at each trace length.
 *
 * Each (kernels, size) runs in its own child process, so its peak RSS is its own; the baseline is
 * the RSS of that child after loading the prover and before the first proof. A last row measures a
 * proof through the default `Prover.layer` (worker threads), message passing included.
 *
 * Wall-clock times include whatever else the machine runs; the CPU-time columns (this process's
 * user + system time per operation) show the cost of a proof itself.
 *
 * Targets (issue 6): prove p50 < 100 ms and verify < 10 ms at 16 concerns, proofs < 64 KB.
 */
import { Effect } from "effect"
import { execFileSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import { CONCERN_CATEGORIES, SEVERITIES } from "../core/schema/Concern.js"
import type { Kernels } from "../prover/kernels/Kernels.js"
import { typescriptKernels } from "../prover/kernels/Typescript.js"
import { loadWasmKernels } from "../prover/kernels/Wasm.js"
import { PARAMS, securityOf, traceLengthFor } from "../prover/Params.js"
import * as ProverModule from "../prover/Prover.js"
import { Prover } from "../prover/Prover.js"
import { proveStatement } from "../prover/stark/Prove.js"
import { verifyStatement } from "../prover/stark/Verify.js"
import type { StatementConcern, VerdictStatement } from "../prover/Statement.js"
import { checkpointId, statementFor } from "../test/prover/Support.js"

const SIZES = [0, 4, 16, 64] as const

/** n concerns varied by `seed`, claiming the rule's verdict (the tests' statement otherwise). */
const statementWith = (n: number, seed: number): VerdictStatement => {
  const concerns: Array<StatementConcern> = Array.from({ length: n }, (_, i) => ({
    category: CONCERN_CATEGORIES[(i * 5 + seed) % CONCERN_CATEGORIES.length]!,
    severity: SEVERITIES[(i * 3 + seed) % SEVERITIES.length]!,
    boundary: (i + seed) % 4 === 0
  }))
  return statementFor(concerns, { checkpoint_id: checkpointId(seed) })
}

const percentile = (sorted: ReadonlyArray<number>, p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!

interface Measurement {
  readonly kernels: string
  readonly concerns: number
  readonly proveP50: number
  readonly proveP99: number
  /** CPU time of the proving thread, p50: what a proof costs when the machine is shared. */
  readonly proveCpuP50: number
  readonly verifyCpuP50: number
  readonly verifyP50: number
  readonly verifyP99: number
  readonly proofBytes: number
  readonly baselineRssMb: number
  readonly peakRssMb: number
}

/** Child mode: measure one (kernels, size) and print one JSON line. */
const measure = (kernels: Kernels, concerns: number): Measurement => {
  const runs = kernels.name === "wasm" ? 200 : 60
  const baselineRssMb = process.memoryUsage().rss / 2 ** 20
  const statements = Array.from({ length: runs + 10 }, (_, i) => statementWith(concerns, i + 1))
  const prove: Array<number> = []
  const verify: Array<number> = []
  const proveCpu: Array<number> = []
  const verifyCpu: Array<number> = []
  const cpuMs = (since: NodeJS.CpuUsage): number => {
    const used = process.cpuUsage(since)
    return (used.user + used.system) / 1000
  }
  let proofBytes = 0
  statements.forEach((statement, i) => {
    const c0 = process.cpuUsage()
    const t0 = performance.now()
    const proof = proveStatement(statement, { kernels })
    const t1 = performance.now()
    const provedCpu = cpuMs(c0)
    const c1 = process.cpuUsage()
    const result = verifyStatement(statement, proof, { kernels })
    const t2 = performance.now()
    const verifiedCpu = cpuMs(c1)
    if (!result.ok) throw new Error(`proof did not verify: ${result.reason}`)
    proofBytes = Math.max(proofBytes, proof.length)
    if (i >= 10) {
      // the first ten warm the JIT up
      prove.push(t1 - t0)
      verify.push(t2 - t1)
      proveCpu.push(provedCpu)
      verifyCpu.push(verifiedCpu)
    }
  })
  for (const times of [prove, verify, proveCpu, verifyCpu]) times.sort((a, b) => a - b)
  return {
    kernels: kernels.name,
    concerns,
    proveP50: percentile(prove, 50),
    proveP99: percentile(prove, 99),
    proveCpuP50: percentile(proveCpu, 50),
    verifyCpuP50: percentile(verifyCpu, 50),
    verifyP50: percentile(verify, 50),
    verifyP99: percentile(verify, 99),
    proofBytes,
    baselineRssMb,
    peakRssMb: process.resourceUsage().maxRSS / 1024
  }
}

const childArgs = process.argv.indexOf("--child")
if (childArgs !== -1) {
  const [name, size] = process.argv.slice(childArgs + 1)
  const kernels = name === "wasm" ? loadWasmKernels() : typescriptKernels
  if (kernels === undefined) throw new Error("the WASM kernels are not built: npm run build:wasm")
  console.log(JSON.stringify(measure(kernels, Number(size))))
  process.exit(0)
}

const self = fileURLToPath(import.meta.url)
const inChild = (kernels: string, concerns: number): Measurement =>
  JSON.parse(
    execFileSync(process.execPath, ["--import", "tsx", self, "--child", kernels, String(concerns)], {
      encoding: "utf8"
    }).trim()
  )

const ms = (x: number): string => (x < 10 ? x.toFixed(2) : x.toFixed(1))
const pad = (cells: ReadonlyArray<string>, widths: ReadonlyArray<number>): string =>
  cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ")

const kernelSets = loadWasmKernels() === undefined ? ["typescript"] : ["wasm", "typescript"]
if (kernelSets.length === 1) console.log("note: the WASM kernels are not built (npm run build:wasm); TypeScript only\n")

console.log(
  `verdict STARK, parameter set ${PARAMS.id} (Goldilocks³ challenges, blowup ${PARAMS.blowup}, ${PARAMS.queries} queries, ${PARAMS.grindingBits} grinding bits, SHA-256)\n`
)
const header = [
  "kernels",
  "concerns (N)",
  "prove p50",
  "prove p99",
  "(cpu p50)",
  "verify p50",
  "verify p99",
  "(cpu p50)",
  "proof",
  "peak RSS (base)",
  "conj.",
  "proven"
]
const widths = [10, 12, 10, 10, 9, 10, 10, 9, 9, 16, 5, 6]
console.log(pad(header, widths))
const results: Array<Measurement> = []
for (const kernels of kernelSets) {
  for (const concerns of SIZES) {
    const m = inChild(kernels, concerns)
    results.push(m)
    const n = traceLengthFor(concerns)
    const security = securityOf(PARAMS, n)
    console.log(
      pad(
        [
          m.kernels,
          `${concerns} (${n})`,
          `${ms(m.proveP50)} ms`,
          `${ms(m.proveP99)} ms`,
          `${ms(m.proveCpuP50)} ms`,
          `${ms(m.verifyP50)} ms`,
          `${ms(m.verifyP99)} ms`,
          `${ms(m.verifyCpuP50)} ms`,
          `${(m.proofBytes / 1024).toFixed(1)} KB`,
          `${m.peakRssMb.toFixed(0)} (${m.baselineRssMb.toFixed(0)}) MB`,
          String(security.conjectured),
          String(security.proven)
        ],
        widths
      )
    )
  }
}

// Through the default layer: worker threads, the statement and proof crossing the thread boundary.
const pooled = await Effect.runPromise(
  Effect.gen(function* () {
    const prover = yield* Prover
    const times: Array<number> = []
    for (let i = 0; i < 110; i++) {
      const statement = statementWith(16, i + 1)
      const t0 = performance.now()
      yield* prover.prove(statement)
      if (i >= 10) times.push(performance.now() - t0)
    }
    return times.sort((a, b) => a - b)
  }).pipe(Effect.provide(ProverModule.layer({ size: 1 })))
)
console.log(
  `\nProver.layer (1 worker thread), 16 concerns, round trip: p50 ${ms(percentile(pooled, 50))} ms, p99 ${ms(percentile(pooled, 99))} ms`
)

const at16 = results.find((m) => m.concerns === 16 && m.kernels === kernelSets[0])!
const largest = Math.max(...results.map((m) => m.proofBytes))
console.log("\ntargets (16 concerns, default kernels):")
console.log(`  prove p50 < 100 ms: ${ms(at16.proveP50)} ms ${at16.proveP50 < 100 ? "met" : "MISSED"}`)
console.log(
  `  verify < 10 ms:     p50 ${ms(at16.verifyP50)} ms, p99 ${ms(at16.verifyP99)} ms (judged on p50) ${at16.verifyP50 < 10 ? "met" : "MISSED"}`
)
console.log(`  proof < 64 KB:      largest ${(largest / 1024).toFixed(1)} KB ${largest < 64 * 1024 ? "met" : "MISSED"}`)
const security = SIZES.map((c) => securityOf(PARAMS, traceLengthFor(c)))
console.log(
  `\nsecurity: conjectured ${Math.min(...security.map((s) => s.conjectured))} bits (capped by SHA-256), proven ≥ ${Math.min(...security.map((s) => s.proven))} bits (list-decoding regime) at these sizes`
)
