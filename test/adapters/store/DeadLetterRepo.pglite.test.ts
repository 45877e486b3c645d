/** The dead-letter repository on PGlite (cases in DeadLetterRepoCases.ts). */
import { describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as DeadLetterRepo from "../../../adapters/store/DeadLetterRepo.js"
import { deadLetterPages } from "./DeadLetterRepoCases.js"
import { migratedPglite } from "../../support/PgliteTemplate.js"

const Db = DeadLetterRepo.layer.pipe(Layer.provideMerge(migratedPglite))

describe("DeadLetterRepo (PGlite)", () => {
  it.effect("stored once by id; bounded pages by cursor; an organization's pages by its agents", () =>
    deadLetterPages.pipe(Effect.provide(Db))
  )
})
