/**
 * Organization conscience values' routes: Owner and Admin change them and read their log, every
 * member reads them, and whoever may read an agent reads its effective values. The changes are the
 * OrgConscience service's (services/OrgConscience.ts); once one is committed, a gateway that cannot
 * be told makes a 503 (the change is stored: the client sends it again).
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { actorOf, CurrentPrincipal } from "../../../adapters/auth/Principal.js"
import { OrgConscience } from "../../../services/OrgConscience.js"
import { CandorApi } from "../Api.js"
import { readAgent } from "./AgentAccess.js"
import { gatewaysUnreachable, orgRole, requireOrgRole } from "./Access.js"

/** Owner and Admin of the organization write (never while impersonating): the actor recorded. */
const writer = (orgId: string) =>
  Effect.zipRight(requireOrgRole(orgId, "admin", true), Effect.map(CurrentPrincipal, actorOf))

export const OrgConscienceLive = HttpApiBuilder.group(CandorApi, "orgConscience", (handlers) =>
  Effect.map(OrgConscience, (conscience) =>
    handlers
      .handle("getOrgConscience", ({ path }) => Effect.zipRight(orgRole(path.org_id), conscience.get(path.org_id)))
      .handle("createOrgConscienceValue", ({ path, payload }) =>
        writer(path.org_id).pipe(
          Effect.flatMap((actor) => conscience.create(path.org_id, payload, actor)),
          Effect.catchTag("BusError", gatewaysUnreachable)
        )
      )
      .handle("updateOrgConscienceValue", ({ path, payload }) =>
        writer(path.org_id).pipe(
          Effect.flatMap((actor) => conscience.update(path.org_id, path.value_id, payload, actor)),
          Effect.catchTag("BusError", gatewaysUnreachable)
        )
      )
      .handle("deleteOrgConscienceValue", ({ path }) =>
        writer(path.org_id).pipe(
          Effect.flatMap((actor) => conscience.remove(path.org_id, path.value_id, actor)),
          Effect.catchTag("BusError", gatewaysUnreachable)
        )
      )
      .handle("orderOrgConscienceValues", ({ path, payload }) =>
        writer(path.org_id).pipe(
          Effect.flatMap((actor) => conscience.reorder(path.org_id, payload.order, actor)),
          Effect.catchTag("BusError", gatewaysUnreachable)
        )
      )
      .handle("setOrgConscienceMode", ({ path, payload }) =>
        writer(path.org_id).pipe(
          Effect.flatMap((actor) => conscience.setMode(path.org_id, payload, actor)),
          Effect.catchTag("BusError", gatewaysUnreachable)
        )
      )
      .handle("orgConscienceLog", ({ path, urlParams }) =>
        Effect.zipRight(
          requireOrgRole(path.org_id, "admin", false),
          conscience.log(path.org_id, urlParams.limit, urlParams.offset)
        )
      )
      .handle("effectiveConscienceValues", ({ path }) =>
        Effect.zipRight(readAgent(path.agent_id), conscience.effective(path.agent_id))
      )
  )
)
