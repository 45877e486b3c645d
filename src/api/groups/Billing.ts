/** POST /v1/billing/validate-promo (docs/api.md): an unknown or expired code is `valid: false`. */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as Schema from "effect/Schema"
import { Authentication } from "../../../adapters/auth/Authentication.js"
import { InternalError } from "../../../adapters/http/ApiErrors.js"

export const ValidatePromo = Schema.Struct({
  code: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(64))
}).annotations({ identifier: "ValidatePromo" })

export const PromoValidation = Schema.Struct({
  valid: Schema.Boolean,
  discount_percent: Schema.Int,
  discount_amount_cents: Schema.Int,
  name: Schema.String
}).annotations({ identifier: "PromoValidation" })

export class BillingApi extends HttpApiGroup.make("billing")
  .add(
    HttpApiEndpoint.post("validatePromo", "/billing/validate-promo")
      .setPayload(ValidatePromo)
      .addSuccess(PromoValidation)
  )
  .addError(InternalError)
  .middleware(Authentication) {}
