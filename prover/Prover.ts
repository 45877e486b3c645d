/**
 * The verdict prover as a service. `prove` makes the STARK of a statement and wraps it in the
 * certificate's `verdict_proof` object; `verify` checks such an object against a statement.
 *
 * - `layer` (the default): proving runs in a small pool of `worker_threads`, never on the caller's
 *   event loop (a proof takes milliseconds to tens of milliseconds of synchronous CPU). Each worker
 *   also verifies the proof it made and wraps it (prover/Worker.ts), so a proof costs the caller's
 *   thread one small message each way (`verifiesProofs`); `verify` itself runs in place.
 * - `layerInProcess`: proves on the calling thread, with the kernels given (WASM or TypeScript).
 *   For the CLI, tests and benchmarks; it blocks the event loop while it proves.
 *
 * Both pass the same conformance suite (test/prover/Prover.test.ts).
 */
import * as NodeWorker from "@effect/platform-node/NodeWorker"
import * as Worker from "@effect/platform/Worker"
import { Context, Effect, Layer } from "effect"
import { availableParallelism } from "node:os"
import { Worker as WorkerThread } from "node:worker_threads"
import type { Kernels } from "./kernels/Kernels.js"
import { ProverError } from "./ProverError.js"
import { proveEffect } from "./ProveEffect.js"
import { ProveRequest } from "./ProveRequest.js"
import type { VerdictStatement } from "./Statement.js"
import { type VerdictProofObject, verdictProofObject, verifyVerdictProofObject } from "./VerdictProof.js"

export class Prover extends Context.Tag("candor/prover/Prover")<
  Prover,
  {
    /** Which implementation answers, for logs and the proof status endpoint. */
    readonly id: string
    /** A proof of the statement; fails `refused` when its verdict is not the rule's. */
    readonly prove: (statement: VerdictStatement) => Effect.Effect<VerdictProofObject, ProverError>
    /** Whether `proof` (any JSON value) is a valid verdict proof of the statement. */
    readonly verify: (statement: VerdictStatement, proof: unknown) => Effect.Effect<boolean>
    /**
     * `prove` has already verified each proof it returns (it fails `failed` otherwise), so a caller
     * need not `verify` it again before publishing it. Absent: the caller checks.
     */
    readonly verifiesProofs?: boolean
  }
>() {}

const verify = (statement: VerdictStatement, proof: unknown): Effect.Effect<boolean> =>
  Effect.sync(() => verifyVerdictProofObject(statement, proof))

/** Proves on the calling thread. */
export const layerInProcess = (options: { readonly kernels?: Kernels | undefined } = {}): Layer.Layer<Prover> =>
  Layer.succeed(Prover, {
    id: `candor-stark/in-process${options.kernels === undefined ? "" : `/${options.kernels.name}`}`,
    prove: (statement) =>
      proveEffect(statement, options.kernels).pipe(
        Effect.map((proof) => verdictProofObject(statement, proof)),
        Effect.withSpan("Prover.prove")
      ),
    verify
  })

export const WORKER_ENTRY = new URL("./WorkerEntry.mjs", import.meta.url)

/** One worker per spare core, at most two: proofs are short, and the gateway needs its cores. */
export const defaultPoolSize = (): number => Math.max(1, Math.min(2, availableParallelism() - 1))

/** Proves in `size` worker threads; they start with the layer and stop when its scope closes. */
export const layer = (options: { readonly size?: number | undefined } = {}): Layer.Layer<Prover, ProverError> =>
  Layer.scoped(
    Prover,
    Effect.gen(function* () {
      const pool = yield* Worker.makePoolSerialized<ProveRequest>({ size: options.size ?? defaultPoolSize() })
      return {
        id: "candor-stark/worker-pool",
        verifiesProofs: true,
        prove: (statement: VerdictStatement) =>
          pool.executeEffect(new ProveRequest({ statement })).pipe(
            Effect.catchTags({
              WorkerError: (error) =>
                Effect.fail(new ProverError({ reason: "failed", message: `prover worker: ${error.message}` })),
              ParseError: (error) =>
                Effect.fail(new ProverError({ reason: "failed", message: `prover worker message: ${error.message}` }))
            }),
            Effect.withSpan("Prover.prove")
          ),
        verify
      }
    }).pipe(
      Effect.mapError((error) =>
        error instanceof ProverError
          ? error
          : new ProverError({ reason: "failed", message: `starting the prover workers: ${error.message}` })
      )
    )
  ).pipe(Layer.provide(NodeWorker.layer(() => new WorkerThread(WORKER_ENTRY))))
