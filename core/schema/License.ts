/**
 * License validation (docs/api.md, "License").
 */
import * as Schema from "effect/Schema"
import { DateTimeString, JsonObject } from "./Ids.js"

export const ValidateLicense = Schema.Struct({
  license: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(8192)),
  instance_id: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(256)),
  instance_metadata: Schema.optionalWith(JsonObject, { default: () => ({}) })
}).annotations({ identifier: "ValidateLicense" })

export const LicenseValidation = Schema.Struct({
  valid: Schema.Boolean,
  license_id: Schema.NullOr(Schema.String),
  plan_id: Schema.NullOr(Schema.String),
  feature_flags: JsonObject,
  limits: JsonObject,
  expires_at: Schema.NullOr(DateTimeString),
  next_check_seconds: Schema.Int,
  warning: Schema.String.annotations({ description: "Empty when there is nothing to say" })
}).annotations({ identifier: "LicenseValidation" })
