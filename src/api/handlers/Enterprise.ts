/** Enterprise contact requests: stored with the caller's user id, answered with the request id. */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { randomUUID } from "node:crypto"
import { CurrentPrincipal } from "../../../adapters/auth/Principal.js"
import { CatalogRepo } from "../../../adapters/store/identity/CatalogRepo.js"
import { CandorApi } from "../Api.js"
import { internal, requireWrite } from "./Access.js"

export const EnterpriseLive = HttpApiBuilder.group(CandorApi, "enterprise", (handlers) =>
  handlers.handle("contact", ({ payload }) =>
    Effect.gen(function* () {
      yield* requireWrite
      const principal = yield* CurrentPrincipal
      const id = `ent_${randomUUID()}`
      yield* (yield* CatalogRepo).addContact({
        id,
        user_id: principal.kind === "service" ? null : principal.userId,
        ...payload
      })
      return { id }
    }).pipe(Effect.catchTag("StoreError", internal))
  )
)
