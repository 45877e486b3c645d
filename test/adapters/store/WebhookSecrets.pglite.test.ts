/**
 * Webhook secrets at rest on the embedded default: sealed before they reach SQL, so no spelling of
 * a secret is found in any file of the data dir (heap, WAL, the key file aside); rows from before
 * migration 0010 sealed on open; a sealed value moved to another row does not open there.
 */
import { describe, expect, it } from "@effect/vitest"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { mkdtempSync, rmSync, statSync } from "node:fs"
import { randomBytes } from "node:crypto"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { generateSecretKey, open } from "../../../core/SecretBox.js"
import * as SecretKeys from "../../../adapters/keys/SecretKeys.js"
import * as PgliteClient from "../../../adapters/store/PgliteClient.js"
import * as SqlStore from "../../../adapters/store/SqlStore.js"
import { Store, type WebhookRegistration } from "../../../adapters/store/Store.js"
import * as StoreDatabase from "../../../adapters/store/StoreDatabase.js"
import { orgEndpointOwner, WebhookRepo } from "../../../adapters/store/WebhookRepo.js"
import { sealLegacySecrets, webhookSecretAad, WebhookSecretUnreadable } from "../../../adapters/store/WebhookSecrets.js"
import { filesHolding, spellings } from "./SecretBytes.js"

const tempDir = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "candor-secrets-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

const registration = (n: number, secret = `whsec-${randomBytes(24).toString("hex")}`): WebhookRegistration => ({
  registration_id: `reg-secret-${n}`,
  agent_id: "agent-secrets",
  callback_url: `https://receiver-${randomBytes(6).toString("hex")}.example/hook`,
  secret,
  events: ["verdict"],
  active: true,
  created_at: new Date(Date.UTC(2026, 10, 1, 0, 0, n)).toISOString()
})

describe("webhook secrets at rest (PGlite)", () => {
  it.scoped("no spelling of a stored secret is found in any file of the data dir", () =>
    Effect.gen(function* () {
      const dataDir = yield* tempDir
      const first = registration(1)
      const second = registration(2)
      const rotated = { ...first, secret: `whsec-${randomBytes(24).toString("hex")}` }
      const serveLike = StoreDatabase.layer({ databaseUrl: Option.none(), dataDir }).pipe(
        Layer.provideMerge(SecretKeys.layer({ secretKey: Option.none(), dataDir })),
        Layer.provide(NodeFileSystem.layer)
      )
      yield* Effect.gen(function* () {
        const store = yield* Store
        yield* store.putWebhook(first)
        yield* store.putWebhook(second)
        yield* store.putWebhook(rotated)
        expect(yield* store.getWebhook(second.registration_id)).toEqual(second)
      }).pipe(Effect.provide(serveLike))

      // The key file is the one place key material lives, readable by the owner only.
      expect(statSync(join(dataDir, SecretKeys.SECRET_KEY_FILE)).mode & 0o777).toBe(0o600)
      // The search sees row contents: a registration's URL is there, in clear.
      expect(filesHolding(join(dataDir, "pg"), [Buffer.from(second.callback_url)]).length).toBeGreaterThan(0)
      for (const secret of [first.secret, second.secret, rotated.secret])
        expect(filesHolding(dataDir, spellings(secret))).toEqual([])

      // A restart reuses the key from the data dir: the secrets still open.
      yield* Effect.gen(function* () {
        const store = yield* Store
        expect(yield* store.getWebhook(first.registration_id)).toEqual(rotated)
        expect(yield* store.getWebhook(second.registration_id)).toEqual(second)
      }).pipe(Effect.provide(serveLike))
    })
  )

  it.scoped("an endpoint's current and previous secrets (after a rotation) are in no file of the data dir", () =>
    Effect.gen(function* () {
      const dataDir = yield* tempDir
      const serveLike = StoreDatabase.layer({ databaseUrl: Option.none(), dataDir }).pipe(
        Layer.provideMerge(SecretKeys.layer({ secretKey: Option.none(), dataDir })),
        Layer.provide(NodeFileSystem.layer)
      )
      const first = `whsec_${randomBytes(32).toString("base64url")}`
      const second = `whsec_${randomBytes(32).toString("base64url")}`
      const at = new Date(Date.UTC(2026, 10, 1))
      const url = `https://receiver-${randomBytes(6).toString("hex")}.example/hook`
      const owner = orgEndpointOwner("org_secrets")
      const endpointId = yield* Effect.gen(function* () {
        const repo = yield* WebhookRepo
        const endpoint = yield* repo.create(owner, { url, description: "", event_types: [], agent_ids: [] }, first, at)
        yield* repo.rotate(owner, endpoint.endpoint_id, second, new Date(at.getTime() + 86_400_000), at)
        expect(yield* repo.secrets(endpoint.endpoint_id, at)).toEqual([second, first])
        return endpoint.endpoint_id
      }).pipe(Effect.provide(serveLike))

      expect(filesHolding(join(dataDir, "pg"), [Buffer.from(url)]).length).toBeGreaterThan(0)
      for (const secret of [first, second]) expect(filesHolding(dataDir, spellings(secret))).toEqual([])

      // After a restart both still open; past the expiry only the new one signs.
      yield* Effect.gen(function* () {
        const repo = yield* WebhookRepo
        expect(yield* repo.secrets(endpointId, at)).toEqual([second, first])
        expect(yield* repo.secrets(endpointId, new Date(at.getTime() + 86_400_001))).toEqual([second])
      }).pipe(Effect.provide(serveLike))
    })
  )

  it.scoped("seals the clear secrets of rows stored before migration 0010, once", () =>
    Effect.gen(function* () {
      const key = generateSecretKey()
      const legacy = registration(3)
      const sql = yield* SqlClient.SqlClient
      yield* sql`
        insert into webhooks (registration_id, agent_id, callback_url, legacy_secret, events)
        values (${legacy.registration_id}, ${legacy.agent_id}, ${legacy.callback_url}, ${legacy.secret}, '["verdict"]')`
      const store = yield* SqlStore.make.pipe(Effect.provide(SecretKeys.SecretKeys.fromKeys(key)))
      // Read as it is until sealed, so deliveries go on while an upgrade rolls out.
      expect((yield* store.getWebhook(legacy.registration_id))?.secret).toBe(legacy.secret)

      expect(yield* sealLegacySecrets(sql, key)).toBe(1)
      expect(yield* sealLegacySecrets(sql, key)).toBe(0)
      const [row] = yield* sql<{ legacy_secret: string | null; secret_sealed: string }>`
        select legacy_secret, secret_sealed from webhooks where registration_id = ${legacy.registration_id}`
      expect(row!.legacy_secret).toBeNull()
      expect(open([key], row!.secret_sealed, webhookSecretAad(legacy.registration_id))).toBe(legacy.secret)
      expect((yield* store.getWebhook(legacy.registration_id))?.secret).toBe(legacy.secret)
    }).pipe(Effect.provide(StoreDatabase.migrated(PgliteClient.layer())))
  )

  it.scoped("a sealed secret copied into another row, or sealed under a key not held, does not open", () =>
    Effect.gen(function* () {
      const key = generateSecretKey()
      const sql = yield* SqlClient.SqlClient
      const store = yield* SqlStore.make.pipe(Effect.provide(SecretKeys.SecretKeys.fromKeys(key)))
      const [a, b] = [registration(4), registration(5)]
      yield* store.putWebhook(a)
      yield* store.putWebhook(b)
      yield* sql`
        update webhooks set secret_sealed = (select secret_sealed from webhooks where registration_id = ${a.registration_id})
        where registration_id = ${b.registration_id}`
      const moved = yield* Effect.flip(store.getWebhook(b.registration_id))
      expect(moved.cause).toBeInstanceOf(WebhookSecretUnreadable)
      expect(String((moved.cause as WebhookSecretUnreadable).message)).toContain("moved from another row")
      expect(String((moved.cause as WebhookSecretUnreadable).message)).not.toContain(a.secret)

      const stranger = yield* SqlStore.make.pipe(Effect.provide(SecretKeys.SecretKeys.fromKeys(generateSecretKey())))
      const unheld = yield* Effect.flip(stranger.getWebhook(a.registration_id))
      expect((unheld.cause as WebhookSecretUnreadable).message).toContain(`sealed under key ${key.keyId}`)
      // Listing needs no key: the actors address drafts without ever opening a secret.
      expect((yield* stranger.webhooksFor(a.agent_id)).map((r) => r.registration_id)).toEqual([
        a.registration_id,
        b.registration_id
      ])
    }).pipe(Effect.provide(StoreDatabase.migrated(PgliteClient.layer())))
  )
})
