/**
 * `candor keys rotate-secret-key`: every stored webhook endpoint secret re-sealed under a new key in
 * one transaction (an endpoint's previous secret of a rotation too); the old key opens nothing
 * afterwards. On the embedded default the key file ends with the new key alone; with
 * CANDOR_SECRET_KEY the new key is announced (once) and no file written.
 */
import { describe, expect, it } from "@effect/vitest"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { formatSecretKey, generateSecretKey, open, type SecretKey, seal } from "../../../core/SecretBox.js"
import * as SecretKeys from "../../../adapters/keys/SecretKeys.js"
import { rotateSecretKey } from "../../../adapters/keys/SecretRotation.js"
import { layer as webhookRepoLayer, orgEndpointOwner, WebhookRepo } from "../../../adapters/store/WebhookRepo.js"
import { previousSecretAad, webhookSecretAad, WebhookSecretUnreadable } from "../../../adapters/store/WebhookSecrets.js"
import { migratedPglite } from "../../support/PgliteTemplate.js"

const tempDir = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "candor-kek-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

const at = new Date(Date.UTC(2026, 10, 1))
const owner = orgEndpointOwner("org_rotate")

/** The repository on the migrated database at hand, sealing under `key` (and opening with it). */
const repoUnder = (key: SecretKey) =>
  WebhookRepo.pipe(Effect.provide(webhookRepoLayer), Effect.provide(SecretKeys.SecretKeys.fromKeys(key)))

interface Stored {
  readonly endpointId: string
  readonly secret: string
}

/** Creates two endpoints with their secrets sealed under `key`. */
const storeTwo = (key: SecretKey) =>
  Effect.gen(function* () {
    const repo = yield* repoUnder(key)
    const stored: Array<Stored> = []
    for (const n of [1, 2]) {
      const secret = `whsec_rotate_${n}_`.padEnd(40, "x")
      const fields = { url: `https://receiver.example/${n}`, description: "", event_types: [], agent_ids: [] }
      const endpoint = yield* repo.create(owner, fields, secret, new Date(at.getTime() + n * 1000))
      stored.push({ endpointId: endpoint.endpoint_id, secret })
    }
    return stored
  })

const sealedOf = (endpointId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ secret_sealed: string }>`select secret_sealed from webhooks where registration_id = ${endpointId}`.pipe(
      Effect.map(([row]) => row!.secret_sealed)
    )
  )

/** Whether every stored secret opens under exactly `keys`. */
const opensUnder = (keys: ReadonlyArray<SecretKey>, stored: ReadonlyArray<Stored>) =>
  Effect.forEach(stored, ({ endpointId, secret }) =>
    Effect.map(sealedOf(endpointId), (sealed) => open(keys, sealed, webhookSecretAad(endpointId)) === secret)
  ).pipe(Effect.map((opened) => opened.every(Boolean)))

const noAnnouncement = () => Effect.die("the embedded default prints no key")

describe("rotate-secret-key", () => {
  it.scoped("embedded default: re-seals under a new key file; the old key opens nothing", () =>
    Effect.gen(function* () {
      const dataDir = yield* tempDir
      const sql = yield* SqlClient.SqlClient
      const old = (yield* SecretKeys.SecretKeys.pipe(
        Effect.provide(SecretKeys.layer({ secretKey: Option.none(), dataDir }))
      )).active
      const stored = yield* storeTwo(old)
      expect(yield* opensUnder([old], stored)).toBe(true)

      const rotation = yield* rotateSecretKey({ secretKey: Option.none(), dataDir, sql, announce: noAnnouncement })
      expect(rotation).toMatchObject({ previous: [old.keyId], resealed: 2 })
      expect(rotation.next).not.toBe(old.keyId)

      const after = yield* SecretKeys.readKeyFile(dataDir)
      expect(after?.map((key) => key.keyId)).toEqual([rotation.next])
      expect(yield* opensUnder([old], stored)).toBe(false)
      expect(yield* opensUnder(after!, stored)).toBe(true)
      expect(readFileSync(join(dataDir, SecretKeys.SECRET_KEY_FILE), "utf8")).not.toContain(formatSecretKey(old))
      // The next start reads the new key, and the repository opens the secrets with it.
      const restarted = yield* WebhookRepo.pipe(
        Effect.provide(webhookRepoLayer),
        Effect.provide(SecretKeys.layer({ secretKey: Option.none(), dataDir }))
      )
      expect(yield* restarted.secrets(stored[1]!.endpointId, at)).toEqual([stored[1]!.secret])
    }).pipe(Effect.provide(migratedPglite), Effect.provide(NodeFileSystem.layer))
  )

  it.scoped("CANDOR_SECRET_KEY: announces the new key before re-sealing, and writes no key file", () =>
    Effect.gen(function* () {
      const dataDir = yield* tempDir
      const sql = yield* SqlClient.SqlClient
      const old = generateSecretKey()
      const stored = yield* storeTwo(old)
      const announced: Array<SecretKey> = []
      const rotation = yield* rotateSecretKey({
        secretKey: Option.some(Redacted.make(formatSecretKey(old))),
        dataDir,
        sql,
        announce: (key) =>
          opensUnder([old], stored).pipe(
            Effect.map((beforeReseal) => {
              // Shown while the secrets are still under the old key: nothing is lost if the re-seal fails.
              expect(beforeReseal).toBe(true)
              announced.push(key)
            }),
            Effect.provideService(SqlClient.SqlClient, sql),
            Effect.orDie
          )
      })
      expect(announced.map((key) => key.keyId)).toEqual([rotation.next])
      expect(yield* opensUnder([old], stored)).toBe(false)
      expect(yield* opensUnder(announced, stored)).toBe(true)
      expect(existsSync(join(dataDir, SecretKeys.SECRET_KEY_FILE))).toBe(false)
    }).pipe(Effect.provide(migratedPglite), Effect.provide(NodeFileSystem.layer))
  )

  it.scoped("re-seals an endpoint's previous secret (a rotation in progress) with its current one", () =>
    Effect.gen(function* () {
      const dataDir = yield* tempDir
      const sql = yield* SqlClient.SqlClient
      const old = generateSecretKey()
      const before = yield* repoUnder(old)
      const endpoint = yield* before.create(
        owner,
        { url: "https://receiver.example/e", description: "", event_types: [], agent_ids: [] },
        "whsec_first",
        at
      )
      yield* before.rotate(owner, endpoint.endpoint_id, "whsec_second", new Date(at.getTime() + 86_400_000), at)
      const announced: Array<SecretKey> = []
      yield* rotateSecretKey({
        secretKey: Option.some(Redacted.make(formatSecretKey(old))),
        dataDir,
        sql,
        announce: (key) => Effect.sync(() => announced.push(key))
      })
      const [row] = yield* sql<{ previous_secret_sealed: string }>`
        select previous_secret_sealed from webhooks where registration_id = ${endpoint.endpoint_id}`
      expect(open([old], row!.previous_secret_sealed, previousSecretAad(endpoint.endpoint_id))).toBeUndefined()
      const after = yield* repoUnder(announced[0]!)
      expect(yield* after.secrets(endpoint.endpoint_id, at)).toEqual(["whsec_second", "whsec_first"])
    }).pipe(Effect.provide(migratedPglite), Effect.provide(NodeFileSystem.layer))
  )

  it.scoped("a secret the current keys cannot open fails the whole re-seal; nothing moves", () =>
    Effect.gen(function* () {
      const dataDir = yield* tempDir
      const sql = yield* SqlClient.SqlClient
      const old = generateSecretKey()
      const stored = yield* storeTwo(old)
      // A row sealed under a key this process never held (another deployment's, say).
      yield* sql`
        insert into webhooks (registration_id, org_id, callback_url, secret_sealed, events)
        values ('whe-rotate-9', 'org_rotate', 'https://receiver.example/9',
                ${seal(generateSecretKey(), "x".repeat(40), webhookSecretAad("whe-rotate-9"))}, '[]')`
      const failure = yield* Effect.flip(
        rotateSecretKey({
          secretKey: Option.some(Redacted.make(formatSecretKey(old))),
          dataDir,
          sql,
          announce: () => Effect.void
        })
      )
      expect(failure).toBeInstanceOf(WebhookSecretUnreadable)
      expect(yield* opensUnder([old], stored)).toBe(true)
    }).pipe(Effect.provide(migratedPglite), Effect.provide(NodeFileSystem.layer))
  )
})
