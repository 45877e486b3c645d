/**
 * How large a tool policy the API stores (`POLICY_MAX_RULES`, core/Policy.ts `policyOverLimits`):
 * every rule is work for every tool of every request at the gateways. The default holds unless the
 * process says otherwise (`candor serve` provides it from src/Config.ts; tests their own).
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import { BadRequest } from "../../../adapters/http/ApiErrors.js"
import { DEFAULT_POLICY_MAX_RULES, policyOverLimits } from "../../../core/Policy.js"
import type { Policy } from "../../../core/schema/Policy.js"

export class PolicyLimits extends Context.Reference<PolicyLimits>()("candor/src/api/handlers/PolicyLimits", {
  defaultValue: (): { readonly maxRules: number } => ({ maxRules: DEFAULT_POLICY_MAX_RULES })
}) {}

/** 400 `{error}` naming the limit a policy is over; `field` prefixes it when the policy is a member of a body. */
export const withinPolicyLimits = (policy: Policy, field = ""): Effect.Effect<Policy, BadRequest> =>
  Effect.flatMap(PolicyLimits, ({ maxRules }) => {
    const over = policyOverLimits(policy, maxRules)
    return over === undefined
      ? Effect.succeed(policy)
      : Effect.fail(new BadRequest({ error: field === "" ? over : `${field}: ${over}` }))
  })
