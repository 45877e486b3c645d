/**
 * A prover worker thread: answers `ProveRequest`s with the fastest kernels it can load (each thread
 * instantiates its own WASM module). Started by `prover/WorkerEntry.mjs`, which registers tsx first.
 *
 * It verifies each proof it makes before answering (a proof that does not verify is a prover bug,
 * answered as a `failed` ProverError, so the job is retried): the check runs here, on the prover's
 * own thread, not on the thread that serves the store and the API.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeWorkerRunner from "@effect/platform-node/NodeWorkerRunner"
import * as WorkerRunner from "@effect/platform/WorkerRunner"
import { Effect, Layer } from "effect"
import { ProverError } from "./ProverError.js"
import { proveEffect } from "./ProveEffect.js"
import { ProveRequest } from "./ProveRequest.js"
import { verifyStatement } from "./stark/Verify.js"
import { verdictProofObject } from "./VerdictProof.js"

const ProverWorker = WorkerRunner.layerSerialized(ProveRequest, {
  ProveRequest: ({ statement }) =>
    Effect.flatMap(proveEffect(statement), (proof) =>
      verifyStatement(statement, proof).ok
        ? Effect.succeed(verdictProofObject(statement, proof))
        : Effect.fail(new ProverError({ reason: "failed", message: "the proof made does not verify" }))
    )
}).pipe(Layer.provide(NodeWorkerRunner.layer))

NodeRuntime.runMain(WorkerRunner.launch(ProverWorker))
