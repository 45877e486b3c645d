/** Team intelligence over HTTP on PGlite (the cases: TeamIntelligenceCases.ts). */
import { layer } from "@effect/vitest"
import { layer as harness } from "./Support.js"
import { teamIntelligenceCases } from "./TeamIntelligenceCases.js"

layer(harness(), { timeout: "120 seconds" })("team intelligence", teamIntelligenceCases)
