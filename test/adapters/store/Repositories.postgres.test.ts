/**
 * The repository conformance suite (RepositoryConformance.ts) on PostgreSQL (TEST_DATABASE_URL):
 * one throwaway database for the whole file, migrated once, through `StoreDatabase.layer` as
 * `candor serve` builds it when DATABASE_URL is set. There, `pg` runs concurrent statements on
 * separate connections, so the cases of concurrent writes (trust edges, teams, re-evaluations) test
 * the locks and unique indexes rather than PGlite's one connection.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as SecretKeys from "../../../adapters/keys/SecretKeys.js"
import * as StoreDatabase from "../../../adapters/store/StoreDatabase.js"
import { layerIntegration } from "../../support/Integration.js"
import { throwawayDatabase } from "../../support/Postgres.js"
import { repositoryConformance } from "./RepositoryConformance.js"

const OnPostgres = Layer.unwrapScoped(
  Effect.map(throwawayDatabase, (url) =>
    StoreDatabase.layer({ databaseUrl: Option.some(url), dataDir: "unused" }).pipe(
      Layer.provide(SecretKeys.layerEphemeral)
    )
  )
)

layerIntegration("postgres", OnPostgres, { timeout: "90 seconds" })("Repositories on PostgreSQL", (it) => {
  repositoryConformance(it)
})
