/**
 * API keys: personal keys are managed by their user (with a user token); organization keys by the
 * organization's Admins and Owner, with a role at most the creator's. The secret is returned only
 * by create and rotate. Live keys are capped per user and per organization (409 beyond, ../ApiKeyCaps.ts);
 * an organization key stops when its creator loses the role it was created under
 * (adapters/auth/CredentialLiveness.ts), and Orgs.ts revokes such keys when it removes or demotes.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { randomUUID } from "node:crypto"
import { atLeast } from "../../../adapters/auth/IdentityAccessControl.js"
import { API_KEY_PREFIX } from "../../../adapters/auth/CredentialAuthentication.js"
import { CurrentPrincipal } from "../../../adapters/auth/Principal.js"
import { displayPrefix, generateSecret, hashSecret } from "../../../adapters/auth/Secrets.js"
import { Conflict, Forbidden, NotFound } from "../../../adapters/http/ApiErrors.js"
import { type ApiKey, CredentialRepo } from "../../../adapters/store/identity/CredentialRepo.js"
import { CandorApi } from "../Api.js"
import { ApiKeyCaps } from "../ApiKeyCaps.js"
import { internal, requireOrgRole, requireWrite } from "./Access.js"

/** Keys are managed with a user token: a key cannot mint or revoke keys. */
const userToken = Effect.flatMap(CurrentPrincipal, (principal) =>
  principal.kind === "user"
    ? Effect.succeed(principal.userId)
    : Effect.fail(new Forbidden({ error: "API keys are managed with a user token" }))
)

const keyNotFound = (keyId: string) => new NotFound({ error: `API key ${keyId} not found` })

/** The key, when the caller may manage it (else 404: keys of others do not leak). */
const manageable = (keyId: string) =>
  Effect.gen(function* () {
    const userId = yield* userToken
    const key = yield* (yield* CredentialRepo).getKey(keyId)
    if (key === undefined) return yield* Effect.fail(keyNotFound(keyId))
    if (key.org_id === null) {
      if (key.user_id !== userId) return yield* Effect.fail(keyNotFound(keyId))
    } else {
      yield* requireOrgRole(key.org_id, "admin", false).pipe(
        Effect.catchTag("NotFound", () => Effect.fail(keyNotFound(keyId)))
      )
    }
    return key
  })

const withSecret = (key: ApiKey, secret: string) => ({ ...key, key: secret })

export const ApiKeysLive = HttpApiBuilder.group(CandorApi, "apiKeys", (handlers) =>
  handlers
    .handle("createApiKey", ({ payload }) =>
      Effect.gen(function* () {
        yield* requireWrite
        const userId = yield* userToken
        let role: ApiKey["role"] = null
        if (payload.org_id !== undefined) {
          const mine = yield* requireOrgRole(payload.org_id, "admin", true)
          role = payload.role ?? mine
          if (!atLeast(mine, role)) {
            return yield* Effect.fail(new Forbidden({ error: `role: cannot create a ${role} key as ${mine}` }))
          }
        } else if (payload.role !== undefined) {
          return yield* Effect.fail(new Forbidden({ error: "role: personal keys act as their user and take no role" }))
        }
        const secret = generateSecret(API_KEY_PREFIX)
        const key = yield* (yield* CredentialRepo).createKey(
          {
            key_id: `key_${randomUUID()}`,
            key_hash: hashSecret(secret),
            name: payload.name,
            prefix: displayPrefix(secret),
            user_id: userId,
            org_id: payload.org_id ?? null,
            role
          },
          yield* ApiKeyCaps
        )
        return withSecret(key, secret)
      }).pipe(
        Effect.catchTags({
          KeyCapReached: ({ limit, scope }) =>
            Effect.fail(
              new Conflict({
                error: `at most ${limit} live API keys per ${scope}: revoke one first (DELETE /v1/api-keys/{key_id})`
              })
            ),
          StoreError: internal
        })
      )
    )
    .handle("listApiKeys", ({ urlParams }) =>
      Effect.gen(function* () {
        const userId = yield* userToken
        const repo = yield* CredentialRepo
        if (urlParams.org_id === undefined) return { keys: yield* repo.keysOf({ userId }) }
        yield* requireOrgRole(urlParams.org_id, "admin", false)
        return { keys: yield* repo.keysOf({ orgId: urlParams.org_id }) }
      }).pipe(Effect.catchTag("StoreError", internal))
    )
    .handle("rotateApiKey", ({ path }) =>
      Effect.gen(function* () {
        yield* requireWrite
        const key = yield* manageable(path.key_id)
        const secret = generateSecret(API_KEY_PREFIX)
        const repo = yield* CredentialRepo
        if (!(yield* repo.rotateKey(key.key_id, hashSecret(secret), displayPrefix(secret)))) {
          return yield* Effect.fail(keyNotFound(path.key_id))
        }
        const rotated = yield* repo.getKey(key.key_id)
        return withSecret(rotated ?? key, secret)
      }).pipe(Effect.catchTag("StoreError", internal))
    )
    .handle("revokeApiKey", ({ path }) =>
      Effect.gen(function* () {
        yield* requireWrite
        const key = yield* manageable(path.key_id)
        const repo = yield* CredentialRepo
        yield* repo.revokeKey(key.key_id)
        return (yield* repo.getKey(key.key_id)) ?? key
      }).pipe(Effect.catchTag("StoreError", internal))
    )
)
