/**
 * Promo code validation (docs/api.md, "Billing").
 */
import * as Schema from "effect/Schema"

export const ValidatePromo = Schema.Struct({
  code: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(64))
}).annotations({ identifier: "ValidatePromo" })

export const PromoValidation = Schema.Struct({
  valid: Schema.Boolean,
  discount_percent: Schema.Int,
  discount_amount_cents: Schema.Int,
  name: Schema.String
}).annotations({ identifier: "PromoValidation" })
