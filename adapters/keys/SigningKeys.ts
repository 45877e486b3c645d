/**
 * The key that signs certificates and tree heads. `SIGNING_KEY` when set (production: every worker
 * must sign with the same key); otherwise the embedded default generates one into the data dir on
 * first start and reuses it, so a restart does not orphan the certificates already issued.
 *
 * Workers record the key's public half in the key ring (`registerActiveKey`, adapters/store/KeyRepo.ts)
 * when they start, so `GET /v1/keys` lists every key that ever signed, retired ones included.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import type * as SqlClient from "@effect/sql/SqlClient"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { join } from "node:path"
import { formatSigningKey, generateSigningKey, parseSigningKey, type SigningKey } from "../../core/Signing.js"
import { KeyRepo, layer as keyRepoLayer } from "../store/KeyRepo.js"
import type { StoreError } from "../store/Store.js"

export class SigningKeys extends Context.Tag("candor/adapters/keys/SigningKeys")<
  SigningKeys,
  {
    /** Signs everything issued from now on. */
    readonly active: SigningKey
  }
>() {
  static readonly fromKey = (key: SigningKey): Layer.Layer<SigningKeys> => Layer.succeed(SigningKeys, { active: key })
}

/** A signing key that cannot be used; the message says which and why (never the key). */
export class SigningKeyError extends Data.TaggedError("SigningKeyError")<{ readonly message: string }> {}

export const KEY_FILE = "signing-key.pem"

/** SIGNING_KEY, else `<dataDir>/signing-key.pem`, generated (mode 0600) when absent. */
export const layer = (options: {
  readonly signingKey: Option.Option<Redacted.Redacted<string>>
  readonly dataDir: string
}) =>
  Layer.effect(
    SigningKeys,
    Effect.gen(function* () {
      if (Option.isSome(options.signingKey)) {
        const key = parseSigningKey(Redacted.value(options.signingKey.value))
        // Never the value in the message: it is the private key.
        if (key === undefined) {
          return yield* Effect.fail(
            new SigningKeyError({
              message: "SIGNING_KEY is not an Ed25519 key (64 hex characters, base64 seed or PKCS#8 PEM)"
            })
          )
        }
        return { active: key }
      }
      const fs = yield* FileSystem.FileSystem
      const path = join(options.dataDir, KEY_FILE)
      if (yield* fs.exists(path)) {
        const key = parseSigningKey(yield* fs.readFileString(path))
        if (key === undefined)
          return yield* Effect.fail(new SigningKeyError({ message: `${path} does not hold an Ed25519 key` }))
        return { active: key }
      }
      const key = generateSigningKey()
      yield* fs.makeDirectory(options.dataDir, { recursive: true })
      yield* fs.writeFileString(path, formatSigningKey(key), { mode: 0o600 })
      yield* Effect.log("generated a signing key").pipe(Effect.annotateLogs({ key_id: key.keyId, path }))
      return { active: key }
    })
  )

/**
 * Records the active key in the key ring of the process's database (a no-op when it is already
 * there). Workers run it when they start, before they sign anything.
 */
export const registerActiveKey: Effect.Effect<void, StoreError, SigningKeys | SqlClient.SqlClient> = Effect.gen(
  function* () {
    const { active } = yield* SigningKeys
    const added = yield* (yield* KeyRepo).registerActive(active.publicKey)
    if (added)
      yield* Effect.log("signing key registered in the key ring; any older key is listed as retired").pipe(
        Effect.annotateLogs({ key_id: active.keyId })
      )
  }
).pipe(Effect.provide(keyRepoLayer))
