/**
 * An organization's evidence redaction. A change is one transaction: the new mode (under the
 * organization's row lock) and its entry on the organization's governance log. Once committed it is
 * pushed to the gateways for every agent of the organization (`AgentSettings.evidenceRedaction`),
 * which apply it to the next answers they judge without reading the database. Every accepted write
 * is recorded, also one that changes nothing: the log says who asked for what.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import { actorOf, CurrentPrincipal } from "../../../adapters/auth/Principal.js"
import { AgentState } from "../../../adapters/bus/AgentState.js"
import { NotFound } from "../../../adapters/http/ApiErrors.js"
import { EvidenceRedactionRepo } from "../../../adapters/store/EvidenceRedactionRepo.js"
import { GovernanceLog } from "../../../adapters/store/GovernanceLog.js"
import { IdentityRepo } from "../../../adapters/store/identity/IdentityRepo.js"
import { StoreError } from "../../../adapters/store/Store.js"
import { transaction } from "../../../adapters/store/Transaction.js"
import { orgGovernanceLog } from "../../../core/Governance.js"
import { CandorApi } from "../Api.js"
import { gatewaysUnreachable, internal, orgRole, requireOrgRole } from "./Access.js"

/** Agents of an organization told at once: enough to be quick, few enough not to flood NATS KV. */
const PUSH_CONCURRENCY = 8

const orgNotFound = (orgId: string) => new NotFound({ error: `organization ${orgId} not found` })

export const EvidenceRedactionLive = HttpApiBuilder.group(CandorApi, "evidenceRedaction", (handlers) =>
  handlers
    .handle("getEvidenceRedaction", ({ path }) =>
      Effect.gen(function* () {
        yield* orgRole(path.org_id)
        const mode = yield* (yield* EvidenceRedactionRepo).get(path.org_id)
        if (mode === undefined) return yield* Effect.fail(orgNotFound(path.org_id))
        return { org_id: path.org_id, evidence_redaction: mode }
      }).pipe(Effect.catchTag("StoreError", internal))
    )
    .handle("setEvidenceRedaction", ({ path, payload }) =>
      Effect.gen(function* () {
        yield* requireOrgRole(path.org_id, "admin", true)
        const actor = actorOf(yield* CurrentPrincipal)
        const repo = yield* EvidenceRedactionRepo
        const governance = yield* GovernanceLog
        const identity = yield* IdentityRepo
        const sql = yield* SqlClient.SqlClient
        const agents = yield* transaction(
          sql,
          Effect.gen(function* () {
            const before = yield* repo.lock(path.org_id)
            if (before === undefined) return yield* Effect.fail(orgNotFound(path.org_id))
            yield* repo.set(path.org_id, payload.mode)
            yield* governance.append(orgGovernanceLog(path.org_id), {
              action: "evidence_redaction.set",
              actor,
              previous_state: { evidence_redaction: before },
              new_state: { evidence_redaction: payload.mode }
            })
            return yield* identity.agentsOfOrg(path.org_id)
          })
        ).pipe(
          Effect.catchTag("SqlError", (cause) => Effect.fail(new StoreError({ operation: "evidenceRedaction", cause })))
        )
        // Committed: now the gateways (the change is stored even if they cannot be told; 503 says send it again).
        const state = yield* AgentState
        yield* Effect.forEach(agents, (agentId) => state.update(agentId, { evidenceRedaction: payload.mode }), {
          concurrency: PUSH_CONCURRENCY,
          discard: true
        })
        return { org_id: path.org_id, evidence_redaction: payload.mode }
      }).pipe(Effect.catchTag("StoreError", internal), Effect.catchTag("BusError", gatewaysUnreachable))
    )
)
