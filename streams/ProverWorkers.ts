/**
 * The prover role: the proof-job relay (streams/ProofJobs.ts) on the process's store and `Prover`.
 * Any number of prover processes may run: the outbox leases each job to one of them at a time.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { ProofRepo } from "../adapters/store/ProofRepo.js"
import type { Store } from "../adapters/store/Store.js"
import type { Prover } from "../prover/Prover.js"
import { PROVER_OUTBOX } from "./Decisions.js"
import { makeSignal, type RelayOptions, runRelay } from "./OutboxRelay.js"
import { proofRelayDefaults, proveJobWith } from "./ProofJobs.js"

/** Runs until its scope closes. Jobs are found by polling: commits happen in other processes too. */
export const runProverWorkers = (options: Partial<Omit<RelayOptions, "kind">> = {}) =>
  Effect.gen(function* () {
    const wake = yield* makeSignal
    const relay = { ...proofRelayDefaults, ...options, kind: PROVER_OUTBOX }
    yield* runRelay(relay, proveJobWith(relay.maxAttempts), wake).pipe(Effect.forkScoped)
  })

/** The relay as a layer; needs the store, its `SqlClient`, the proofs' repository and a `Prover`. */
export const layer = (
  options: Partial<Omit<RelayOptions, "kind">> = {}
): Layer.Layer<never, never, Store | SqlClient.SqlClient | ProofRepo | Prover> =>
  Layer.scopedDiscard(runProverWorkers(options))
