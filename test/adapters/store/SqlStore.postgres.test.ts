/**
 * The store conformance suite on PostgreSQL (TEST_DATABASE_URL), in a throwaway database, through
 * `StoreDatabase.layer` as `candor serve` builds it when DATABASE_URL is set.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as StoreDatabase from "../../../adapters/store/StoreDatabase.js"
import { throwawayDatabase } from "../../support/Postgres.js"
import { storeConformance } from "./Conformance.js"
import { layerIntegration } from "../../support/Integration.js"
import * as SecretKeys from "../../../adapters/keys/SecretKeys.js"

const StoreOnPostgres = Layer.unwrapScoped(
  Effect.map(throwawayDatabase, (url) =>
    StoreDatabase.layer({ databaseUrl: Option.some(url), dataDir: "unused" }).pipe(
      Layer.provide(SecretKeys.layerEphemeral)
    )
  )
)

layerIntegration("postgres", StoreOnPostgres, { timeout: "60 seconds" })("SqlStore on PostgreSQL", (it) => {
  storeConformance(it)
})
