/**
 * The store conformance suite on embedded PGlite, in memory: one instance for the whole file
 * (each costs seconds and hundreds of MB).
 */
import { layer } from "@effect/vitest"
import * as Layer from "effect/Layer"
import * as SqlStore from "../../../adapters/store/SqlStore.js"
import { storeConformance } from "./Conformance.js"
import * as SecretKeys from "../../../adapters/keys/SecretKeys.js"
import { migratedPglite } from "../../support/PgliteTemplate.js"

const StoreOnPglite = SqlStore.layer.pipe(Layer.provide(SecretKeys.layerEphemeral), Layer.provideMerge(migratedPglite))

layer(StoreOnPglite, { timeout: "60 seconds" })("SqlStore on PGlite", (it) => {
  storeConformance(it)
})
