/**
 * Whether a credential authenticated earlier still holds, for requests that outlive the moment they
 * were authenticated (the live stream, docs/stream.md): an API key revoked, rotated, or outgrown by
 * its creator's role; a JWT past its `exp`; an impersonation session ended or expired; an operator
 * session expired. Also the rule authentication applies to organization keys (`keyRefusal`), so a
 * request and a stream already open decide alike.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { CredentialRepo, type KeyWithCreator } from "../store/identity/CredentialRepo.js"
import type { StoreError } from "../store/Store.js"
import { atLeast } from "./IdentityAccessControl.js"
import type { Principal } from "./Principal.js"

export type Liveness =
  /** Still valid; `until` (ms since the epoch) is when it ends anyway (a JWT's `exp`), if known. */
  | { readonly _tag: "Live"; readonly until: number | undefined }
  /** No longer valid: why, in the words of the 401 a new request would get. */
  | { readonly _tag: "Ended"; readonly reason: string }

/**
 * An organization key acts with the role it was created under only while its creator still holds
 * that role there (docs/api.md, "API keys"): a removed or demoted creator's keys stop. Undefined
 * when the key may act; else why not.
 */
export const keyRefusal = (key: KeyWithCreator): string | undefined => {
  if (key.org_id === null || key.role === null) return undefined
  if (key.creator_role === null) return "API key stopped: its creator is no longer a member of its organization"
  if (!atLeast(key.creator_role, key.role))
    return `API key stopped: its creator no longer holds the ${key.role} role it was created under`
  return undefined
}

const live = (until: number | undefined): Liveness => ({ _tag: "Live", until })
const ended = (reason: string): Liveness => ({ _tag: "Ended", reason })

/** Whether `principal` still holds at `now` (ms); reads the store for keys and impersonation sessions. */
export const liveness = (principal: Principal, now: number): Effect.Effect<Liveness, StoreError, CredentialRepo> => {
  switch (principal.kind) {
    case "service": {
      if (principal.operatorSession === undefined) return Effect.succeed(live(undefined))
      const until = Date.parse(principal.operatorSession.expires_at)
      return Effect.succeed(until > now ? live(until) : ended("console session expired or ended"))
    }
    case "user": {
      const { impersonation } = principal
      if (impersonation === undefined) {
        const until = principal.expiresAt
        return Effect.succeed(until === undefined || until > now ? live(until) : ended("token expired"))
      }
      return Effect.map(
        Effect.flatMap(CredentialRepo, (repo) => repo.getSession(impersonation.session_id)),
        (session) => {
          if (session === undefined || session.ended_at !== null) return ended("impersonation session expired or ended")
          const until = Date.parse(session.expires_at)
          return until > now ? live(until) : ended("impersonation session expired or ended")
        }
      )
    }
    case "api_key": {
      const { keyHash } = principal
      // Every API-key principal carries its hash (CredentialAuthentication); one without cannot be re-checked.
      if (keyHash === undefined) return Effect.succeed(ended("invalid API key"))
      return Effect.map(
        Effect.flatMap(CredentialRepo, (repo) => repo.keyByHash(keyHash)),
        (key) => {
          // Revoked, or rotated (the secret presented no longer has a key).
          if (key === undefined || key.key_id !== principal.keyId) return ended("invalid API key")
          const refused = keyRefusal(key)
          return refused === undefined ? live(undefined) : ended(refused)
        }
      )
    }
  }
}

/**
 * Runs `check` at once and then at least every `everyMs` (at the credential's own end when that is
 * sooner: a JWT is closed at its `exp`, not up to `everyMs` later), until it reports an end; returns
 * why. A check that fails (the store unreachable) ends it too: access that cannot be confirmed is
 * not kept, and a client resumes without loss once it can authenticate again.
 */
export const untilEnded = <E, R>(
  check: (now: number) => Effect.Effect<Liveness, E, R>,
  everyMs: number
): Effect.Effect<string, never, R> =>
  Effect.gen(function* () {
    for (;;) {
      const now = yield* Clock.currentTimeMillis
      const state = yield* check(now).pipe(
        Effect.catchAll(() => Effect.succeed(ended("the credential could not be checked again")))
      )
      if (state._tag === "Ended") return state.reason
      // One millisecond past `until`, so the next check sees it expired.
      const wait = state.until === undefined ? everyMs : Math.min(everyMs, Math.max(0, state.until - now) + 1)
      yield* Effect.sleep(wait)
    }
  })
