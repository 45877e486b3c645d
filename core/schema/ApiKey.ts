/**
 * API keys as the API publishes them (docs/api.md, "API keys"): the key's record, the answer that shows
 * its secret once, and the request that creates one.
 */
import * as Schema from "effect/Schema"
import { DateTimeString, Identifier } from "./Ids.js"
import { OrgRole } from "./Organization.js"

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
export type ApiKey = typeof ApiKey.Type

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
