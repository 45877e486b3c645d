/**
 * An organization's evidence redaction: every member reads it, Owner and Admin set it through the
 * EvidenceRedaction service (services/EvidenceRedaction.ts). A gateway that cannot be told makes a
 * 503 (the change is stored: the client sends it again).
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { actorOf, CurrentPrincipal } from "../../../adapters/auth/Principal.js"
import { EvidenceRedaction } from "../../../services/EvidenceRedaction.js"
import { CandorApi } from "../Api.js"
import { gatewaysUnreachable, orgRole, requireOrgRole } from "./Access.js"

export const EvidenceRedactionLive = HttpApiBuilder.group(CandorApi, "evidenceRedaction", (handlers) =>
  Effect.map(EvidenceRedaction, (redaction) =>
    handlers
      .handle("getEvidenceRedaction", ({ path }) =>
        Effect.zipRight(orgRole(path.org_id), redaction.get(path.org_id)).pipe(
          Effect.map((mode) => ({ org_id: path.org_id, evidence_redaction: mode }))
        )
      )
      .handle("setEvidenceRedaction", ({ path, payload }) =>
        Effect.gen(function* () {
          yield* requireOrgRole(path.org_id, "admin", true)
          const actor = actorOf(yield* CurrentPrincipal)
          const mode = yield* redaction.set(path.org_id, payload.mode, actor)
          return { org_id: path.org_id, evidence_redaction: mode }
        }).pipe(Effect.catchTag("BusError", gatewaysUnreachable))
      )
  )
)
