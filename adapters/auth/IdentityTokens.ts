/**
 * Identity-provider tokens (docs/api.md, "Authentication": the Bearer JWT). Verified with `jose`:
 * HS256 with `AUTH_JWT_SECRET`, or any asymmetric algorithm through the provider's JWKS
 * (`AUTH_JWKS_URL`, fetched and cached by `createRemoteJWKSet`). `iss` and `aud` are checked when
 * configured; `sub` and `exp` are required and expiry is enforced.
 *
 * With neither secret nor JWKS, Candor is its own identity provider: a dev secret generated into
 * the data dir, which `candor token` uses to mint tokens.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import type { PlatformError } from "@effect/platform/Error"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { createRemoteJWKSet, errors, jwtVerify, SignJWT, type JWTVerifyGetKey } from "jose"
import { randomBytes } from "node:crypto"
import { join } from "node:path"
import { AuthConfig } from "./AuthConfig.js"

export interface Identity {
  readonly sub: string
  readonly email: string | undefined
  /** The token's `exp` in ms since the epoch (required, so always set): a long-lived request ends there. */
  readonly expiresAt: number
}

/** Why a token was refused: the 401 message, which never quotes the token. */
export class InvalidToken extends Data.TaggedError("InvalidToken")<{ readonly reason: string }> {}

export class IdentityTokens extends Context.Tag("candor/adapters/auth/IdentityTokens")<
  IdentityTokens,
  {
    readonly verify: (token: string) => Effect.Effect<Identity, InvalidToken>
  }
>() {}

/** The dev secret's file in the data dir. */
export const DEV_SECRET_FILE = "auth-jwt-secret"

/** `<dataDir>/auth-jwt-secret`, generated (mode 0600) on first use. */
export const devSecret = (dataDir: string): Effect.Effect<string, PlatformError, FileSystem.FileSystem> =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const path = join(dataDir, DEV_SECRET_FILE)
    if (yield* fs.exists(path)) return (yield* fs.readFileString(path)).trim()
    const secret = randomBytes(32).toString("base64url")
    yield* fs.makeDirectory(dataDir, { recursive: true })
    yield* fs.writeFileString(path, secret + "\n", { mode: 0o600 })
    return secret
  })

export interface MintOptions {
  readonly sub: string
  readonly email?: string | undefined
  /** Seconds from now; default one day. */
  readonly ttlSeconds?: number | undefined
  readonly issuer?: string | undefined
  readonly audience?: string | undefined
  /** Unix seconds; default now (tests mint expired tokens with it). */
  readonly issuedAt?: number | undefined
}

/** An HS256 token as the embedded identity provider issues it. */
export const mintToken = (secret: string, options: MintOptions): Promise<string> => {
  const iat = options.issuedAt ?? Math.floor(Date.now() / 1000)
  let jwt = new SignJWT(options.email === undefined ? {} : { email: options.email })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setSubject(options.sub)
    .setIssuedAt(iat)
    .setExpirationTime(iat + (options.ttlSeconds ?? 86_400))
  if (options.issuer !== undefined) jwt = jwt.setIssuer(options.issuer)
  if (options.audience !== undefined) jwt = jwt.setAudience(options.audience)
  return jwt.sign(new TextEncoder().encode(secret))
}

const reasonOf = (error: unknown): string => {
  if (error instanceof errors.JWTExpired) return "token expired"
  if (error instanceof errors.JWTClaimValidationFailed) return `token claim ${error.claim} is not valid`
  if (error instanceof errors.JWKSNoMatchingKey) return "token signed by an unknown key"
  if (error instanceof errors.JOSEAlgNotAllowed) return "token algorithm not allowed"
  return "invalid token"
}

const make = (
  key: Uint8Array | JWTVerifyGetKey,
  algorithms: ReadonlyArray<string> | undefined,
  issuer: Option.Option<string>,
  audience: Option.Option<string>
) => {
  const options = {
    ...(algorithms === undefined ? {} : { algorithms: [...algorithms] }),
    ...(Option.isSome(issuer) ? { issuer: issuer.value } : {}),
    ...(Option.isSome(audience) ? { audience: audience.value } : {}),
    requiredClaims: ["sub", "exp"]
  }
  return IdentityTokens.of({
    verify: (token) =>
      Effect.tryPromise({
        try: () => (typeof key === "function" ? jwtVerify(token, key, options) : jwtVerify(token, key, options)),
        catch: (error) => new InvalidToken({ reason: reasonOf(error) })
      }).pipe(
        Effect.flatMap(({ payload }) =>
          typeof payload.sub === "string" && payload.sub.length > 0 && payload.sub.length <= 256
            ? Effect.succeed({
                sub: payload.sub,
                email: typeof payload.email === "string" ? payload.email : undefined,
                // `exp` is a required claim, checked by jwtVerify: a number of seconds here.
                expiresAt: (payload.exp ?? 0) * 1000
              })
            : Effect.fail(new InvalidToken({ reason: "token has no valid sub claim" }))
        )
      )
  })
}

/** From `AuthConfig`: JWKS when set, else the HS256 secret, else the data dir's dev secret. */
export const layer = (options: {
  readonly dataDir: string
}): Layer.Layer<IdentityTokens, PlatformError, AuthConfig | FileSystem.FileSystem> =>
  Layer.effect(
    IdentityTokens,
    Effect.gen(function* () {
      const config = yield* AuthConfig
      if (Option.isSome(config.jwksUrl)) {
        return make(createRemoteJWKSet(new URL(config.jwksUrl.value)), undefined, config.issuer, config.audience)
      }
      const secret = Option.isSome(config.jwtSecret)
        ? Redacted.value(config.jwtSecret.value)
        : yield* devSecret(options.dataDir)
      return make(new TextEncoder().encode(secret), ["HS256"], config.issuer, config.audience)
    })
  )
