/**
 * An organization's evidence redaction (migrations/0027_evidence_redaction.ts): read, and set under
 * the organization's row lock so that the governance entry's `previous_state` is what the change
 * replaced, never a concurrent change's snapshot. What the gateways apply is pushed from here by the
 * API (src/api/handlers/EvidenceRedaction.ts); the gateways never read it from the database.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { EvidenceRedactionMode } from "../../core/schema/EvidenceRedaction.js"
import { type StoreError, storeError } from "./Store.js"

export class EvidenceRedactionRepo extends Context.Tag("candor/adapters/store/EvidenceRedactionRepo")<
  EvidenceRedactionRepo,
  {
    /** The organization's mode; undefined when there is no such organization. */
    readonly get: (orgId: string) => Effect.Effect<EvidenceRedactionMode | undefined, StoreError>
    /** As `get`, holding the organization's row lock until the caller's transaction ends. */
    readonly lock: (orgId: string) => Effect.Effect<EvidenceRedactionMode | undefined, StoreError>
    readonly set: (orgId: string, mode: EvidenceRedactionMode) => Effect.Effect<void, StoreError>
  }
>() {}

const decodeMode = Schema.decodeUnknown(EvidenceRedactionMode)

export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const read = (orgId: string, forUpdate: boolean) =>
    Effect.gen(function* () {
      const [row] = forUpdate
        ? yield* sql<{ evidence_redaction: unknown }>`
            select evidence_redaction from orgs where org_id = ${orgId} for update`
        : yield* sql<{ evidence_redaction: unknown }>`select evidence_redaction from orgs where org_id = ${orgId}`
      return row === undefined ? undefined : yield* decodeMode(row.evidence_redaction)
    })
  return EvidenceRedactionRepo.of({
    get: (orgId) => read(orgId, false).pipe(storeError("evidenceRedaction")),
    lock: (orgId) => read(orgId, true).pipe(storeError("lockEvidenceRedaction")),
    set: (orgId, mode) =>
      sql`update orgs set evidence_redaction = ${mode}, updated_at = now() where org_id = ${orgId}`.pipe(
        Effect.asVoid,
        storeError("setEvidenceRedaction")
      )
  })
})

export const layer: Layer.Layer<EvidenceRedactionRepo, never, SqlClient.SqlClient> = Layer.effect(
  EvidenceRedactionRepo,
  make
)
