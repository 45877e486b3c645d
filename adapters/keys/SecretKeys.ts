/**
 * The key-encryption keys (KEKs) that seal the secrets the store keeps (core/SecretBox.ts).
 * `CANDOR_SECRET_KEY` when set (every process that reads or writes secrets must hold the same key:
 * the API seals a webhook's secret, the webhook relay of a worker opens it); otherwise the embedded
 * default generates one into `<dataDir>/secret-key` (mode 0600) on first start and reuses it.
 *
 * Both hold a list, active key first: `CANDOR_SECRET_KEY=<new>,<old>` and a key file of several
 * lines keep older keys readable while a rotation (`candor keys rotate-secret-key`) re-seals.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import type { PlatformError } from "@effect/platform/Error"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { join } from "node:path"
import { formatSecretKey, generateSecretKey, parseSecretKey, type SecretKey } from "../../core/SecretBox.js"

export class SecretKeys extends Context.Tag("candor/adapters/keys/SecretKeys")<
  SecretKeys,
  {
    /** Seals everything sealed from now on. */
    readonly active: SecretKey
    /** The active key first, then older keys still accepted when opening. */
    readonly all: ReadonlyArray<SecretKey>
  }
>() {
  static readonly fromKeys = (active: SecretKey, ...older: ReadonlyArray<SecretKey>): Layer.Layer<SecretKeys> =>
    Layer.succeed(SecretKeys, { active, all: [active, ...older] })
}

/** A KEK that cannot be used; the message says which and why (never the key). */
export class SecretKeyError extends Data.TaggedError("SecretKeyError")<{ readonly message: string }> {}

export const SECRET_KEY_FILE = "secret-key"

/** Keys separated by commas or newlines, active first; `undefined` if any is not a KEK (or none is given). */
export const parseSecretKeys = (text: string): ReadonlyArray<SecretKey> | undefined => {
  const parts = text
    .split(/[,\n]/)
    .map((part) => part.trim())
    .filter((part) => part !== "")
  const keys = parts.map(parseSecretKey)
  return keys.length > 0 && keys.every((key) => key !== undefined) ? (keys as ReadonlyArray<SecretKey>) : undefined
}

/** The key file's text: one key per line, 64 hex characters, active first. */
export const formatSecretKeys = (keys: ReadonlyArray<SecretKey>): string =>
  keys.map((key) => `${formatSecretKey(key)}\n`).join("")

/** The keys in `<dataDir>/secret-key`, or `undefined` when there is no such file. */
export const readKeyFile = (
  dataDir: string
): Effect.Effect<ReadonlyArray<SecretKey> | undefined, SecretKeyError | PlatformError, FileSystem.FileSystem> =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const path = join(dataDir, SECRET_KEY_FILE)
    if (!(yield* fs.exists(path))) return undefined
    const keys = parseSecretKeys(yield* fs.readFileString(path))
    if (keys === undefined)
      return yield* Effect.fail(
        new SecretKeyError({ message: `${path} does not hold key-encryption keys (64 hex characters a line)` })
      )
    return keys
  })

/** Replaces the key file (mode 0600): written beside and renamed over, so a crash never leaves half a file. */
export const writeKeyFile = (
  dataDir: string,
  keys: ReadonlyArray<SecretKey>
): Effect.Effect<string, PlatformError, FileSystem.FileSystem> =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const path = join(dataDir, SECRET_KEY_FILE)
    yield* fs.makeDirectory(dataDir, { recursive: true })
    const temporary = `${path}.${keys[0]!.keyId}.tmp`
    yield* fs.writeFileString(temporary, formatSecretKeys(keys), { mode: 0o600 })
    yield* fs.rename(temporary, path)
    return path
  })

const fromList = (keys: ReadonlyArray<SecretKey>): SecretKeys["Type"] => ({ active: keys[0]!, all: keys })

/** CANDOR_SECRET_KEY, else `<dataDir>/secret-key`, generated (mode 0600) when absent. */
export const layer = (options: {
  readonly secretKey: Option.Option<Redacted.Redacted<string>>
  readonly dataDir: string
}): Layer.Layer<SecretKeys, SecretKeyError | PlatformError, FileSystem.FileSystem> =>
  Layer.effect(
    SecretKeys,
    Effect.gen(function* () {
      if (Option.isSome(options.secretKey)) {
        const keys = parseSecretKeys(Redacted.value(options.secretKey.value))
        // Never the value in the message: it is the key.
        if (keys === undefined) {
          return yield* Effect.fail(
            new SecretKeyError({
              message:
                "CANDOR_SECRET_KEY is not a 32-byte key (64 hex characters, or base64 of 32 bytes; several: comma-separated, active first)"
            })
          )
        }
        return fromList(keys)
      }
      const existing = yield* readKeyFile(options.dataDir)
      if (existing !== undefined) return fromList(existing)
      const key = generateSecretKey()
      const path = yield* writeKeyFile(options.dataDir, [key])
      yield* Effect.log("generated a key-encryption key").pipe(Effect.annotateLogs({ key_id: key.keyId, path }))
      return fromList([key])
    })
  )

/** Given keys, the first active: a test or benchmark that hands its processes one CANDOR_SECRET_KEY. */
export const layerFromKeys = (keys: ReadonlyArray<SecretKey>): Layer.Layer<SecretKeys> =>
  Layer.succeed(SecretKeys, fromList(keys))

let ephemeral: SecretKey | undefined

/**
 * A random KEK held only in memory, one per process: for tests and benchmarks, whose databases are
 * thrown away. Every layer of the process shares it, as every process of a deployment shares
 * CANDOR_SECRET_KEY, so several workers on one database (an integration test, a benchmark) open
 * each other's sealed rows.
 */
export const layerEphemeral: Layer.Layer<SecretKeys> = Layer.sync(SecretKeys, () =>
  fromList([(ephemeral ??= generateSecretKey())])
)
