/**
 * Verdict proofs (table `proofs`, migration 0001) and the certificates they attach to.
 *
 * A proof job is an outbox item of kind `prover` (streams/ProofJobs.ts): the actors write one for
 * every sampled checkpoint in the commit's transaction, and `request` writes one for an owner who
 * asks. The row records how the job is going (`pending` → `proving` → `completed`, or `failed` with
 * the error, retried by the relay), so a proof that is not being made is visible, never silent.
 * A completed proof is copied into the stored certificate as `verdict_proof`, outside the signature.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type { Certificate } from "../../core/Certificate.js"
import { SecretKeys } from "../keys/SecretKeys.js"
import { json, toCount, toIso } from "./Rows.js"
import { certificateFields, openBodies, type SealedRow } from "./SealedFields.js"
import { StoreError, storeError } from "./Store.js"
import { transaction } from "./Transaction.js"

/** The outbox kind of proof jobs (streams/Decisions.ts `PROVER_OUTBOX`). */
export const PROOF_JOB_KIND = "prover"

export type ProofStatus = "pending" | "proving" | "completed" | "failed"

export interface ProofRecord {
  readonly checkpoint_id: string
  readonly agent_id: string
  readonly status: ProofStatus
  /** The prover's proof object (what the certificate carries as `verdict_proof`); null until completed. */
  readonly proof: Record<string, unknown> | null
  /** Attempts started so far. */
  readonly attempts: number
  /** Why the last attempt failed, if it did. */
  readonly error: string | null
  readonly created_at: string
  readonly updated_at: string
}

/** The payload of a proof job. */
export const ProofJob = Schema.Struct({ checkpoint_id: Schema.String, agent_id: Schema.String })
export interface ProofJob extends Schema.Schema.Type<typeof ProofJob> {}

export class ProofRepo extends Context.Tag("candor/adapters/store/ProofRepo")<
  ProofRepo,
  {
    readonly get: (checkpointId: string) => Effect.Effect<ProofRecord | undefined, StoreError>
    /**
     * An on-demand proof: a `pending` row and a proof job, in one transaction. A proof completed or
     * under way is returned as it is; a failed one is asked again (its job made due now, or a new job
     * when the old one was given up).
     */
    readonly request: (job: ProofJob) => Effect.Effect<ProofRecord, StoreError>
    /** A job was taken: `proving`, one more attempt. `undefined` when the proof is already completed. */
    readonly start: (job: ProofJob) => Effect.Effect<ProofRecord | undefined, StoreError>
    /** Stores the proof and attaches it to the certificate as `verdict_proof`, atomically. */
    readonly complete: (checkpointId: string, proof: Record<string, unknown>) => Effect.Effect<void, StoreError>
    /** The attempt failed; the relay retries the job. The message is shown to API callers: no secrets. */
    readonly fail: (checkpointId: string, error: string) => Effect.Effect<void, StoreError>
    /** The agent's certificates from chain position `fromPosition`, in chain order, at most `limit`. */
    readonly agentCertificates: (
      agentId: string,
      fromPosition: number,
      limit: number
    ) => Effect.Effect<ReadonlyArray<Certificate>, StoreError>
  }
>() {}

interface ProofRow {
  readonly checkpoint_id: string
  readonly agent_id: string
  readonly status: string
  readonly proof: unknown
  readonly attempts: unknown
  readonly error: string | null
  readonly created_at: unknown
  readonly updated_at: unknown
}

const recordOf = (row: ProofRow): ProofRecord => ({
  checkpoint_id: row.checkpoint_id,
  agent_id: row.agent_id,
  status: row.status as ProofStatus,
  proof: (row.proof ?? null) as Record<string, unknown> | null,
  attempts: toCount(row.attempts),
  error: row.error,
  created_at: toIso(row.created_at),
  updated_at: toIso(row.updated_at)
})

const COLUMNS = "checkpoint_id, agent_id, status, proof, attempts, error, created_at, updated_at"

export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const secretKeys = yield* SecretKeys
  const columns = sql.literal(COLUMNS)

  const get = (checkpointId: string) =>
    sql<ProofRow>`select ${columns} from proofs where checkpoint_id = ${checkpointId}`.pipe(
      Effect.map(([row]) => (row === undefined ? undefined : recordOf(row))),
      storeError("getProof")
    )

  const request = (job: ProofJob) =>
    Effect.flatMap(Clock.currentTimeMillis, (millis) => {
      const now = new Date(millis).toISOString()
      return transaction(
        sql,
        Effect.gen(function* () {
          // Serialises requests for one checkpoint, so two of them never queue two jobs.
          yield* sql`select pg_advisory_xact_lock(hashtext(${job.checkpoint_id})) as locked`
          const [existing] = yield* sql<ProofRow>`
          select ${columns} from proofs where checkpoint_id = ${job.checkpoint_id}`
          if (existing !== undefined && existing.status !== "failed") return recordOf(existing)
          const [row] = yield* sql<ProofRow>`
          insert into proofs (checkpoint_id, agent_id, status) values (${job.checkpoint_id}, ${job.agent_id}, 'pending')
          on conflict (checkpoint_id) do update set status = 'pending', updated_at = now()
          returning ${columns}`
          // A job still queued (the actors' one, or a failed one waiting for its retry) is made due now.
          const due = yield* sql<{ id: unknown }>`
          update outbox set due_at = ${now}::timestamptz
          where kind = ${PROOF_JOB_KIND} and not dead and (payload ->> 'checkpoint_id') = ${job.checkpoint_id}
            and (leased_until is null or leased_until <= ${now}::timestamptz)
          returning id`
          const leased =
            due.length > 0
              ? []
              : yield* sql<{ id: unknown }>`
          select id from outbox
          where kind = ${PROOF_JOB_KIND} and not dead and (payload ->> 'checkpoint_id') = ${job.checkpoint_id}`
          if (due.length === 0 && leased.length === 0) {
            yield* sql`
            insert into outbox (kind, payload, due_at, created_at)
            values (${PROOF_JOB_KIND}, ${json(job)}::json, ${now}::timestamptz, ${now}::timestamptz)`
          }
          return recordOf(row!)
        })
      )
    }).pipe(storeError("requestProof"))

  const start = (job: ProofJob) =>
    sql<ProofRow>`
      insert into proofs (checkpoint_id, agent_id, status, attempts) values (${job.checkpoint_id}, ${job.agent_id}, 'proving', 1)
      on conflict (checkpoint_id) do update set status = 'proving', attempts = proofs.attempts + 1, updated_at = now()
      where proofs.status <> 'completed'
      returning ${columns}`.pipe(
      Effect.map(([row]) => (row === undefined ? undefined : recordOf(row))),
      storeError("startProof")
    )

  // One statement, no explicit transaction (atomic all the same): a proof job is a few statements on
  // the thread that also serves the API, so each round trip saved counts. The certificate's body is
  // json (kept as written, not jsonb): its members are rebuilt in their order with only
  // `verdict_proof` replaced (every certificate has the member, null until now; its sealed claim
  // stays sealed as it was), rather than read out, parsed, spread and written back.
  const complete = (checkpointId: string, proof: Record<string, unknown>) =>
    // The proof (~50 KB) is sent once and cast twice.
    sql`
      with input as (select ${json(proof)}::text as proof),
      done as (
        update proofs set status = 'completed', proof = (select proof::jsonb from input), error = null, updated_at = now()
        where checkpoint_id = ${checkpointId}
      )
      update certificates c set body = (
        select json_object_agg(
          e.key, case when e.key = 'verdict_proof' then (select proof::json from input) else e.value end order by e.n
        )
        from json_each(c.body) with ordinality as e(key, value, n)
      )
      where c.checkpoint_id = ${checkpointId}`.pipe(Effect.asVoid, storeError("completeProof"))

  const fail = (checkpointId: string, error: string) =>
    sql`
      update proofs set status = 'failed', error = ${error}, updated_at = now()
      where checkpoint_id = ${checkpointId} and status <> 'completed'`.pipe(Effect.asVoid, storeError("failProof"))

  const agentCertificates = (agentId: string, fromPosition: number, limit: number) =>
    sql<SealedRow<Certificate>>`
      select c.checkpoint_id as id, c.sealed_by, c.body
      from checkpoints k join certificates c on c.checkpoint_id = k.checkpoint_id
      where k.agent_id = ${agentId} and k.position >= ${fromPosition}
      order by k.position limit ${limit}`.pipe(
      Effect.flatMap((rows) => openBodies(certificateFields, secretKeys.all, rows)),
      storeError("agentCertificates")
    )

  return ProofRepo.of({ get, request, start, complete, fail, agentCertificates })
})

export const layer: Layer.Layer<ProofRepo, never, SqlClient.SqlClient | SecretKeys> = Layer.effect(ProofRepo, make)
