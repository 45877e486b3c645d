/**
 * The tool policy (CLPI-style): which concrete tools stand for which Alignment Card actions, which
 * tools are forbidden outright, and what to do with tools nobody mapped yet. Evaluated by
 * `core/Policy.ts` against the tools a request declares and the tool calls a response makes.
 *
 * Tool patterns are globs over the tool's name: `*` matches any run of characters (also none),
 * `?` exactly one, everything else itself; matching is case-sensitive, as providers treat names.
 * Decoding fills in the defaults, so a decoded policy is complete and plain JSON (it travels in the
 * agent-state KV as it is).
 */
import { Schema } from "effect"
import { literalUnion } from "./Literals.js"
import { PolicyEnforcementMode } from "./Verdict.js"

/** Provider tool names are at most 64 (Anthropic, OpenAI) or 128 characters; a pattern may be longer only by its wildcards. */
export const ToolPattern = Schema.String.pipe(
  Schema.minLength(1, { message: () => "tool pattern must not be empty" }),
  Schema.maxLength(256, { message: () => "tool pattern must be at most 256 characters" })
).annotations({ identifier: "ToolPattern", description: "Glob over tool names: * any run, ? one character" })

export const UNMAPPED_TOOL_ACTIONS = ["allow", "warn", "deny"] as const
export const UnmappedToolAction = literalUnion(UNMAPPED_TOOL_ACTIONS, {
  identifier: "UnmappedToolAction",
  description: "What a tool no capability mapping covers gets: allow, a warning, or a violation"
})
export type UnmappedToolAction = typeof UnmappedToolAction.Type

export const CapabilityMapping = Schema.Struct({
  tool: ToolPattern,
  action: Schema.String.pipe(Schema.minLength(1, { message: () => "action must not be empty" }))
}).annotations({
  identifier: "CapabilityMapping",
  description: "Tools matching `tool` perform the card action `action`"
})
export type CapabilityMapping = typeof CapabilityMapping.Type

export const ForbiddenTool = Schema.Struct({
  tool: ToolPattern,
  reason: Schema.String
}).annotations({ identifier: "ForbiddenTool", description: "Tools matching `tool` are always a violation" })
export type ForbiddenTool = typeof ForbiddenTool.Type

export const PolicyEscalationTrigger = Schema.Struct({
  tool: ToolPattern,
  reason: Schema.String
}).annotations({
  identifier: "PolicyEscalationTrigger",
  description: "Tools matching `tool` need a principal's attention: always reported as a warning, never blocked"
})
export type PolicyEscalationTrigger = typeof PolicyEscalationTrigger.Type

export const DEFAULT_GRACE_PERIOD_HOURS = 24

export const PolicyDefaults = Schema.Struct({
  enforcement_mode: Schema.optionalWith(PolicyEnforcementMode, { default: () => "warn" as const }),
  unmapped_tool_action: Schema.optionalWith(UnmappedToolAction, { default: () => "warn" as const }),
  grace_period_hours: Schema.optionalWith(
    Schema.Number.pipe(
      Schema.finite(),
      Schema.between(0, 8760, { message: () => "grace_period_hours must be between 0 and 8760 (a year)" })
    ),
    { default: () => DEFAULT_GRACE_PERIOD_HOURS }
  )
}).annotations({ identifier: "PolicyDefaults" })
export type PolicyDefaults = typeof PolicyDefaults.Type

export const DEFAULT_POLICY_DEFAULTS: PolicyDefaults = {
  enforcement_mode: "warn",
  unmapped_tool_action: "warn",
  grace_period_hours: DEFAULT_GRACE_PERIOD_HOURS
}

export const Policy = Schema.Struct({
  capability_mappings: Schema.optionalWith(Schema.Array(CapabilityMapping), { default: () => [] }),
  forbidden: Schema.optionalWith(Schema.Array(ForbiddenTool), { default: () => [] }),
  escalation_triggers: Schema.optionalWith(Schema.Array(PolicyEscalationTrigger), { default: () => [] }),
  defaults: Schema.optionalWith(PolicyDefaults, { default: () => DEFAULT_POLICY_DEFAULTS })
}).annotations({
  identifier: "Policy",
  description: "Tool policy: capability mappings to card actions, forbidden tools, escalation triggers, defaults"
})
export type Policy = typeof Policy.Type
export type PolicyEncoded = typeof Policy.Encoded

/**
 * Decodes a policy document (JSON, or YAML already parsed). Unknown members are an error: a
 * misspelt `forbiden` silently ignored would be a hole in the policy.
 */
export const decodePolicy = Schema.decodeUnknownEither(Policy, { onExcessProperty: "error", errors: "all" })
