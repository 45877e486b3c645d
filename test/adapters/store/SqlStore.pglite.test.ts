/**
 * The store conformance suite on embedded PGlite, in memory: one instance for the whole file
 * (each costs seconds and hundreds of MB).
 */
import { layer } from "@effect/vitest"
import * as Layer from "effect/Layer"
import * as PgliteClient from "../../../adapters/store/PgliteClient.js"
import * as SqlStore from "../../../adapters/store/SqlStore.js"
import { migrated } from "../../../adapters/store/StoreDatabase.js"
import { storeConformance } from "./Conformance.js"
import * as SecretKeys from "../../../adapters/keys/SecretKeys.js"

const StoreOnPglite = SqlStore.layer.pipe(
  Layer.provide(SecretKeys.layerEphemeral),
  Layer.provideMerge(migrated(PgliteClient.layer()))
)

layer(StoreOnPglite, { timeout: "60 seconds" })("SqlStore on PGlite", (it) => {
  storeConformance(it)
})
