/**
 * The proof repository's cases, run in the repository conformance suite (RepositoryConformance.ts)
 * on PGlite and PostgreSQL: proof rows move pending → proving → completed (or failed and asked
 * again); completing attaches the proof to the stored certificate without touching what the
 * signature covers; on-demand requests never queue a second job for one checkpoint.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { expect } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as ProofRepo from "../../../adapters/store/ProofRepo.js"
import { Store } from "../../../adapters/store/Store.js"
import { verifyCertificate } from "../../../core/Certificate.js"
import { fresh, makeInputs, resolveKey, uniqueId } from "./Fixtures.js"

const proofObject = { type: "test-proof", proof: "AAAA" }

const liveJobs = (checkpointId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ id: unknown }>`
      select id from outbox where kind = 'prover' and not dead and (payload ->> 'checkpoint_id') = ${checkpointId}`
  ).pipe(Effect.map((rows) => rows.length))

export const proofRows = Effect.gen(function* () {
  const store = yield* Store
  const proofs = yield* ProofRepo.ProofRepo
  const agentId = uniqueId("agt-repo")
  const { inputs } = makeInputs(agentId, fresh(agentId), 3)
  expect(yield* store.commitBatch(inputs)).toEqual({ _tag: "Committed" })
  const checkpointId = inputs[0]!.checkpoint.checkpoint_id
  const job = { checkpoint_id: checkpointId, agent_id: agentId }

  expect(yield* proofs.get(checkpointId)).toBeUndefined()
  const requested = yield* proofs.request(job)
  expect(requested).toMatchObject({ status: "pending", attempts: 0, proof: null, error: null })
  // A second request while one is pending queues nothing more.
  yield* proofs.request(job)
  expect(yield* liveJobs(checkpointId)).toBe(1)

  expect(yield* proofs.start(job)).toMatchObject({ status: "proving", attempts: 1 })
  yield* proofs.fail(checkpointId, "failed: boom")
  expect(yield* proofs.get(checkpointId)).toMatchObject({
    status: "failed",
    attempts: 1,
    error: "failed: boom"
  })
  // Asked again while its job is still queued: the same job, made due now.
  expect(yield* proofs.request(job)).toMatchObject({ status: "pending", attempts: 1 })
  expect(yield* liveJobs(checkpointId)).toBe(1)
  expect(yield* proofs.start(job)).toMatchObject({ status: "proving", attempts: 2 })

  const before = (yield* store.getCertificate(checkpointId))!
  yield* proofs.complete(checkpointId, proofObject)
  expect(yield* proofs.get(checkpointId)).toMatchObject({
    status: "completed",
    attempts: 2,
    error: null,
    proof: proofObject
  })
  const certificate = (yield* store.getCertificate(checkpointId))!
  expect(certificate.verdict_proof).toEqual(proofObject)
  // Only `verdict_proof` changed; the members keep their order.
  expect(Object.keys(certificate)).toEqual(Object.keys(before))
  expect({ ...certificate, verdict_proof: null }).toEqual(before)
  expect(verifyCertificate(certificate, { resolveKey, verifyVerdictProof: () => true })).toMatchObject({
    valid: true,
    errors: []
  })
  // Completed is final: a late start or failure changes nothing; a request returns it as it is.
  expect(yield* proofs.start(job)).toBeUndefined()
  yield* proofs.fail(checkpointId, "late")
  expect(yield* proofs.request(job)).toMatchObject({ status: "completed", attempts: 2 })
})

export const givenUpJobAskedAgain = Effect.gen(function* () {
  const store = yield* Store
  const proofs = yield* ProofRepo.ProofRepo
  const sql = yield* SqlClient.SqlClient
  const agentId = uniqueId("agt-repo-dead")
  const { inputs } = makeInputs(agentId, fresh(agentId), 1)
  yield* store.commitBatch(inputs)
  const checkpointId = inputs[0]!.checkpoint.checkpoint_id
  const job = { checkpoint_id: checkpointId, agent_id: agentId }
  yield* proofs.request(job)
  yield* proofs.start(job)
  yield* proofs.fail(checkpointId, "failed: gone")
  yield* sql`update outbox set dead = true where (payload ->> 'checkpoint_id') = ${checkpointId}`
  expect(yield* liveJobs(checkpointId)).toBe(0)
  expect(yield* proofs.request(job)).toMatchObject({ status: "pending" })
  expect(yield* liveJobs(checkpointId)).toBe(1)
})

export const certificatesInChainOrder = Effect.gen(function* () {
  const store = yield* Store
  const proofs = yield* ProofRepo.ProofRepo
  const agentId = uniqueId("agt-repo-scan")
  const { inputs } = makeInputs(agentId, fresh(agentId), 5)
  yield* store.commitBatch(inputs)
  const first = yield* proofs.agentCertificates(agentId, 0, 3)
  const rest = yield* proofs.agentCertificates(agentId, 3, 3)
  expect([...first, ...rest].map((c) => c.chain.position)).toEqual([0, 1, 2, 3, 4])
  expect(rest.map((c) => c.subject.checkpoint_id)).toEqual(
    inputs.slice(3).map((input) => input.checkpoint.checkpoint_id)
  )
})
