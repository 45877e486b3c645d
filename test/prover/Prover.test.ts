/**
 * One conformance suite, run on every Prover layer: the worker pool (the default), and the
 * in-process layer with the WASM and with the TypeScript kernels.
 */
import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, Either, type Layer } from "effect"
import { typescriptKernels } from "../../prover/kernels/Typescript.js"
import * as ProverModule from "../../prover/Prover.js"
import { Prover } from "../../prover/Prover.js"
import { PARAMS } from "../../prover/Params.js"
import { statementHash } from "../../prover/Statement.js"
import { verifyVerdictProofObject } from "../../prover/VerdictProof.js"
import { checkpointId, cyclingConcerns, statementFor, wasmKernels } from "./Support.js"

const wasm = await wasmKernels()
const statement = statementFor(cyclingConcerns(9))
const other = statementFor(cyclingConcerns(9), { checkpoint_id: checkpointId(2) })

const suite = (name: string, proverLayer: Layer.Layer<Prover, unknown>) =>
  layer(proverLayer, { timeout: 60_000 })(name, (it) => {
    it.effect("proves a statement into a verdict_proof object that verifies", () =>
      Effect.gen(function* () {
        const prover = yield* Prover
        const proof = yield* prover.prove(statement)
        expect(proof).toMatchObject({
          type: "candor-verdict-stark",
          version: 1,
          air: "candor-verdict-air/1",
          params: PARAMS.id,
          statement_hash: statementHash(statement, PARAMS),
          security: { conjectured_bits: 128, proven_bits: 110 }
        })
        expect(yield* prover.verify(statement, proof)).toBe(true)
        expect(verifyVerdictProofObject(statement, proof)).toBe(true)
      })
    )

    it.effect("refuses a statement whose verdict is not the rule's", () =>
      Effect.gen(function* () {
        const prover = yield* Prover
        const result = yield* Effect.either(prover.prove({ ...statement, verdict: "clear" }))
        expect(Either.isLeft(result) && result.left.reason).toBe("refused")
      })
    )

    it.effect("rejects its proof for another statement, and any tampered member", () =>
      Effect.gen(function* () {
        const prover = yield* Prover
        const proof = yield* prover.prove(statement)
        expect(yield* prover.verify(other, proof)).toBe(false)
        expect(yield* prover.verify({ ...statement, verdict: "review_needed" }, proof)).toBe(false)
        const bytes = Buffer.from(proof.proof, "base64")
        bytes[bytes.length - 40]! ^= 4
        for (const tampered of [
          { ...proof, proof: bytes.toString("base64") },
          { ...proof, params: "gl3-b8-q8-g0" },
          { ...proof, air: "candor-verdict-air/2" },
          { ...proof, statement_hash: statementHash(other, PARAMS) },
          { ...proof, security: { conjectured_bits: 128, proven_bits: 128 } },
          { ...proof, extra: true },
          { ...proof, proof: "not base64!" },
          null,
          "proof"
        ]) {
          expect(yield* prover.verify(statement, tampered)).toBe(false)
        }
      })
    )

    it.effect("proves many statements concurrently, each verifying", () =>
      Effect.gen(function* () {
        const prover = yield* Prover
        const statements = Array.from({ length: 8 }, (_, i) =>
          statementFor(cyclingConcerns(i * 5), { checkpoint_id: checkpointId(10 + i) })
        )
        const proofs = yield* Effect.forEach(statements, (s) => prover.prove(s), { concurrency: "unbounded" })
        for (const [i, proof] of proofs.entries()) expect(yield* prover.verify(statements[i]!, proof)).toBe(true)
      })
    )

    it.effect("gives the same proof as every other layer (the proof is a function of the statement)", () =>
      Effect.gen(function* () {
        const prover = yield* Prover
        const reference = yield* Prover.pipe(
          Effect.provide(ProverModule.layerInProcess({ kernels: typescriptKernels }))
        )
        expect((yield* prover.prove(statement)).proof).toBe((yield* reference.prove(statement)).proof)
      })
    )
  })

/** The longest the caller's event loop went without a turn while `effect` ran, and how long it ran. */
const eventLoopGapDuring = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.gen(function* () {
    let last = performance.now()
    let longest = 0
    let running = true
    const turn = () => {
      const now = performance.now()
      longest = Math.max(longest, now - last)
      last = now
      if (running) setImmediate(turn)
    }
    setImmediate(turn)
    yield* Effect.yieldNow()
    const start = performance.now()
    yield* effect
    const duration = performance.now() - start
    running = false
    // one more turn of the loop, so a gap that lasted until now is counted
    yield* Effect.async<void>((resume) => void setImmediate(() => resume(Effect.void)))
    return { longest, duration }
  })

describe("Prover", () => {
  it("the default pool has one or two workers", () => {
    expect([1, 2]).toContain(ProverModule.defaultPoolSize())
  })

  // One test: each worker pool started costs seconds (a thread loading the prover).
  it.effect(
    "the worker pool leaves the caller's event loop free while it proves, and verifies each proof on the worker that made it; in process blocks the loop and leaves verifying to the caller",
    () =>
      Effect.gen(function* () {
        const large = statementFor(cyclingConcerns(200))
        const measure = (proverLayer: Layer.Layer<Prover, unknown>) =>
          Effect.gen(function* () {
            const prover = yield* Prover
            yield* prover.prove(statement) // workers started and warm
            const gap = yield* eventLoopGapDuring(prover.prove(large))
            return { ...gap, verifiesProofs: prover.verifiesProofs ?? false }
          }).pipe(Effect.provide(proverLayer))
        const inProcess = yield* measure(ProverModule.layerInProcess({ kernels: wasm }))
        expect(inProcess.longest).toBeGreaterThan(inProcess.duration * 0.9)
        expect(inProcess.verifiesProofs).toBe(false)
        const pooled = yield* measure(ProverModule.layer({ size: 1 }))
        expect(pooled.longest).toBeLessThan(pooled.duration * 0.5)
        expect(pooled.verifiesProofs).toBe(true)
      }),
    60_000
  )
})

suite("Prover.layer (worker threads)", ProverModule.layer({ size: 2 }))
suite("Prover.layerInProcess (WASM kernels)", ProverModule.layerInProcess({ kernels: wasm }))
suite("Prover.layerInProcess (TypeScript kernels)", ProverModule.layerInProcess({ kernels: typescriptKernels }))
