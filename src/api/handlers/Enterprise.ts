/**
 * Enterprise contact requests: stored with the caller's user id, answered with the request id, through
 * the Billing service (services/Billing.ts).
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { CurrentPrincipal } from "../../../adapters/auth/Principal.js"
import { Billing } from "../../../services/Billing.js"
import { CandorApi } from "../Api.js"
import { requireWrite } from "./Access.js"

export const EnterpriseLive = HttpApiBuilder.group(CandorApi, "enterprise", (handlers) =>
  Effect.map(Billing, (billing) =>
    handlers.handle("contact", ({ payload }) =>
      Effect.gen(function* () {
        yield* requireWrite
        const principal = yield* CurrentPrincipal
        return yield* billing.contact(principal.kind === "service" ? null : principal.userId, payload)
      })
    )
  )
)
