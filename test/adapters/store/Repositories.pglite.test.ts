/**
 * The repository conformance suite (RepositoryConformance.ts) on embedded PGlite, in memory: one
 * migrated database for the whole file.
 */
import { layer } from "@effect/vitest"
import * as Layer from "effect/Layer"
import * as SecretKeys from "../../../adapters/keys/SecretKeys.js"
import * as SqlStore from "../../../adapters/store/SqlStore.js"
import { migratedPglite } from "../../support/PgliteTemplate.js"
import { repositoryConformance } from "./RepositoryConformance.js"

const OnPglite = SqlStore.layer.pipe(Layer.provide(SecretKeys.layerEphemeral), Layer.provideMerge(migratedPglite))

layer(OnPglite, { timeout: "60 seconds" })("Repositories on PGlite", (it) => {
  repositoryConformance(it)
})
