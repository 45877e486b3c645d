/**
 * Plans (items of GET /v1/plans).
 *
 * `billing_model` values beside `none` (Free): `monthly` (flat price, `base_price_cents` per
 * month or `annual_price_cents` per year, `included_checks` per month), `usage` (pay per check at
 * `per_check_price`, after any `included_checks`), `custom` (negotiated, Enterprise).
 */
import { Schema } from "effect"
import { literalUnion } from "./Literals.js"
import { Identifier, JsonObject } from "./Ids.js"

export const PLAN_IDS = ["free", "developer", "team", "enterprise"] as const
export type PlanId = (typeof PLAN_IDS)[number]

export const BILLING_MODELS = ["none", "monthly", "usage", "custom"] as const
export const BillingModel = literalUnion(BILLING_MODELS, { identifier: "BillingModel" })
export type BillingModel = typeof BillingModel.Type

const Cents = Schema.NonNegativeInt

/** `plan_id` is any id (self-hosters add plans); `PLAN_IDS` are the ones Candor ships. */
export const Plan = Schema.Struct({
  plan_id: Identifier,
  display_name: Schema.String,
  description: Schema.String,
  billing_model: BillingModel,
  base_price_cents: Cents,
  annual_price_cents: Cents,
  per_check_price: Schema.NonNegative.annotations({ description: "Price of one check in US dollars" }),
  included_checks: Schema.NonNegativeInt,
  trace_retention_days: Schema.NonNegativeInt,
  feature_flags: JsonObject,
  limits: JsonObject,
  sort_order: Schema.Int
}).annotations({ identifier: "Plan" })
export type Plan = typeof Plan.Type

export const PlanList = Schema.Struct({
  plans: Schema.Array(Plan).annotations({ description: "In `sort_order`" })
}).annotations({ identifier: "PlanList" })
