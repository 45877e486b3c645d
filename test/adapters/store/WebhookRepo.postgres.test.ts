/** The webhook repository on PostgreSQL (cases in WebhookRepoCases.ts), each on a throwaway database. */
import { it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as SecretKeys from "../../../adapters/keys/SecretKeys.js"
import * as SqlStore from "../../../adapters/store/SqlStore.js"
import { migrated } from "../../../adapters/store/StoreDatabase.js"
import { describeIntegration } from "../../support/Integration.js"
import { throwawayDatabase } from "../../support/Postgres.js"
import { attemptContextRead, endpointsAndDeliveries, legacyEventNamesFolded } from "./WebhookRepoCases.js"

const onThrowaway = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const url = yield* throwawayDatabase
    const db = SqlStore.layer.pipe(
      Layer.provide(SecretKeys.layerEphemeral),
      Layer.provideMerge(migrated(PgClient.layer({ url })))
    )
    return yield* effect.pipe(Effect.provide(db))
  })

describeIntegration("postgres", "WebhookRepo (PostgreSQL)", () => {
  it.scoped("endpoints, candidates, deliveries, redelivery, disabling", () => onThrowaway(endpointsAndDeliveries), {
    timeout: 60_000
  })
  it.scoped(
    "the delivery relay's read: delivery, endpoint and live secrets in one statement",
    () => onThrowaway(attemptContextRead),
    { timeout: 60_000 }
  )
  it.scoped(
    "migration 0011 folds the older event names into the catalogue's",
    () => onThrowaway(legacyEventNamesFolded),
    { timeout: 60_000 }
  )
})
