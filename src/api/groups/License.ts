/**
 * POST /v1/license/validate (docs/api.md): checks an Ed25519-signed license token
 * (issued with `candor license issue`) and records the instance that checked it. An unverifiable,
 * expired or unknown-plan license answers 200 with `valid: false` and a `warning` saying why; the
 * fields it cannot vouch for are null then (docs/api.md).
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import { Authentication } from "../../../adapters/auth/Authentication.js"
import { InternalError } from "../../../adapters/http/ApiErrors.js"
import { ValidateLicense, LicenseValidation } from "../../../core/schema/License.js"

export class LicenseApi extends HttpApiGroup.make("license")
  .add(
    HttpApiEndpoint.post("validateLicense", "/license/validate")
      .setPayload(ValidateLicense)
      .addSuccess(LicenseValidation)
  )
  .addError(InternalError)
  .middleware(Authentication) {}
