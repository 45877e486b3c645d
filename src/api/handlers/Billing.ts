/** Promo validation: the seeded (or admin-configured) codes, case-insensitive, through the Billing service (services/Billing.ts). */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { Billing } from "../../../services/Billing.js"
import { CandorApi } from "../Api.js"

export const BillingLive = HttpApiBuilder.group(CandorApi, "billing", (handlers) =>
  Effect.map(Billing, (billing) =>
    handlers.handle("validatePromo", ({ payload }) => billing.validatePromo(payload.code))
  )
)
