/**
 * Webhook endpoint secrets at rest on the embedded default: sealed before they reach SQL, so no
 * spelling of a current or previous secret is found in any file of the data dir (heap, WAL, the key
 * file aside); rows from before migration 0010 sealed on open; a sealed value moved to another row
 * does not open there.
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
import { generateSecretKey, open, type SecretKey } from "../../../core/SecretBox.js"
import * as SecretKeys from "../../../adapters/keys/SecretKeys.js"
import * as StoreDatabase from "../../../adapters/store/StoreDatabase.js"
import {
  agentEndpointOwner,
  layer as webhookRepoLayer,
  orgEndpointOwner,
  WebhookRepo
} from "../../../adapters/store/WebhookRepo.js"
import { sealLegacySecrets, webhookSecretAad, WebhookSecretUnreadable } from "../../../adapters/store/WebhookSecrets.js"
import { filesHolding, spellings } from "./SecretBytes.js"
import { migratedPglite, writeTemplateTo } from "../../support/PgliteTemplate.js"

const tempDir = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "candor-secrets-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

const at = new Date(Date.UTC(2026, 10, 1))
const DAY = 86_400_000
const owner = orgEndpointOwner("org_secrets")
const newSecret = () => `whsec_${randomBytes(32).toString("base64url")}`
const fields = () => ({
  url: `https://receiver-${randomBytes(6).toString("hex")}.example/hook`,
  description: "",
  event_types: [],
  agent_ids: []
})

/** The repository on the migrated database at hand, sealing under `key`. */
const repoUnder = (key: SecretKey) =>
  WebhookRepo.pipe(Effect.provide(webhookRepoLayer), Effect.provide(SecretKeys.SecretKeys.fromKeys(key)))

describe("webhook secrets at rest (PGlite)", () => {
  it.scoped("no spelling of an endpoint's current or previous secret is found in any file of the data dir", () =>
    Effect.gen(function* () {
      const dataDir = yield* tempDir
      // The database is there already, as the migrated template (initdb on the file system takes
      // seconds); `candor serve` opens it as it would any earlier data dir.
      yield* writeTemplateTo(join(dataDir, "pg"))
      const serveLike = StoreDatabase.layer({ databaseUrl: Option.none(), dataDir }).pipe(
        Layer.provideMerge(SecretKeys.layer({ secretKey: Option.none(), dataDir })),
        Layer.provide(NodeFileSystem.layer)
      )
      const [first, second, rotated] = [newSecret(), newSecret(), newSecret()]
      const [firstFields, secondFields] = [fields(), fields()]
      const [one, two] = yield* Effect.gen(function* () {
        const repo = yield* WebhookRepo
        const one = yield* repo.create(owner, firstFields, first, at)
        const two = yield* repo.create(owner, secondFields, second, at)
        yield* repo.rotate(owner, one.endpoint_id, rotated, new Date(at.getTime() + DAY), at)
        expect(yield* repo.secrets(one.endpoint_id, at)).toEqual([rotated, first])
        expect(yield* repo.secrets(two.endpoint_id, at)).toEqual([second])
        return [one.endpoint_id, two.endpoint_id] as const
      }).pipe(Effect.provide(serveLike))

      // The key file is the one place key material lives, readable by the owner only.
      expect(statSync(join(dataDir, SecretKeys.SECRET_KEY_FILE)).mode & 0o777).toBe(0o600)
      // The search sees row contents: an endpoint's URL is there, in clear.
      expect(filesHolding(join(dataDir, "pg"), [Buffer.from(secondFields.url)]).length).toBeGreaterThan(0)
      for (const secret of [first, second, rotated]) expect(filesHolding(dataDir, spellings(secret))).toEqual([])

      // A restart reuses the key from the data dir: the secrets still open; past the expiry only the new one signs.
      yield* Effect.gen(function* () {
        const repo = yield* WebhookRepo
        expect(yield* repo.secrets(one, at)).toEqual([rotated, first])
        expect(yield* repo.secrets(one, new Date(at.getTime() + DAY + 1))).toEqual([rotated])
        expect(yield* repo.secrets(two, at)).toEqual([second])
      }).pipe(Effect.provide(serveLike))
    })
  )

  it.scoped("seals the clear secrets of rows stored before migration 0010, once", () =>
    Effect.gen(function* () {
      const key = generateSecretKey()
      const sql = yield* SqlClient.SqlClient
      const legacy = { id: "reg-secret-legacy", agentId: "agent-secrets", secret: newSecret() }
      yield* sql`
        insert into webhooks (registration_id, agent_id, callback_url, legacy_secret, events)
        values (${legacy.id}, ${legacy.agentId}, ${fields().url}, ${legacy.secret}, '["verdict"]')`
      const repo = yield* repoUnder(key)
      // Read as it is until sealed, so deliveries go on while an upgrade rolls out.
      expect(yield* repo.secrets(legacy.id, at)).toEqual([legacy.secret])
      expect((yield* repo.get(agentEndpointOwner(legacy.agentId), legacy.id))?.endpoint_id).toBe(legacy.id)

      expect(yield* sealLegacySecrets(sql, key)).toBe(1)
      expect(yield* sealLegacySecrets(sql, key)).toBe(0)
      const [row] = yield* sql<{ legacy_secret: string | null; secret_sealed: string }>`
        select legacy_secret, secret_sealed from webhooks where registration_id = ${legacy.id}`
      expect(row!.legacy_secret).toBeNull()
      expect(open([key], row!.secret_sealed, webhookSecretAad(legacy.id))).toBe(legacy.secret)
      expect(yield* repo.secrets(legacy.id, at)).toEqual([legacy.secret])
    }).pipe(Effect.provide(migratedPglite))
  )

  it.scoped("a sealed secret copied into another row, or sealed under a key not held, does not open", () =>
    Effect.gen(function* () {
      const key = generateSecretKey()
      const sql = yield* SqlClient.SqlClient
      const repo = yield* repoUnder(key)
      const aSecret = newSecret()
      const a = yield* repo.create(owner, fields(), aSecret, at)
      const b = yield* repo.create(owner, fields(), newSecret(), new Date(at.getTime() + 1000))
      yield* sql`
        update webhooks set secret_sealed = (select secret_sealed from webhooks where registration_id = ${a.endpoint_id})
        where registration_id = ${b.endpoint_id}`
      const moved = yield* Effect.flip(repo.secrets(b.endpoint_id, at))
      expect(moved.cause).toBeInstanceOf(WebhookSecretUnreadable)
      expect(String((moved.cause as WebhookSecretUnreadable).message)).toContain("moved from another row")
      expect(String((moved.cause as WebhookSecretUnreadable).message)).not.toContain(aSecret)
      // A rotation opens the current secret first: it fails the same way and leaves the row as it was.
      const refused = yield* Effect.flip(
        repo.rotate(owner, b.endpoint_id, newSecret(), new Date(at.getTime() + DAY), at)
      )
      expect(refused.cause).toBeInstanceOf(WebhookSecretUnreadable)
      expect((yield* repo.get(owner, b.endpoint_id))?.previous_secret_expires_at).toBeNull()

      const stranger = yield* repoUnder(generateSecretKey())
      const unheld = yield* Effect.flip(stranger.secrets(a.endpoint_id, at))
      expect((unheld.cause as WebhookSecretUnreadable).message).toContain(`sealed under key ${key.keyId}`)
      // Listing needs no key: the fan-out selects endpoints without ever opening a secret.
      expect((yield* stranger.list(owner)).map((endpoint) => endpoint.endpoint_id)).toEqual([
        a.endpoint_id,
        b.endpoint_id
      ])
    }).pipe(Effect.provide(migratedPglite))
  )
})
