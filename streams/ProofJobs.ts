/**
 * Proof jobs: the relay of the `prover` outbox kind. The actors queue a job for every sampled
 * checkpoint (core/ProofSampling.ts) in the commit's transaction, owners queue one on demand
 * (`POST /v1/checkpoints/{id}/prove`); here each job is proved and its proof attached to the stored
 * certificate as `verdict_proof`, outside the signature.
 *
 * Durable by construction: a job is completed only once the proof is stored. A prover failure marks
 * the proof `failed` (with the attempt count and the reason) and fails the job, so the relay retries
 * it with backoff and finally keeps it as dead, visible, never dropped; a crash mid-proof leaves the
 * job leased, and it is taken again when the lease runs out. A statement the prover refuses (its
 * verdict is not the rule's) is marked `failed` once and not retried: no retry could prove it.
 * A failure after which no retry comes (the job's last attempt, or a refusal) also writes the
 * `proof.failed` event, in the transaction that marks the proof failed.
 * The `Prover` proves in worker threads: the relay only waits.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Clock from "effect/Clock"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import { ProofJob, ProofRepo } from "../adapters/store/ProofRepo.js"
import { type OutboxItem, Store, StoreError } from "../adapters/store/Store.js"
import { transaction } from "../adapters/store/Transaction.js"
import { proofFailedEvent } from "../core/EventData.js"
import { newEnvelope } from "../core/Events.js"
import { Prover } from "../prover/Prover.js"
import { statementOf } from "../prover/Statement.js"
import { eventDraft } from "../adapters/store/EventOutbox.js"
import { decodePayload, exponentialBackoff, type RelayOptions } from "./OutboxRelay.js"

/** Few jobs per round: the prover's pool is small, and a leased job waits its turn. */
export const proofRelayDefaults: Omit<RelayOptions, "kind"> = {
  batch: 8,
  leaseMs: 120_000,
  maxAttempts: 10,
  backoffMs: exponentialBackoff,
  pollInterval: "500 millis"
}

const decodeProofJob = decodePayload(ProofJob)

/** The prover made a proof its own verifier rejects: a prover bug, retried like any failure. */
export class ProofDidNotVerify extends Data.TaggedError("ProofDidNotVerify")<{ readonly checkpointId: string }> {
  override get message(): string {
    return `the verdict proof made for ${this.checkpointId} does not verify`
  }
}

/**
 * Marks the proof failed; when no retry will come (`final`), with its `proof.failed` event in the
 * same transaction. The event names the agent's organization (through its claim) when it has one.
 */
const recordFailure = (job: ProofJob, error: string, attempts: number, final: boolean) =>
  Effect.gen(function* () {
    const proofs = yield* ProofRepo
    if (!final) return yield* proofs.fail(job.checkpoint_id, error)
    const store = yield* Store
    const sql = yield* SqlClient.SqlClient
    const at = new Date(yield* Clock.currentTimeMillis)
    const orgId = (yield* store.orgConscienceLayer(job.agent_id))?.org_id ?? null
    const event = proofFailedEvent(
      { checkpoint_id: job.checkpoint_id, agent_id: job.agent_id, error, attempts },
      orgId,
      at
    )
    yield* transaction(
      sql,
      Effect.zipRight(proofs.fail(job.checkpoint_id, error), store.enqueueOutbox([eventDraft(newEnvelope(event))]))
    ).pipe(Effect.catchTag("SqlError", (cause) => Effect.fail(new StoreError({ operation: "failProof", cause }))))
  })

/**
 * The relay's handler for one job; `maxAttempts` is the relay's, so the handler knows which
 * attempt is the last (the outbox counts `item.attempts` from 1, this one included).
 */
export const proveJobWith = (maxAttempts: number) => (item: OutboxItem) =>
  Effect.gen(function* () {
    const job = yield* decodeProofJob(item)
    const proofs = yield* ProofRepo
    const certificate = yield* (yield* Store).getCertificate(job.checkpoint_id)
    if (certificate === undefined) {
      // Deleted by retention (which also deletes its proof row): nothing is left to prove.
      return yield* Effect.logInfo("proof job for a checkpoint no longer stored; dropped").pipe(
        Effect.annotateLogs({ checkpoint_id: job.checkpoint_id })
      )
    }
    const started = yield* proofs.start(job)
    if (started === undefined) {
      // Already proved (a job queued twice): make sure the certificate carries the proof.
      const done = yield* proofs.get(job.checkpoint_id)
      if (certificate.verdict_proof === null && done?.proof != null)
        yield* proofs.complete(job.checkpoint_id, done.proof)
      return
    }
    const prover = yield* Prover
    const statement = statementOf(certificate)
    const last = item.attempts >= maxAttempts
    const proof = yield* prover.prove(statement).pipe(
      Effect.tapError((error) =>
        recordFailure(job, `${error.reason}: ${error.message}`, started.attempts, last || error.reason === "refused")
      ),
      // A refused statement stays failed, visibly; retrying could not change the answer.
      Effect.catchIf(
        (error) => error._tag === "ProverError" && error.reason === "refused",
        () => Effect.succeed(undefined)
      )
    )
    if (proof === undefined) {
      return yield* Effect.logWarning("the prover refused a statement").pipe(
        Effect.annotateLogs({ checkpoint_id: job.checkpoint_id })
      )
    }
    // Checked before it is published: a proof that does not verify is a prover bug, retried like a failure.
    // The worker pool checks it on the worker that made it (`verifiesProofs`), off this thread.
    if (prover.verifiesProofs !== true && !(yield* prover.verify(statement, proof))) {
      yield* recordFailure(job, "failed: the proof made does not verify", started.attempts, last)
      return yield* new ProofDidNotVerify({ checkpointId: job.checkpoint_id })
    }
    yield* proofs.complete(job.checkpoint_id, proof)
    yield* Effect.logDebug("verdict proof attached").pipe(
      Effect.annotateLogs({ checkpoint_id: job.checkpoint_id, attempts: started.attempts, prover: prover.id })
    )
  })

/** The handler with the default relay's attempts. */
export const proveJob = proveJobWith(proofRelayDefaults.maxAttempts)
