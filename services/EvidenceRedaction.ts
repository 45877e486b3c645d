/**
 * An organization's evidence redaction. A change is one transaction: the new mode (under the
 * organization's row lock) and its entry on the organization's governance log. Once committed it is
 * pushed to the gateways for every agent of the organization (`AgentSettings.evidenceRedaction`),
 * which apply it to the next answers they judge without reading the database (a `BusError` then
 * leaves it stored). Every accepted write is recorded, also one that changes nothing: the log says
 * who asked for what. Who may change it is the caller's to check; the actor it names is recorded.
 */
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { AgentState } from "../adapters/bus/AgentState.js"
import { EvidenceRedactionRepo } from "../adapters/store/EvidenceRedactionRepo.js"
import { GovernanceLog } from "../adapters/store/GovernanceLog.js"
import { IdentityRepo } from "../adapters/store/identity/IdentityRepo.js"
import { StoreError } from "../adapters/store/Store.js"
import { transaction } from "../adapters/store/Transaction.js"
import { orgGovernanceLog } from "../core/Governance.js"
import type { EvidenceRedactionMode } from "../core/schema/EvidenceRedaction.js"

/** Agents of an organization told at once: enough to be quick, few enough not to flood NATS KV. */
const PUSH_CONCURRENCY = 8

/** No such organization. */
export class EvidenceRedactionNotFound extends Schema.TaggedError<EvidenceRedactionNotFound>()(
  "EvidenceRedactionNotFound",
  { error: Schema.String },
  HttpApiSchema.annotations({ status: 404 })
) {}

const orgNotFound = (orgId: string) => new EvidenceRedactionNotFound({ error: `organization ${orgId} not found` })

export const make = Effect.gen(function* () {
  const repo = yield* EvidenceRedactionRepo
  const governance = yield* GovernanceLog
  const identity = yield* IdentityRepo
  const sql = yield* SqlClient.SqlClient
  const state = yield* AgentState

  /** The organization's mode. */
  const get = (orgId: string) =>
    Effect.flatMap(repo.get(orgId), (mode) =>
      mode === undefined ? Effect.fail(orgNotFound(orgId)) : Effect.succeed(mode)
    )

  /** Sets the organization's mode, then tells the gateways of each of its agents. */
  const set = (orgId: string, mode: EvidenceRedactionMode, actor: string) =>
    Effect.gen(function* () {
      const agents = yield* transaction(
        sql,
        Effect.gen(function* () {
          const before = yield* repo.lock(orgId)
          if (before === undefined) return yield* orgNotFound(orgId)
          yield* repo.set(orgId, mode)
          yield* governance.append(orgGovernanceLog(orgId), {
            action: "evidence_redaction.set",
            actor,
            previous_state: { evidence_redaction: before },
            new_state: { evidence_redaction: mode }
          })
          return yield* identity.agentsOfOrg(orgId)
        })
      ).pipe(
        Effect.catchTag("SqlError", (cause) => Effect.fail(new StoreError({ operation: "evidenceRedaction", cause })))
      )
      // Committed: now the gateways (the change is stored even if they cannot be told).
      yield* Effect.forEach(agents, (agentId) => state.update(agentId, { evidenceRedaction: mode }), {
        concurrency: PUSH_CONCURRENCY,
        discard: true
      })
      return mode
    })

  return { get, set }
})

export class EvidenceRedaction extends Context.Tag("candor/services/EvidenceRedaction")<
  EvidenceRedaction,
  Effect.Effect.Success<typeof make>
>() {}

export const layer = Layer.effect(EvidenceRedaction, make)
