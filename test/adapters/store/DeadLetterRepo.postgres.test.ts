/** The dead-letter repository on PostgreSQL (cases in DeadLetterRepoCases.ts), on a throwaway database. */
import { it } from "@effect/vitest"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as DeadLetterRepo from "../../../adapters/store/DeadLetterRepo.js"
import { migrated } from "../../../adapters/store/StoreDatabase.js"
import { describeIntegration } from "../../support/Integration.js"
import { throwawayDatabase } from "../../support/Postgres.js"
import { deadLetterPages } from "./DeadLetterRepoCases.js"

describeIntegration("postgres", "DeadLetterRepo (PostgreSQL)", () => {
  it.scoped(
    "stored once by id; bounded pages by cursor; an organization's pages by its agents",
    () =>
      Effect.gen(function* () {
        const url = yield* throwawayDatabase
        const db = DeadLetterRepo.layer.pipe(Layer.provideMerge(migrated(PgClient.layer({ url }))))
        return yield* deadLetterPages.pipe(Effect.provide(db))
      }),
    { timeout: 60_000 }
  )
})
