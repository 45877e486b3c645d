/** GET /v1/plans: the seeded plans, in display order. */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { CatalogRepo } from "../../../adapters/store/identity/CatalogRepo.js"
import { CandorApi } from "../Api.js"
import { internal } from "./Access.js"

export const PlansLive = HttpApiBuilder.group(CandorApi, "plans", (handlers) =>
  handlers.handle("listPlans", () =>
    Effect.flatMap(CatalogRepo, (catalog) => catalog.plans).pipe(
      Effect.map((plans) => ({ plans })),
      Effect.catchTag("StoreError", internal)
    )
  )
)
