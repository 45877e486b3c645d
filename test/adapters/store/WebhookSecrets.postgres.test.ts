/**
 * Webhook endpoint secrets at rest on PostgreSQL: `pg_dump` of the throwaway database (every table,
 * every column) holds no spelling of an endpoint's current or previous secret, while the repository
 * still opens both.
 */
import { expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { execFileSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import * as SecretKeys from "../../../adapters/keys/SecretKeys.js"
import * as StoreDatabase from "../../../adapters/store/StoreDatabase.js"
import { orgEndpointOwner, WebhookRepo } from "../../../adapters/store/WebhookRepo.js"
import { describeIntegration } from "../../support/Integration.js"
import { throwawayDatabase } from "../../support/Postgres.js"
import { holds, spellings } from "./SecretBytes.js"

describeIntegration("postgres", "webhook secrets at rest (PostgreSQL)", () => {
  it.scoped(
    "no spelling of an endpoint's current or previous secret is found in a pg_dump of the database",
    () =>
      Effect.gen(function* () {
        const url = yield* throwawayDatabase
        const first = `whsec_${randomBytes(32).toString("base64url")}`
        const second = `whsec_${randomBytes(32).toString("base64url")}`
        const callbackUrl = `https://receiver-${randomBytes(6).toString("hex")}.example/hook`
        const owner = orgEndpointOwner("org_pg_secrets")
        const at = new Date()
        yield* Effect.gen(function* () {
          const repo = yield* WebhookRepo
          const fields = { url: callbackUrl, description: "", event_types: [], agent_ids: [] }
          const endpoint = yield* repo.create(owner, fields, first, at)
          yield* repo.rotate(owner, endpoint.endpoint_id, second, new Date(at.getTime() + 86_400_000), at)
          expect(yield* repo.secrets(endpoint.endpoint_id, at)).toEqual([second, first])
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
        // The dump holds the row: its URL is there, in clear; its secrets in none of their spellings.
        expect(dump.includes(Buffer.from(callbackUrl))).toBe(true)
        for (const secret of [first, second]) expect(holds(dump, spellings(secret))).toBe(false)
      }),
    { timeout: 60_000 }
  )
})
