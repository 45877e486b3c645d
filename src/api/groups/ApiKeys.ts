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
import { Identifier } from "../../../core/schema/Ids.js"
import { ApiKey, ApiKeyWithSecret, CreateApiKey, ApiKeyList } from "../../../core/schema/ApiKey.js"

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
