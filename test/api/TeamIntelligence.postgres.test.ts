/**
 * Team intelligence on PostgreSQL (a throwaway database): the same cases as on PGlite, so the
 * store's reads (JSON operators on trace bodies, filtered counts, int8 counts as strings) are
 * checked on the driver production uses.
 */
import { layerIntegration } from "../support/Integration.js"
import { layer as harness } from "./Support.js"
import { teamIntelligenceCases } from "./TeamIntelligenceCases.js"

layerIntegration("postgres", harness({ database: "postgres" }), { timeout: "120 seconds" })(
  "team intelligence on PostgreSQL",
  teamIntelligenceCases
)
