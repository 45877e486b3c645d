/**
 * `npx tsx bench/Sealing.ts`: what sealing the reasoning-derived fields costs the commit path per
 * checkpoint (adapters/store/SealedFields.ts): the checkpoint (summary and three concerns' evidence
 * of 200 characters), its trace and its certificate sealed as `planCommit` does, beside what the
 * same path already spends serialising the checkpoint. Opening is timed too (every read pays it).
 *
 * Env: BENCH_CHECKPOINTS (default 5000), BENCH_ROUNDS (5).
 */
import type { AgentLogState } from "../core/Attestation.js"
import { generateSecretKey } from "../core/SecretBox.js"
import type { IntegrityCheckpoint } from "../core/schema/Checkpoint.js"
import { certificateFields, checkpointFields, openBody, sealBody, traceFields } from "../adapters/store/SealedFields.js"
import type { CommitInput } from "../adapters/store/Store.js"
import { fresh, makeInput } from "../test/adapters/store/Fixtures.js"
import * as Effect from "effect/Effect"

const total = Number(process.env["BENCH_CHECKPOINTS"] ?? 5000)
const rounds = Number(process.env["BENCH_ROUNDS"] ?? 5)
const key = generateSecretKey()

const inputs: Array<CommitInput> = []
let state: AgentLogState = fresh("bench-sealing")
for (let i = 0; i < total; i++) {
  const input = makeInput("bench-sealing", state, {
    reasoning: () => ({ evidence: "e".repeat(200), summary: "s".repeat(180) })
  })
  state = input.attestation.state
  const concern = input.checkpoint.concerns[0] ?? {
    category: "undeclared_intent" as const,
    severity: "medium" as const,
    evidence: "e".repeat(200),
    description: "d"
  }
  const checkpoint: IntegrityCheckpoint = { ...input.checkpoint, concerns: [concern, concern, concern] }
  inputs.push({ ...input, checkpoint })
}

const perCheckpointUs = (f: (input: CommitInput) => unknown): number => {
  const start = performance.now()
  for (const input of inputs) f(input)
  return ((performance.now() - start) / inputs.length) * 1000
}

const seal = (input: CommitInput) => [
  sealBody(checkpointFields, key, input.checkpoint.checkpoint_id, input.checkpoint),
  sealBody(traceFields, key, input.trace.trace_id, input.trace),
  sealBody(certificateFields, key, input.checkpoint.checkpoint_id, input.attestation.certificate)
]
const sealed = inputs.map((input) => sealBody(checkpointFields, key, input.checkpoint.checkpoint_id, input.checkpoint))

const best = (f: () => number) => Math.min(...Array.from({ length: rounds }, f))
const sealUs = best(() => perCheckpointUs(seal))
const openUs = best(() => {
  const start = performance.now()
  sealed.forEach((body, i) =>
    Effect.runSync(
      openBody(checkpointFields, [key], { id: inputs[i]!.checkpoint.checkpoint_id, sealed_by: key.keyId, body })
    )
  )
  return ((performance.now() - start) / sealed.length) * 1000
})
const jsonUs = best(() => perCheckpointUs((input) => JSON.stringify(input.checkpoint)))
const sample = inputs.slice(0, 100)
const mean = (f: (input: CommitInput, i: number) => number) =>
  sample.reduce((sum, input, i) => sum + f(input, i), 0) / sample.length
const clearBytes = mean((input) => JSON.stringify(input.checkpoint).length)
const sealedBytes = mean((_, i) => JSON.stringify(sealed[i]).length)

console.log(`sealing bench: ${total} checkpoints (3 concerns, 200-character evidence), best of ${rounds}`)
console.log(`  seal checkpoint + trace + certificate  ${sealUs.toFixed(1)} µs per checkpoint (5 values)`)
console.log(`  open checkpoint                        ${openUs.toFixed(1)} µs per checkpoint (4 values)`)
console.log(`  JSON.stringify of the checkpoint       ${jsonUs.toFixed(1)} µs (for scale)`)
console.log(`  checkpoint body                        ${Math.round(clearBytes)} → ${Math.round(sealedBytes)} bytes`)
