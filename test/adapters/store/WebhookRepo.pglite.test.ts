/** The webhook repository on PGlite (cases in WebhookRepoCases.ts). */
import { describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SecretKeys from "../../../adapters/keys/SecretKeys.js"
import * as SqlStore from "../../../adapters/store/SqlStore.js"
import { attemptContextRead, endpointsAndDeliveries, legacyEventNamesFolded } from "./WebhookRepoCases.js"
import { migratedPglite } from "../../support/PgliteTemplate.js"

const Db = SqlStore.layer.pipe(Layer.provide(SecretKeys.layerEphemeral), Layer.provideMerge(migratedPglite))

describe("WebhookRepo (PGlite)", () => {
  it.effect("endpoints, candidates, deliveries, redelivery, disabling", () =>
    endpointsAndDeliveries.pipe(Effect.provide(Db))
  )
  it.effect("the delivery relay's read: delivery, endpoint and live secrets in one statement", () =>
    attemptContextRead.pipe(Effect.provide(Db))
  )
  it.effect("migration 0011 folds the older event names into the catalogue's", () =>
    legacyEventNamesFolded.pipe(Effect.provide(Db))
  )
})
