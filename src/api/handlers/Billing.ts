/** Promo validation: the seeded (or admin-configured) codes, case-insensitive. */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { CatalogRepo } from "../../../adapters/store/identity/CatalogRepo.js"
import { CandorApi } from "../Api.js"
import { internal } from "./Access.js"

export const BillingLive = HttpApiBuilder.group(CandorApi, "billing", (handlers) =>
  handlers.handle("validatePromo", ({ payload }) =>
    Effect.gen(function* () {
      const promo = yield* (yield* CatalogRepo).promo(payload.code.trim(), new Date())
      return promo === undefined
        ? { valid: false, discount_percent: 0, discount_amount_cents: 0, name: "" }
        : {
            valid: true,
            discount_percent: promo.discount_percent,
            discount_amount_cents: promo.discount_amount_cents,
            name: promo.name
          }
    }).pipe(Effect.catchTag("StoreError", internal))
  )
)
