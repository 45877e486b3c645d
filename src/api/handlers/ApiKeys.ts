/**
 * API keys, through the ApiKeys service (services/ApiKeys.ts): personal keys are managed by their
 * user (with a user token); organization keys by the organization's Admins and Owner, with a role at
 * most the creator's. Live keys are capped per user and per organization (../ApiKeyCaps.ts).
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { CurrentPrincipal } from "../../../adapters/auth/Principal.js"
import { Forbidden } from "../../../adapters/http/ApiErrors.js"
import { ApiKeys, keyNotFound } from "../../../services/ApiKeys.js"
import { CandorApi } from "../Api.js"
import { ApiKeyCaps } from "../ApiKeyCaps.js"
import { requireOrgRole, requireWrite } from "./Access.js"

/** Keys are managed with a user token: a key cannot mint or revoke keys. */
const userToken = Effect.flatMap(CurrentPrincipal, (principal) =>
  principal.kind === "user"
    ? Effect.succeed(principal.userId)
    : Effect.fail(new Forbidden({ error: "API keys are managed with a user token" }))
)

export const ApiKeysLive = HttpApiBuilder.group(CandorApi, "apiKeys", (handlers) =>
  Effect.map(ApiKeys, (keys) => {
    /** The key, when the caller may manage it (else 404: keys of others do not leak). */
    const manageable = (keyId: string) =>
      Effect.gen(function* () {
        const userId = yield* userToken
        const key = yield* keys.get(keyId)
        if (key.org_id === null) {
          if (key.user_id !== userId) return yield* Effect.fail(keyNotFound(keyId))
        } else {
          yield* requireOrgRole(key.org_id, "admin", false).pipe(
            Effect.catchTag("NotFound", () => Effect.fail(keyNotFound(keyId)))
          )
        }
        return key
      })

    return handlers
      .handle("createApiKey", ({ payload }) =>
        Effect.gen(function* () {
          yield* requireWrite
          const userId = yield* userToken
          const creatorRole =
            payload.org_id === undefined ? undefined : yield* requireOrgRole(payload.org_id, "admin", true)
          return yield* keys.create(userId, payload, creatorRole, yield* ApiKeyCaps)
        })
      )
      .handle("listApiKeys", ({ urlParams }) =>
        Effect.gen(function* () {
          const userId = yield* userToken
          if (urlParams.org_id === undefined) return yield* keys.list({ userId })
          yield* requireOrgRole(urlParams.org_id, "admin", false)
          return yield* keys.list({ orgId: urlParams.org_id })
        })
      )
      .handle("rotateApiKey", ({ path }) =>
        Effect.zipRight(requireWrite, Effect.flatMap(manageable(path.key_id), keys.rotate))
      )
      .handle("revokeApiKey", ({ path }) =>
        Effect.zipRight(requireWrite, Effect.flatMap(manageable(path.key_id), keys.revoke))
      )
  })
)
