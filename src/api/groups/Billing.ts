/** POST /v1/billing/validate-promo (docs/api.md): an unknown or expired code is `valid: false`. */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import { Authentication } from "../../../adapters/auth/Authentication.js"
import { InternalError } from "../../../adapters/http/ApiErrors.js"
import { ValidatePromo, PromoValidation } from "../../../core/schema/Billing.js"

export class BillingApi extends HttpApiGroup.make("billing")
  .add(
    HttpApiEndpoint.post("validatePromo", "/billing/validate-promo")
      .setPayload(ValidatePromo)
      .addSuccess(PromoValidation)
  )
  .addError(InternalError)
  .middleware(Authentication) {}
