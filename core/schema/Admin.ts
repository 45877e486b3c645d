/**
 * What the operator's administration routes take and answer (docs/api.md, "Admin"): impersonation
 * sessions, user accounts, plans and promo codes.
 */
import * as Schema from "effect/Schema"
import { DateTimeString, Identifier } from "./Ids.js"

export const StartImpersonation = Schema.Struct({
  user_id: Identifier,
  reason: Schema.optionalWith(Schema.String.pipe(Schema.maxLength(500)), { exact: true })
}).annotations({ identifier: "StartImpersonation" })

export const ImpersonationSession = Schema.Struct({
  session_id: Identifier,
  admin_user_id: Identifier,
  target_user_id: Identifier,
  reason: Schema.NullOr(Schema.String),
  created_at: DateTimeString,
  expires_at: DateTimeString,
  ended_at: Schema.NullOr(DateTimeString),
  active: Schema.Boolean,
  read_only: Schema.Literal(true)
}).annotations({ identifier: "ImpersonationSession" })

export const StartedImpersonation = Schema.Struct({
  ...ImpersonationSession.fields,
  token: Schema.String.annotations({ description: "Send as `Authorization: Bearer <token>`; shown once" })
}).annotations({ identifier: "StartedImpersonation" })

export const UpdateUser = Schema.Struct({
  plan_id: Schema.optionalWith(Identifier, { exact: true }),
  is_admin: Schema.optionalWith(Schema.Boolean, { exact: true })
}).annotations({ identifier: "UpdateUser" })

export const UserAccount = Schema.Struct({
  user_id: Identifier,
  email: Schema.NullOr(Schema.String),
  plan_id: Identifier,
  is_admin: Schema.Boolean,
  created_at: DateTimeString
}).annotations({ identifier: "UserAccount" })

export const SetPlan = Schema.Struct({ plan_id: Identifier }).annotations({ identifier: "SetPlan" })

export const PromoCode = Schema.Struct({
  name: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200)),
  discount_percent: Schema.Int.pipe(Schema.between(0, 100)),
  discount_amount_cents: Schema.NonNegativeInt
}).annotations({ identifier: "PromoCode" })
