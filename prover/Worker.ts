/**
 * A prover worker thread: answers `ProveRequest`s with the fastest kernels it can load (each thread
 * instantiates its own WASM module). Started by `prover/WorkerEntry.mjs`, which registers tsx first.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeWorkerRunner from "@effect/platform-node/NodeWorkerRunner"
import * as WorkerRunner from "@effect/platform/WorkerRunner"
import { Layer } from "effect"
import { proveEffect } from "./ProveEffect.js"
import { ProveRequest } from "./ProveRequest.js"

const ProverWorker = WorkerRunner.layerSerialized(ProveRequest, {
  ProveRequest: ({ statement }) => proveEffect(statement)
}).pipe(Layer.provide(NodeWorkerRunner.layer))

NodeRuntime.runMain(WorkerRunner.launch(ProverWorker))
