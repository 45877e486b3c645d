/**
 * API keys: personal keys act as their user; organization keys act for their organization with a
 * role at most their creator's. The secret is returned only by create and rotate (stored as SHA-256,
 * shown by its prefix). Live keys are capped per user and per organization (409 beyond); an
 * organization key stops when its creator loses the role it was created under
 * (adapters/auth/CredentialLiveness.ts), and services/Organizations.ts revokes such keys when it
 * removes or demotes.
 *
 * Who may manage a key (its user, with a user token; an organization's Admins and Owner for its
 * keys) is the caller's to check, as is the creator's role in the organization and the caps in force.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { randomUUID } from "node:crypto"
import { API_KEY_PREFIX } from "../adapters/auth/CredentialAuthentication.js"
import { atLeast } from "../adapters/auth/IdentityAccessControl.js"
import { displayPrefix, generateSecret, hashSecret } from "../adapters/auth/Secrets.js"
import { Conflict, Forbidden, NotFound } from "../adapters/http/ApiErrors.js"
import { type ApiKey, CredentialRepo, type KeyCaps } from "../adapters/store/identity/CredentialRepo.js"
import type { OrgRole } from "../core/schema/Organization.js"

export const keyNotFound = (keyId: string) => new NotFound({ error: `API key ${keyId} not found` })

const withSecret = (key: ApiKey, secret: string) => ({ ...key, key: secret })

/** A key as asked for: personal without `org_id`; an organization key's role defaults to its creator's. */
export interface NewApiKey {
  readonly name: string
  readonly org_id?: string
  readonly role?: OrgRole
}

export const make = Effect.gen(function* () {
  const repo = yield* CredentialRepo

  /**
   * Creates `userId`'s key; `creatorRole`: the creator's role in the key's organization (for an
   * organization key). Answers the key with its secret.
   */
  const create = (userId: string, input: NewApiKey, creatorRole: OrgRole | undefined, caps: KeyCaps) =>
    Effect.gen(function* () {
      let role: ApiKey["role"] = null
      if (input.org_id !== undefined) {
        // The caller checks the creator's role in the organization: without it no role can be bounded.
        if (creatorRole === undefined) return yield* Effect.dieMessage("an organization key needs its creator's role")
        role = input.role ?? creatorRole
        if (!atLeast(creatorRole, role)) {
          return yield* Effect.fail(new Forbidden({ error: `role: cannot create a ${role} key as ${creatorRole}` }))
        }
      } else if (input.role !== undefined) {
        return yield* Effect.fail(new Forbidden({ error: "role: personal keys act as their user and take no role" }))
      }
      const secret = generateSecret(API_KEY_PREFIX)
      const key = yield* repo.createKey(
        {
          key_id: `key_${randomUUID()}`,
          key_hash: hashSecret(secret),
          name: input.name,
          prefix: displayPrefix(secret),
          user_id: userId,
          org_id: input.org_id ?? null,
          role
        },
        caps
      )
      return withSecret(key, secret)
    }).pipe(
      Effect.catchTag("KeyCapReached", ({ limit, scope }) =>
        Effect.fail(
          new Conflict({
            error: `at most ${limit} live API keys per ${scope}: revoke one first (DELETE /v1/api-keys/{key_id})`
          })
        )
      )
    )

  /** A user's personal keys, or an organization's keys, newest first, revoked ones included. */
  const list = (owner: { readonly userId: string } | { readonly orgId: string }) =>
    Effect.map(repo.keysOf(owner), (keys) => ({ keys }))

  /** The key (else 404). */
  const get = (keyId: string) =>
    Effect.flatMap(repo.getKey(keyId), (key) =>
      key === undefined ? Effect.fail(keyNotFound(keyId)) : Effect.succeed(key)
    )

  /** Replaces the key's secret; answers the key with its new secret (404 when it is revoked). */
  const rotate = (key: ApiKey) =>
    Effect.gen(function* () {
      const secret = generateSecret(API_KEY_PREFIX)
      if (!(yield* repo.rotateKey(key.key_id, hashSecret(secret), displayPrefix(secret)))) {
        return yield* Effect.fail(keyNotFound(key.key_id))
      }
      const rotated = yield* repo.getKey(key.key_id)
      return withSecret(rotated ?? key, secret)
    })

  /** Revokes the key; answers it as revoked. */
  const revoke = (key: ApiKey) =>
    Effect.gen(function* () {
      yield* repo.revokeKey(key.key_id)
      return (yield* repo.getKey(key.key_id)) ?? key
    })

  return { create, list, get, rotate, revoke }
})

export class ApiKeys extends Context.Tag("candor/services/ApiKeys")<ApiKeys, Effect.Effect.Success<typeof make>>() {}

export const layer = Layer.effect(ApiKeys, make)
