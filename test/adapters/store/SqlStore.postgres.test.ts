/**
 * The store conformance suite on PostgreSQL (TEST_DATABASE_URL), in a throwaway database, through
 * `StoreDatabase.layer` as `candor serve` builds it when DATABASE_URL is set.
 */
import { layerStore } from "../../support/Postgres.js"
import { storeConformance } from "./Conformance.js"
import { layerIntegration } from "../../support/Integration.js"

layerIntegration("postgres", layerStore, { timeout: "60 seconds" })("SqlStore on PostgreSQL", (it) => {
  storeConformance(it)
})
