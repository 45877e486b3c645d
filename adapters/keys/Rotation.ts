/**
 * Rotating the embedded default's signing key (`candor keys rotate`): a new key in
 * `<CANDOR_DATA_DIR>/signing-key.pem`, the old one retired in the key ring but still listed, so the
 * certificates and tree heads it signed keep verifying. Processes already running keep signing with
 * the key they loaded until they restart.
 *
 * The old public key is recorded first, so a failure at any later step loses nothing: at worst the
 * new key is registered by the next worker that starts with it. The old private key is not kept:
 * nothing needs it any more, and a rotation is often made because it may have leaked.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import { join } from "node:path"
import { formatSigningKey, generateSigningKey, parseSigningKey } from "../../core/Signing.js"
import { KeyRepo } from "../store/KeyRepo.js"
import { KEY_FILE, SigningKeyError } from "./SigningKeys.js"

export interface Rotation {
  /** The key id that signed until now; undefined when the data dir had no key yet. */
  readonly previous: string | undefined
  /** The key id that signs from the next start on. */
  readonly next: string
  /** Where the new private key is. */
  readonly path: string
}

export const rotateEmbeddedKey = (dataDir: string) =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const keys = yield* KeyRepo
    const path = join(dataDir, KEY_FILE)
    let previous: string | undefined
    if (yield* fs.exists(path)) {
      const old = parseSigningKey(yield* fs.readFileString(path))
      if (old === undefined)
        return yield* Effect.fail(new SigningKeyError({ message: `${path} does not hold an Ed25519 key` }))
      yield* keys.registerRetired(old.publicKey)
      previous = old.keyId
    }
    const next = generateSigningKey()
    yield* fs.makeDirectory(dataDir, { recursive: true })
    // Written beside and renamed over: a crash never leaves a half-written key file.
    const temporary = `${path}.${next.keyId}.tmp`
    yield* fs.writeFileString(temporary, formatSigningKey(next), { mode: 0o600 })
    yield* fs.rename(temporary, path)
    yield* keys.registerActive(next.publicKey)
    return { previous, next: next.keyId, path } satisfies Rotation
  })
