/**
 * Dead letters: the service-role key reads every one; an organization's Owner (or the service-role
 * key) reads those naming the organization's agents. Reads only: the workers' recorder
 * (streams/DeadLetters.ts) is the one writer.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { AccessControl } from "../../../adapters/auth/AccessControl.js"
import { CurrentPrincipal } from "../../../adapters/auth/Principal.js"
import { DeadLetterRepo } from "../../../adapters/store/DeadLetterRepo.js"
import { CandorApi } from "../Api.js"
import { internal, requireOrgRole } from "./Access.js"

export const DeadLettersLive = HttpApiBuilder.group(CandorApi, "deadLetters", (handlers) =>
  handlers
    .handle("adminDeadLetters", ({ urlParams }) =>
      Effect.gen(function* () {
        yield* (yield* AccessControl).serviceRole(yield* CurrentPrincipal)
        return yield* (yield* DeadLetterRepo).page(urlParams)
      }).pipe(Effect.catchTag("StoreError", internal))
    )
    .handle("orgDeadLetters", ({ path, urlParams }) =>
      Effect.gen(function* () {
        yield* requireOrgRole(path.org_id, "owner", false)
        return yield* (yield* DeadLetterRepo).orgPage(path.org_id, urlParams)
      }).pipe(Effect.catchTag("StoreError", internal))
    )
)
