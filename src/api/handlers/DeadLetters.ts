/**
 * Dead letters: the service-role key reads every one; an organization's Owner (or the service-role
 * key) reads those naming the organization's agents, through the DeadLetters service
 * (services/DeadLetters.ts). Reads only: the workers' recorder (streams/DeadLetters.ts) is the one writer.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { AccessControl } from "../../../adapters/auth/AccessControl.js"
import { CurrentPrincipal } from "../../../adapters/auth/Principal.js"
import { DeadLetters } from "../../../services/DeadLetters.js"
import { CandorApi } from "../Api.js"
import { requireOrgRole } from "./Access.js"

export const DeadLettersLive = HttpApiBuilder.group(CandorApi, "deadLetters", (handlers) =>
  Effect.map(DeadLetters, (deadLetters) =>
    handlers
      .handle("adminDeadLetters", ({ urlParams }) =>
        Effect.gen(function* () {
          yield* (yield* AccessControl).serviceRole(yield* CurrentPrincipal)
          return yield* deadLetters.page(urlParams)
        })
      )
      .handle("orgDeadLetters", ({ path, urlParams }) =>
        Effect.zipRight(requireOrgRole(path.org_id, "owner", false), deadLetters.orgPage(path.org_id, urlParams))
      )
  )
)
