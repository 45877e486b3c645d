/**
 * Webhook secrets at rest on PostgreSQL: `pg_dump` of the throwaway database (every table, every
 * column) holds no spelling of a stored secret, while the store still opens it.
 */
import { expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { execFileSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import * as SecretKeys from "../../../adapters/keys/SecretKeys.js"
import { Store } from "../../../adapters/store/Store.js"
import * as StoreDatabase from "../../../adapters/store/StoreDatabase.js"
import { describeIntegration } from "../../support/Integration.js"
import { throwawayDatabase } from "../../support/Postgres.js"
import { holds, spellings } from "./SecretBytes.js"

describeIntegration("postgres", "webhook secrets at rest (PostgreSQL)", () => {
  it.scoped(
    "no spelling of a stored secret is found in a pg_dump of the database",
    () =>
      Effect.gen(function* () {
        const url = yield* throwawayDatabase
        const secret = `whsec-${randomBytes(24).toString("hex")}`
        const registration = {
          registration_id: "reg-pg-secret",
          agent_id: "agent-pg-secrets",
          callback_url: `https://receiver-${randomBytes(6).toString("hex")}.example/hook`,
          secret,
          events: ["verdict"],
          active: true,
          created_at: new Date().toISOString()
        }
        yield* Effect.gen(function* () {
          const store = yield* Store
          yield* store.putWebhook(registration)
          expect((yield* store.getWebhook(registration.registration_id))?.secret).toBe(secret)
        }).pipe(
          Effect.provide(
            StoreDatabase.layer({ databaseUrl: Option.some(url), dataDir: "unused" }).pipe(
              Layer.provide(SecretKeys.layerEphemeral)
            )
          )
        )
        const dump = execFileSync("pg_dump", ["--no-owner", "--dbname", Redacted.value(url)], {
          maxBuffer: 64 * 1024 * 1024
        })
        // The dump holds the row: its URL is there, in clear; its secret in none of its spellings.
        expect(dump.includes(Buffer.from(registration.callback_url))).toBe(true)
        expect(holds(dump, spellings(secret))).toBe(false)
      }),
    { timeout: 60_000 }
  )
})
