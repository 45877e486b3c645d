/**
 * The tool policy document, in the public CLPI DSL (schema version 1.0): which concrete tools stand
 * for which Alignment Card actions, which tools are forbidden outright, which need a principal's
 * attention, and what to do with tools nobody mapped. Evaluated by `core/Policy.ts` against the
 * tools a request declares and the tool calls a response makes; stored and served by the policy
 * API (docs/api.md, "Policies"); specified in docs/formats.md, "Tool policy".
 *
 * Tool patterns are globs over the tool's name: `*` matches any run of characters (also none),
 * `?` exactly one, everything else itself; matching is case-sensitive, as providers treat names.
 * Decoding fills in the defaults, so a decoded policy is complete and plain JSON (it travels in the
 * agent-state KV as it is, and its canonical hash is what the governance log binds).
 */
import { Schema } from "effect"
import { SEVERITIES } from "./Concern.js"
import { DateTimeString, AgentId, Hex32, Identifier } from "./Ids.js"
import { literalUnion } from "./Literals.js"
import { PolicyEnforcementMode } from "./Verdict.js"

export const POLICY_SCHEMA_VERSION = "1.0"

/** Provider tool names are at most 64 (Anthropic, OpenAI) or 128 characters; a pattern may be longer only by its wildcards. */
export const ToolPattern = Schema.String.pipe(
  Schema.minLength(1, { message: () => "tool pattern must not be empty" }),
  Schema.maxLength(256, { message: () => "tool pattern must be at most 256 characters" })
).annotations({ identifier: "ToolPattern", description: "Glob over tool names: * any run, ? one character" })

export const PolicySeverity = literalUnion(SEVERITIES, {
  identifier: "PolicySeverity",
  description: "Severity of a finding: low, medium, high, critical (high and critical make the verdict fail)"
})
export type PolicySeverity = typeof PolicySeverity.Type

export const POLICY_SCOPES = ["org", "agent"] as const
export const PolicyScope = literalUnion(POLICY_SCOPES, { identifier: "PolicyScope" })
export type PolicyScope = typeof PolicyScope.Type

export const UNMAPPED_TOOL_ACTIONS = ["allow", "warn", "deny"] as const
export const UnmappedToolAction = literalUnion(UNMAPPED_TOOL_ACTIONS, {
  identifier: "UnmappedToolAction",
  description: "What a tool no capability mapping covers gets: nothing, a warning, or a violation"
})
export type UnmappedToolAction = typeof UnmappedToolAction.Type

export const TRIGGER_ACTIONS = ["escalate", "warn", "deny", "approve"] as const
export const TriggerAction = literalUnion(TRIGGER_ACTIONS, {
  identifier: "TriggerAction",
  description:
    "deny: a violation (high); escalate and warn: a warning; approve: an MCP tools/call waits for a person's decision (docs/approvals.md), and on the LLM path, where nobody can wait, it is deny under an enforcing policy and escalate otherwise"
})
export type TriggerAction = typeof TriggerAction.Type

const Text = (max: number, what: string) =>
  Schema.String.pipe(Schema.maxLength(max, { message: () => `${what} must be at most ${max} characters` }))

export const PolicyMeta = Schema.Struct({
  schema_version: Schema.Literal(POLICY_SCHEMA_VERSION).annotations({
    message: (issue) => ({
      message: `must be "${POLICY_SCHEMA_VERSION}" (the only schema version); got ${JSON.stringify(issue.actual)}`,
      override: true
    })
  }),
  name: Schema.optionalWith(Text(200, "name"), { exact: true }),
  description: Schema.optionalWith(Text(2000, "description"), { exact: true }),
  scope: Schema.optionalWith(PolicyScope, { exact: true })
}).annotations({ identifier: "PolicyMeta" })
export type PolicyMeta = typeof PolicyMeta.Type

export const CapabilityMapping = Schema.Struct({
  tools: Schema.Array(ToolPattern).pipe(
    Schema.minItems(1, { message: () => "tools must list at least one tool pattern" })
  ),
  card_actions: Schema.Array(
    Schema.String.pipe(Schema.minLength(1, { message: () => "a card action must not be empty" }))
  ),
  description: Schema.optionalWith(Text(2000, "description"), { exact: true })
}).annotations({
  identifier: "CapabilityMapping",
  description: "Tools matching any of `tools` perform every action of `card_actions` (actions of the Alignment Card)"
})
export type CapabilityMapping = typeof CapabilityMapping.Type

export const MappingName = Schema.String.pipe(
  Schema.minLength(1, { message: () => "a capability mapping name must not be empty" }),
  Schema.maxLength(128, { message: () => "a capability mapping name must be at most 128 characters" })
).annotations({ identifier: "MappingName" })

export const ForbiddenRule = Schema.Struct({
  pattern: ToolPattern,
  reason: Schema.String,
  severity: Schema.optionalWith(PolicySeverity, { default: () => "high" as const })
}).annotations({ identifier: "ForbiddenRule", description: "Tools matching `pattern` are always a violation" })
export type ForbiddenRule = typeof ForbiddenRule.Type

const TRIGGER_CONDITION = /^\s*tool_matches\s*\(\s*(?:'([^']*)'|"([^"]*)")\s*\)\s*$/

/** The glob of a `tool_matches('<glob>')` condition (single or double quotes), or undefined when it is not one. */
export const triggerGlob = (condition: string): string | undefined => {
  const match = TRIGGER_CONDITION.exec(condition)
  const glob = match?.[1] ?? match?.[2]
  return glob === undefined || glob === "" || glob.length > 256 ? undefined : glob
}

export const TriggerCondition = Schema.String.pipe(
  Schema.filter((condition) => triggerGlob(condition) !== undefined, {
    message: (issue) =>
      `must be tool_matches('<glob>') with a glob of 1 to 256 characters; got ${JSON.stringify(issue.actual)}`
  })
).annotations({
  identifier: "TriggerCondition",
  description: "tool_matches('<glob>'): the tools the trigger applies to",
  // Built, not filtered: random strings are almost never a condition, so a filter would never end.
  arbitrary: () => (fc) => fc.stringMatching(/^[A-Za-z0-9_*?.-]{1,64}$/).map((glob) => `tool_matches('${glob}')`)
})

export const PolicyEscalationTrigger = Schema.Struct({
  condition: TriggerCondition,
  action: TriggerAction,
  reason: Schema.String
}).annotations({
  identifier: "PolicyEscalationTrigger",
  description: "Tools matching the condition need a principal's attention (escalate, warn) or are refused (deny)"
})
export type PolicyEscalationTrigger = typeof PolicyEscalationTrigger.Type

/** An argument's name: a top-level member of a tool call's arguments. */
export const ArgumentName = Schema.String.pipe(
  Schema.minLength(1, { message: () => "an argument name must not be empty" }),
  Schema.maxLength(128, { message: () => "an argument name must be at most 128 characters" })
).annotations({ identifier: "ArgumentName" })

/**
 * A condition on one argument of the calls to the tools `tool` matches (issue 28, MCP tool calls):
 * the argument must be present and satisfy every bound given (`matches`: a glob over a string
 * value, `max_length`: a string's length, `min` / `max`: a number's range). A call that omits the
 * argument, gives it another type, or breaks a bound is a violation at `severity` (finding type
 * `argument`). Evaluated on the MCP gateway's `tools/call` (docs/mcp.md), where arguments are read
 * before the server sees them; tools a request merely declares carry no arguments.
 */
export const ArgumentCondition = Schema.Struct({
  tool: ToolPattern,
  argument: ArgumentName,
  matches: Schema.optionalWith(ToolPattern, { exact: true }).annotations({
    description: "Glob the string value must match: * any run, ? one character"
  }),
  max_length: Schema.optionalWith(Schema.Int.pipe(Schema.between(0, 1_000_000)), { exact: true }),
  min: Schema.optionalWith(Schema.Number.pipe(Schema.finite()), { exact: true }),
  max: Schema.optionalWith(Schema.Number.pipe(Schema.finite()), { exact: true }),
  reason: Schema.String,
  severity: Schema.optionalWith(PolicySeverity, { default: () => "high" as const })
})
  .pipe(
    Schema.filter(
      (c) =>
        c.matches !== undefined || c.max_length !== undefined || c.min !== undefined || c.max !== undefined
          ? c.min === undefined || c.max === undefined || c.min <= c.max
            ? undefined
            : "min must not be greater than max"
          : "an argument condition needs at least one of matches, max_length, min, max",
      { identifier: "ArgumentConditionBounds" }
    )
  )
  .annotations({
    identifier: "ArgumentCondition",
    description:
      "A bound on one argument of calls to the matching tools (glob, length, numeric range); a call breaking it, or omitting the argument, is a violation"
  })
export type ArgumentCondition = typeof ArgumentCondition.Type

export const DEFAULT_GRACE_PERIOD_HOURS = 24

/** How long an `approve` trigger holds a call for a decision: 5 minutes unless the policy says. */
export const DEFAULT_APPROVAL_TIMEOUT_SECONDS = 300
/** Bounds: a person needs some seconds; a held call holds a connection, so at most an hour. */
export const APPROVAL_TIMEOUT_BOUNDS = { min: 10, max: 3600 } as const

export const ApprovalTimeoutSeconds = Schema.Int.pipe(
  Schema.between(APPROVAL_TIMEOUT_BOUNDS.min, APPROVAL_TIMEOUT_BOUNDS.max, {
    message: () =>
      `approval_timeout_seconds must be a whole number between ${APPROVAL_TIMEOUT_BOUNDS.min} and ${APPROVAL_TIMEOUT_BOUNDS.max}`
  })
).annotations({
  identifier: "ApprovalTimeoutSeconds",
  description: "How long a call held by an approve trigger waits for a decision before it is denied (default 300)"
})

export const PolicyDefaults = Schema.Struct({
  unmapped_tool_action: Schema.optionalWith(UnmappedToolAction, { default: () => "warn" as const }),
  unmapped_severity: Schema.optionalWith(PolicySeverity, { default: () => "medium" as const }),
  fail_open: Schema.optionalWith(Schema.Boolean, { default: () => true }),
  enforcement_mode: Schema.optionalWith(PolicyEnforcementMode, { default: () => "warn" as const }),
  grace_period_hours: Schema.optionalWith(
    Schema.Number.pipe(
      Schema.finite(),
      Schema.between(0, 8760, { message: () => "grace_period_hours must be between 0 and 8760 (a year)" })
    ),
    { default: () => DEFAULT_GRACE_PERIOD_HOURS }
  ),
  // Human approval (issue 28): optional without a default, so that a policy written before it
  // decodes, encodes and hashes exactly as it did. core/Approval.ts reads it (absent: 300 s).
  approval_timeout_seconds: Schema.optionalWith(ApprovalTimeoutSeconds, { exact: true })
}).annotations({ identifier: "PolicyDefaults" })
export type PolicyDefaults = typeof PolicyDefaults.Type

export const DEFAULT_POLICY_DEFAULTS: PolicyDefaults = {
  unmapped_tool_action: "warn",
  unmapped_severity: "medium",
  fail_open: true,
  enforcement_mode: "warn",
  grace_period_hours: DEFAULT_GRACE_PERIOD_HOURS
}

export const Policy = Schema.Struct({
  meta: Schema.optionalWith(PolicyMeta, { default: () => ({ schema_version: POLICY_SCHEMA_VERSION }) }),
  capability_mappings: Schema.optionalWith(Schema.Record({ key: MappingName, value: CapabilityMapping }), {
    default: () => ({})
  }),
  forbidden: Schema.optionalWith(Schema.Array(ForbiddenRule), { default: () => [] }),
  escalation_triggers: Schema.optionalWith(Schema.Array(PolicyEscalationTrigger), { default: () => [] }),
  /** Absent rather than defaulted: a policy without any keeps the canonical form (and hash) it had before them. */
  argument_conditions: Schema.optionalWith(Schema.Array(ArgumentCondition), { exact: true }),
  defaults: Schema.optionalWith(PolicyDefaults, { default: () => DEFAULT_POLICY_DEFAULTS })
}).annotations({
  identifier: "Policy",
  description:
    "Tool policy (CLPI DSL 1.0): capability mappings to card actions, forbidden tools, escalation triggers, defaults"
})
export type Policy = typeof Policy.Type
export type PolicyEncoded = typeof Policy.Encoded

/**
 * Decodes a policy document (JSON, or YAML already parsed). Unknown members are an error: a
 * misspelt `forbiden` silently ignored would be a hole in the policy.
 */
export const decodePolicy = Schema.decodeUnknownEither(Policy, { onExcessProperty: "error", errors: "all" })

// ---------------------------------------------------------------------------------------------
// What an evaluation reports (core/Policy.ts): the gateway's 403 body, the trace metadata, the evaluate route.

export const POLICY_VERDICTS = ["pass", "warn", "fail"] as const
export const PolicyVerdict = literalUnion(POLICY_VERDICTS, {
  identifier: "PolicyVerdict",
  description: "fail: a critical or high violation; warn: any other finding; pass: none"
})
export type PolicyVerdict = typeof PolicyVerdict.Type

export const POLICY_FINDING_TYPES = [
  "forbidden",
  "card_forbidden",
  "capability_exceeded",
  "unmapped_denied",
  "unmapped",
  "escalation",
  "argument"
] as const
export const PolicyFindingType = literalUnion(POLICY_FINDING_TYPES, { identifier: "PolicyFindingType" })
export type PolicyFindingType = typeof PolicyFindingType.Type

export const PolicyFinding = Schema.Struct({
  type: PolicyFindingType,
  tool: Schema.String,
  reason: Schema.String,
  severity: PolicySeverity,
  grace_until: Schema.optionalWith(DateTimeString, { exact: true }).annotations({
    description: "On an unmapped_denied violation softened to a warning because the tool is new: when the grace ends"
  })
}).annotations({ identifier: "PolicyFinding", description: "One violation or warning of a tool policy evaluation" })
export type PolicyFinding = typeof PolicyFinding.Type

const PolicyId = Schema.String.annotations({ description: "`pol-<uuid>`, one per stored version" })

const Version = Schema.Int.annotations({ description: "1, 2, … per agent or organization; never reused" })

const stored = {
  version: Version,
  policy: Policy.annotations({ description: "The document as stored: normalised, every default filled in" }),
  policy_hash: Hex32.annotations({
    description: 'SHA-256("candor/v1/policy\\0" ‖ JCS(policy)), as the governance log binds it'
  }),
  updated_at: DateTimeString,
  updated_by: Schema.String.annotations({ description: "The user who stored it, or `service`" })
}

export const AgentPolicyRecord = Schema.Struct({
  policy_id: PolicyId,
  scope: Schema.Literal("agent"),
  agent_id: AgentId,
  ...stored
}).annotations({ identifier: "AgentPolicy" })

export const OrgPolicyRecord = Schema.Struct({
  policy_id: PolicyId,
  scope: Schema.Literal("org"),
  org_id: Identifier,
  ...stored
}).annotations({ identifier: "OrgPolicy" })

export const ResolvedPolicy = Schema.Struct({
  agent_id: AgentId,
  resolved_policy: Schema.NullOr(Policy).annotations({
    description: "The organization's and the agent's merged (either alone, as it is); null when neither has one"
  }),
  sources: Schema.Struct({
    org_id: Schema.NullOr(Identifier),
    org_policy_version: Schema.NullOr(Schema.Int),
    agent_policy_version: Schema.NullOr(Schema.Int),
    merge_strategy: Schema.Literal("org_floor")
  })
}).annotations({ identifier: "ResolvedPolicy" })

export const PolicyVersionItem = Schema.Struct({
  version: Version,
  policy_id: PolicyId,
  meta: PolicyMeta,
  policy_hash: Hex32,
  updated_at: DateTimeString,
  updated_by: Schema.String,
  deleted: Schema.Boolean.annotations({ description: "Taken out of force by a DELETE" })
}).annotations({ identifier: "PolicyVersion" })

export const OrgPolicyHistory = Schema.Struct({
  org_id: Identifier,
  versions: Schema.Array(PolicyVersionItem).annotations({ description: "Newest first" })
}).annotations({ identifier: "OrgPolicyHistory" })

export const AgentPolicyHistory = Schema.Struct({
  agent_id: AgentId,
  versions: Schema.Array(PolicyVersionItem).annotations({ description: "Newest first" })
}).annotations({ identifier: "AgentPolicyHistory" })

const ToolName = Schema.String.pipe(
  Schema.minLength(1, { message: () => "a tool name must not be empty" }),
  Schema.maxLength(256, { message: () => "a tool name must be at most 256 characters" })
)

export const EvaluateRequest = Schema.Struct({
  agent_id: AgentId,
  tools: Schema.Array(ToolName).pipe(
    Schema.minItems(1, { message: () => "must list 1 to 256 tool names" }),
    Schema.maxItems(256, { message: () => "must list 1 to 256 tool names" })
  )
}).annotations({ identifier: "PolicyEvaluateRequest" })

export const EvaluateResponse = Schema.Struct({
  agent_id: AgentId,
  verdict: PolicyVerdict,
  violations: Schema.Array(PolicyFinding),
  warnings: Schema.Array(PolicyFinding),
  tools_evaluated: Schema.Int.annotations({ description: "Distinct tool names evaluated" }),
  findings_omitted: Schema.optionalWith(Schema.Int, { exact: true }).annotations({
    description: "Findings past the 256 listed in either list, counted for the verdict but not listed; absent when none"
  }),
  policy_id: Schema.NullOr(PolicyId).annotations({
    description: "The agent's policy version in force, else its organization's; null without a policy"
  }),
  policy_version: Schema.NullOr(Schema.Int),
  enforcement_mode: Schema.NullOr(PolicyEnforcementMode),
  would_block: Schema.Boolean.annotations({
    description: "The gateway would refuse the request (403, X-Policy-Verdict: fail): verdict fail in enforce mode"
  }),
  duration_ms: Schema.Number
}).annotations({ identifier: "PolicyEvaluation" })
