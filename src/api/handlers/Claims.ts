/**
 * Claiming an agent by proving possession of its provider key, through the Claims service
 * (services/Claims.ts): a personal user with write access claims, into an organization only as its
 * Admin or Owner. A gateway that cannot be told makes a 503 (the claim is stored: the client sends
 * it again).
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { CurrentPrincipal } from "../../../adapters/auth/Principal.js"
import { Claims } from "../../../services/Claims.js"
import { CandorApi } from "../Api.js"
import { gatewaysUnreachable, personalUser, requireOrgRole, requireWrite } from "./Access.js"

export const ClaimsLive = HttpApiBuilder.group(CandorApi, "claims", (handlers) =>
  Effect.map(Claims, (claims) =>
    handlers.handle("claimAgent", ({ payload }) =>
      Effect.gen(function* () {
        yield* requireWrite
        const userId = yield* personalUser(yield* CurrentPrincipal)
        if (payload.org_id !== undefined) yield* requireOrgRole(payload.org_id, "admin", true)
        return yield* claims.claim(payload, userId)
      }).pipe(Effect.catchTag("BusError", gatewaysUnreachable))
    )
  )
)
