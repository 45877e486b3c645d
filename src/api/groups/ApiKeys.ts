/**
 * API keys (docs/api.md, "API keys"): server-to-server credentials sent in `x-api-key` or
 * `X-Service-Api-Key`. Scoped to a user (acting as that user) or to an organization (acting with
 * the role they were created under, at most the creator's). The key is shown once, at creation or
 * rotation; only its SHA-256 is stored. Paths are ours (docs/api.md).
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as Schema from "effect/Schema"
import { Authentication } from "../../../adapters/auth/Authentication.js"
import { BadRequest, Conflict, Forbidden, InternalError, NotFound } from "../../../adapters/http/ApiErrors.js"
import { DateTimeString, Identifier } from "../../../core/schema/Ids.js"
import { OrgRole } from "../../../core/schema/Organization.js"

export const ApiKey = Schema.Struct({
  key_id: Identifier,
  name: Schema.String,
  prefix: Schema.String.annotations({ description: "The key's first characters, to recognise it" }),
  user_id: Identifier,
  org_id: Schema.NullOr(Identifier),
  role: Schema.NullOr(OrgRole).annotations({
    description: "The role an organization key acts with; null for a personal key"
  }),
  created_at: DateTimeString,
  last_used_at: Schema.NullOr(DateTimeString),
  revoked_at: Schema.NullOr(DateTimeString)
}).annotations({ identifier: "ApiKey" })

export const ApiKeyWithSecret = Schema.Struct({
  ...ApiKey.fields,
  key: Schema.String.annotations({ description: "The key itself: shown only in this response" })
}).annotations({ identifier: "ApiKeyWithSecret" })

export const CreateApiKey = Schema.Struct({
  name: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(100)),
  org_id: Schema.optionalWith(Identifier, { exact: true }),
  role: Schema.optionalWith(OrgRole, { exact: true }).annotations({
    description: "Organization keys only; default and maximum: the creator's role"
  })
}).annotations({ identifier: "CreateApiKey" })

export const ApiKeyList = Schema.Struct({ keys: Schema.Array(ApiKey) }).annotations({ identifier: "ApiKeyList" })

const KeyPath = Schema.Struct({ key_id: Identifier })

export class ApiKeysApi extends HttpApiGroup.make("apiKeys")
  .add(
    HttpApiEndpoint.post("createApiKey", "/api-keys")
      .setPayload(CreateApiKey)
      .addSuccess(ApiKeyWithSecret, { status: 201 })
  )
  .add(
    HttpApiEndpoint.get("listApiKeys", "/api-keys")
      .setUrlParams(Schema.Struct({ org_id: Schema.optionalWith(Identifier, { exact: true }) }))
      .addSuccess(ApiKeyList)
  )
  .add(HttpApiEndpoint.post("rotateApiKey", "/api-keys/:key_id/rotate").setPath(KeyPath).addSuccess(ApiKeyWithSecret))
  .add(HttpApiEndpoint.del("revokeApiKey", "/api-keys/:key_id").setPath(KeyPath).addSuccess(ApiKey))
  .addError(BadRequest)
  .addError(Forbidden)
  .addError(NotFound)
  // Creation past the live keys a user or an organization may hold.
  .addError(Conflict)
  .addError(InternalError)
  .middleware(Authentication) {}
