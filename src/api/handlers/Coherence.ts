/**
 * GET /v1/orgs/{org_id}/coherence: the fleet coherence of the organization's agents with an active
 * card, for any member of the organization, through the Coherence service (services/Coherence.ts),
 * which caches it in process memory while the fleet is unchanged.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { Coherence } from "../../../services/Coherence.js"
import { CandorApi } from "../Api.js"
import { orgRole } from "./Access.js"

export const CoherenceLive = HttpApiBuilder.group(CandorApi, "coherence", (handlers) =>
  Effect.map(Coherence, (coherence) =>
    handlers.handle("getOrgCoherence", ({ path }) =>
      Effect.zipRight(orgRole(path.org_id), coherence.ofOrg(path.org_id))
    )
  )
)
