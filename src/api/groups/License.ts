/**
 * POST /v1/license/validate (docs/api.md): checks an Ed25519-signed license token
 * (issued with `candor license issue`) and records the instance that checked it. An unverifiable,
 * expired or unknown-plan license answers 200 with `valid: false` and a `warning` saying why; the
 * fields it cannot vouch for are null then (docs/api.md).
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as Schema from "effect/Schema"
import { Authentication } from "../../../adapters/auth/Authentication.js"
import { InternalError } from "../../../adapters/http/ApiErrors.js"
import { DateTimeString, JsonObject } from "../../../core/schema/Ids.js"

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

export class LicenseApi extends HttpApiGroup.make("license")
  .add(
    HttpApiEndpoint.post("validateLicense", "/license/validate")
      .setPayload(ValidateLicense)
      .addSuccess(LicenseValidation)
  )
  .addError(InternalError)
  .middleware(Authentication) {}
