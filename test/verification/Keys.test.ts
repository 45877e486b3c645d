/**
 * The signing-key ring: workers register their key, a new key retires the older ones, and
 * `rotateEmbeddedKey` (what `candor keys rotate` runs on the embedded default) replaces the data
 * dir's key while the old one stays listed, so certificates signed before a rotation keep verifying
 * with nothing but the published listing.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { randomUUID } from "node:crypto"
import { statSync } from "node:fs"
import { join } from "node:path"
import { rotateEmbeddedKey } from "../../adapters/keys/Rotation.js"
import * as SigningKeys from "../../adapters/keys/SigningKeys.js"
import { publicKeyInfo } from "../../adapters/keys/Trust.js"
import * as KeyRepo from "../../adapters/store/KeyRepo.js"
import { attest, emptyLogState } from "../../core/Attestation.js"
import { keyResolverFromKeys, verifyCertificate } from "../../core/Certificate.js"
import { formatSigningKey, generateSigningKey, type SigningKey } from "../../core/Signing.js"
import { migratedPglite } from "../support/PgliteTemplate.js"

/** A real certificate, signed by `key`. */
const certificateBy = (key: SigningKey) => {
  const checkpointId = `ic-${randomUUID()}`
  const timestamp = new Date().toISOString()
  return attest(
    emptyLogState("agt-rotation"),
    {
      certificate_id: `cert-${checkpointId}`,
      issued_at: timestamp,
      subject: {
        checkpoint_id: checkpointId,
        agent_id: "agt-rotation",
        session_id: "ses-1",
        card_id: "card-1",
        timestamp
      },
      claims: {
        concerns: [],
        boundary_values: [],
        reasoning_summary: "",
        analysis_model: "rules",
        extraction_confidence: 1
      },
      input_commitments: {
        thinking_block_hash: "1".repeat(64),
        card_hash: "2".repeat(64),
        values_hash: "3".repeat(64),
        analysis_hash: "4".repeat(64),
        model: "m"
      }
    },
    key
  ).certificate
}

/** The data dir's key, loaded as a starting worker does, and registered. */
const startWorker = (dataDir: string, signingKey: Option.Option<Redacted.Redacted<string>> = Option.none()) =>
  Effect.gen(function* () {
    const { active } = yield* SigningKeys.SigningKeys
    yield* SigningKeys.registerActiveKey
    return active
  }).pipe(Effect.provide(SigningKeys.layer({ signingKey, dataDir })))

const listing = Effect.flatMap(KeyRepo.KeyRepo, (repo) => repo.list).pipe(Effect.map((keys) => keys.map(publicKeyInfo)))

const Env = Layer.mergeAll(KeyRepo.layer).pipe(
  Layer.provideMerge(migratedPglite),
  Layer.provideMerge(NodeContext.layer),
  Layer.orDie
)

layer(Env, { timeout: "60 seconds" })("signing-key ring", (it) => {
  it.scoped("rotation keeps certificates of the retired key verifiable", () =>
    Effect.gen(function* () {
      const fs = yield* FileSystem.FileSystem
      const dataDir = yield* fs.makeTempDirectoryScoped()

      const first = yield* startWorker(dataDir)
      const old = certificateBy(first)
      expect(yield* listing).toMatchObject([{ key_id: first.keyId, status: "active", retired_at: null }])
      // A restart with the same key changes nothing.
      expect(yield* startWorker(dataDir)).toMatchObject({ keyId: first.keyId })
      expect(yield* listing).toHaveLength(1)

      const rotation = yield* rotateEmbeddedKey(dataDir)
      expect(rotation).toEqual({
        previous: first.keyId,
        next: expect.any(String),
        path: join(dataDir, SigningKeys.KEY_FILE)
      })
      expect(rotation.next).not.toBe(first.keyId)
      expect(statSync(rotation.path).mode & 0o777).toBe(0o600)
      expect((yield* fs.readDirectory(dataDir)).sort()).toEqual([SigningKeys.KEY_FILE])

      const keys = yield* listing
      expect(keys.map((key) => [key.key_id, key.status])).toEqual([
        [first.keyId, "retired"],
        [rotation.next, "active"]
      ])
      expect(keys[0]!.retired_at).not.toBeNull()

      // The next worker signs with the new key; both generations verify with the published listing alone.
      const second = yield* startWorker(dataDir)
      expect(second.keyId).toBe(rotation.next)
      const resolveKey = keyResolverFromKeys(keys)
      expect(verifyCertificate(old, { resolveKey })).toMatchObject({ valid: true, errors: [] })
      expect(verifyCertificate(certificateBy(second), { resolveKey })).toMatchObject({ valid: true, errors: [] })
      const stranger = verifyCertificate(certificateBy(generateSigningKey()), { resolveKey })
      expect(stranger.checks.signature).toBe(false)
      expect(stranger.errors[0]).toContain("unknown key_id")
      // The retired key is not restored by an old worker restarting with it.
      const repo = yield* KeyRepo.KeyRepo
      expect(yield* repo.registerActive(first.publicKey)).toBe(false)
      expect((yield* listing).map((key) => key.status)).toEqual(["retired", "active"])
    })
  )

  it.scoped("with SIGNING_KEY, rotation is a new SIGNING_KEY: the first worker with it retires the others", () =>
    Effect.gen(function* () {
      const fs = yield* FileSystem.FileSystem
      const dataDir = yield* fs.makeTempDirectoryScoped()
      const before = (yield* listing).map((key) => key.key_id)
      const configured = generateSigningKey()
      const active = yield* startWorker(dataDir, Option.some(Redacted.make(formatSigningKey(configured))))
      expect(active.keyId).toBe(configured.keyId)
      // Nothing is written to the data dir when the key is configured.
      expect(yield* fs.readDirectory(dataDir)).toEqual([])
      const keys = yield* listing
      expect(keys.map((key) => key.key_id)).toEqual([...before, configured.keyId])
      expect(keys.filter((key) => key.status === "active").map((key) => key.key_id)).toEqual([configured.keyId])
    })
  )

  it.effect("refuses to register something that is not an Ed25519 public key", () =>
    Effect.gen(function* () {
      const repo = yield* KeyRepo.KeyRepo
      const error = yield* Effect.flip(repo.registerActive(new Uint8Array(32)))
      expect(error._tag).toBe("StoreError")
    })
  )
})
