/**
 * The repository conformance suite (RepositoryConformance.ts) on PostgreSQL (TEST_DATABASE_URL):
 * one throwaway database for the whole file, migrated once, through `StoreDatabase.layer` as
 * `candor serve` builds it when DATABASE_URL is set. There, `pg` runs concurrent statements on
 * separate connections, so the cases of concurrent writes (trust edges, teams, re-evaluations) test
 * the locks and unique indexes rather than PGlite's one connection.
 */
import { layerIntegration } from "../../support/Integration.js"
import { layerStore } from "../../support/Postgres.js"
import { repositoryConformance } from "./RepositoryConformance.js"

layerIntegration("postgres", layerStore, { timeout: "90 seconds" })("Repositories on PostgreSQL", (it) => {
  repositoryConformance(it)
})
