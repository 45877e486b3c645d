/**
 * The local operator's way into the console on the embedded default (docs/console.md, "Signing in"):
 * `candor serve` prints a one-time link `…/console/#/sign-in/<code>` once it is bound, and the
 * console exchanges the code (`POST /v1/console/sessions`) for an operator session token (`cos_…`)
 * with the service-role key's rights, valid for a few hours.
 *
 * Everything lives in this API process's memory, as hashes only: the code and the tokens are
 * SHA-256'd when issued and compared through their digests in constant time. A code is good for
 * one exchange within its lifetime; failed exchanges are throttled for the whole process (the code
 * has 192 random bits, so this only keeps a guesser from costing anything; a correct code is
 * throttled too, so throttling cannot be told from a wrong guess), and never burn the code, so a
 * stranger cannot lock the operator out. Issuing a new code replaces the old one. Time is read from
 * `now`, so tests drive it.
 */
import * as Context from "effect/Context"
import * as Layer from "effect/Layer"
import { randomBytes } from "node:crypto"
import { generateSecret, hashSecret, secretsEqual } from "./Secrets.js"

/** Prefix of console operator session tokens (never sent to the JWT verifier). */
export const OPERATOR_SESSION_PREFIX = "cos"

export interface OperatorSignInOptions {
  /** How long a printed code may be exchanged. */
  readonly codeTtlMs: number
  /** How long an operator session lasts. */
  readonly sessionTtlMs: number
  /** Failed exchanges allowed per `failureWindowMs`, for the whole process. */
  readonly maxFailures: number
  readonly failureWindowMs: number
  readonly now: () => number
}

export const defaultOperatorSignInOptions: OperatorSignInOptions = {
  codeTtlMs: 15 * 60_000,
  sessionTtlMs: 12 * 60 * 60_000,
  maxFailures: 10,
  failureWindowMs: 60_000,
  now: () => Date.now()
}

export type Exchange =
  | { readonly _tag: "Session"; readonly token: string; readonly expiresAt: number }
  /** Wrong, used or expired code: one answer for all three, so a guesser learns nothing. */
  | { readonly _tag: "Refused" }
  | { readonly _tag: "Throttled"; readonly retryAfterSeconds: number }

export interface OperatorSignInStore {
  /** A new one-time code (the previous one, if unused, stops working). */
  readonly issueCode: () => { readonly code: string; readonly expiresAt: number }
  readonly exchange: (code: string) => Exchange
  /** The session's expiry when `token` is a live operator session, else undefined. */
  readonly session: (token: string) => number | undefined
}

/** The codes' alphabet is base64url; anything longer than this is not one of ours. */
const MAX_CODE_LENGTH = 64

export const makeOperatorSignIn = (overrides: Partial<OperatorSignInOptions> = {}): OperatorSignInStore => {
  const options = { ...defaultOperatorSignInOptions, ...overrides }
  let code: { readonly hash: string; readonly expiresAt: number } | undefined
  const failures: Array<number> = []
  const sessions = new Map<string, number>()

  const dropExpired = (now: number) => {
    for (const [hash, expiresAt] of sessions) if (expiresAt <= now) sessions.delete(hash)
    while (failures.length > 0 && failures[0]! <= now - options.failureWindowMs) failures.shift()
  }

  return {
    issueCode: () => {
      const value = randomBytes(24).toString("base64url")
      const expiresAt = options.now() + options.codeTtlMs
      code = { hash: hashSecret(value), expiresAt }
      return { code: value, expiresAt }
    },
    exchange: (offered) => {
      const now = options.now()
      dropExpired(now)
      if (failures.length >= options.maxFailures) {
        const retryAt = failures[0]! + options.failureWindowMs
        return { _tag: "Throttled", retryAfterSeconds: Math.max(1, Math.ceil((retryAt - now) / 1000)) }
      }
      const current = code
      // Compared through digests (secretsEqual hashes again): equal time whatever the offered text.
      const matches =
        current !== undefined &&
        offered.length <= MAX_CODE_LENGTH &&
        secretsEqual(hashSecret(offered), current.hash) &&
        current.expiresAt > now
      if (!matches) {
        failures.push(now)
        return { _tag: "Refused" }
      }
      code = undefined
      const token = generateSecret(OPERATOR_SESSION_PREFIX)
      const expiresAt = now + options.sessionTtlMs
      sessions.set(hashSecret(token), expiresAt)
      return { _tag: "Session", token, expiresAt }
    },
    session: (token) => {
      const expiresAt = sessions.get(hashSecret(token))
      if (expiresAt === undefined) return undefined
      if (expiresAt <= options.now()) {
        sessions.delete(hashSecret(token))
        return undefined
      }
      return expiresAt
    }
  }
}

/**
 * The process's operator sign-in, present only on the embedded default with its own local database
 * (src/Serve.ts): elsewhere the exchange route answers 404 and `cos_` tokens are invalid.
 */
export class OperatorSignIn extends Context.Tag("candor/adapters/auth/OperatorSignIn")<
  OperatorSignIn,
  OperatorSignInStore
>() {}

export const layer = (overrides: Partial<OperatorSignInOptions> = {}): Layer.Layer<OperatorSignIn> =>
  Layer.sync(OperatorSignIn, () => makeOperatorSignIn(overrides))
