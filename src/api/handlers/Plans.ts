/** GET /v1/plans: the seeded plans, in display order, through the Billing service (services/Billing.ts). */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { Billing } from "../../../services/Billing.js"
import { CandorApi } from "../Api.js"

export const PlansLive = HttpApiBuilder.group(CandorApi, "plans", (handlers) =>
  Effect.map(Billing, (billing) => handlers.handle("listPlans", () => billing.plans))
)
