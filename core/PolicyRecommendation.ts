/**
 * A tool policy recommended for a team (docs/intelligence.md, "Policy recommendation"), in the
 * CLPI DSL of core/schema/Policy.ts, ready for PUT /v1/orgs/{org_id}/policy or an agent's policy.
 * Pure and deterministic; every rule comes with a `reasoning` line naming what it came from:
 * - `capability_mappings.observed_tools`: the tools the members' recorded traces show them calling
 *   (actions of type `execute`), with no card actions, so they pass; a tool a card forbids is left out;
 * - `forbidden`: one rule per `autonomy_envelope.forbidden_actions` entry of the members' cards and
 *   the team card (severity high), read as a tool glob;
 * - `escalation_triggers`: the cards' triggers whose condition is a `tool_matches('<glob>')`
 *   (`log` becomes `warn`); other conditions are not about tools and are left out;
 * - `defaults`: unmapped tools warn, enforcement `warn` (a recommendation is tried before it is enforced).
 */
import { DEFAULT_GRACE_PERIOD_HOURS, POLICY_SCHEMA_VERSION, type Policy, triggerGlob } from "./schema/Policy.js"
import type { AlignmentCard } from "./schema/Card.js"

export interface Reasoning {
  /** Where in the policy the rule is: `forbidden[0]`, `capability_mappings.observed_tools`, `defaults`. */
  readonly rule: string
  readonly source: string
}

export interface PolicyRecommendation {
  readonly policy: Policy
  readonly reasoning: ReadonlyArray<Reasoning>
}

type Envelope = Pick<AlignmentCard["autonomy_envelope"], "forbidden_actions" | "escalation_triggers">

export interface RecommendationInput {
  readonly team_id: string
  readonly team_name: string
  /** Each member with a card: its envelope. */
  readonly members: ReadonlyArray<{ readonly agent_id: string; readonly envelope: Envelope }>
  readonly team_envelope: Envelope | undefined
  /** Tool name → the members seen calling it. */
  readonly tools_seen: ReadonlyMap<string, ReadonlyArray<string>>
}

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)
const MAX_PATTERN = 256
const TRIGGER_ACTION = { escalate: "escalate", deny: "deny", log: "warn" } as const

/** Key → sorted distinct sources. */
const collect = (
  entries: ReadonlyArray<readonly [string, string]>
): ReadonlyArray<readonly [string, ReadonlyArray<string>]> => {
  const by = new Map<string, Set<string>>()
  for (const [key, source] of entries) by.set(key, (by.get(key) ?? new Set()).add(source))
  return [...by.entries()].sort(([a], [b]) => compare(a, b)).map(([key, sources]) => [key, [...sources].sort(compare)])
}

const sourceName = (source: string) => (source === "team" ? "the team card" : `agent ${source}'s card`)
const sourcesText = (sources: ReadonlyArray<string>) => sources.map(sourceName).join(", ")

export const recommendPolicy = (input: RecommendationInput): PolicyRecommendation => {
  const envelopes: ReadonlyArray<readonly [string, Envelope]> = [
    ...input.members.map((m) => [m.agent_id, m.envelope] as const),
    ...(input.team_envelope === undefined ? [] : [["team", input.team_envelope] as const])
  ]
  const reasoning: Array<Reasoning> = []

  const forbiddenActions = collect(
    envelopes.flatMap(([source, envelope]) =>
      (envelope.forbidden_actions ?? []).filter((a) => a.length > 0).map((action) => [action, source] as const)
    )
  )
  for (const [action, sources] of forbiddenActions)
    if (action.length > MAX_PATTERN)
      reasoning.push({
        rule: "forbidden",
        source: `${action} left out (from ${sourcesText(sources)}): longer than a tool pattern may be (${MAX_PATTERN})`
      })
  const forbidden = forbiddenActions
    .filter(([action]) => action.length <= MAX_PATTERN)
    .map(([action, sources], index) => {
      reasoning.push({
        rule: `forbidden[${index}]`,
        source: `autonomy_envelope.forbidden_actions of ${sourcesText(sources)}`
      })
      return { pattern: action, reason: `forbidden by ${sourcesText(sources)}`, severity: "high" as const }
    })
  const forbiddenNames = new Set(forbidden.map((rule) => rule.pattern))

  const triggers = collect(
    envelopes.flatMap(([source, envelope]) =>
      envelope.escalation_triggers
        .filter((t) => triggerGlob(t.condition) !== undefined)
        .map((t) => [JSON.stringify([t.condition, TRIGGER_ACTION[t.action], t.reason]), source] as const)
    )
  ).map(([key, sources]) => {
    const [condition, action, reason] = JSON.parse(key) as [string, "escalate" | "warn" | "deny", string]
    return { trigger: { condition, action, reason }, sources }
  })
  triggers.forEach(({ sources }, index) =>
    reasoning.push({
      rule: `escalation_triggers[${index}]`,
      source: `autonomy_envelope.escalation_triggers of ${sourcesText(sources)}`
    })
  )

  const observed = [...input.tools_seen.entries()]
    .filter(([tool]) => tool.length > 0 && tool.length <= MAX_PATTERN)
    .sort(([a], [b]) => compare(a, b))
  const allowed = observed.filter(([tool]) => !forbiddenNames.has(tool))
  for (const [tool, agents] of observed) {
    reasoning.push(
      forbiddenNames.has(tool)
        ? {
            rule: "capability_mappings.observed_tools",
            source: `${tool} left out: seen (${[...agents].sort(compare).join(", ")}) but forbidden by a card`
          }
        : {
            rule: "capability_mappings.observed_tools",
            source: `${tool}: seen in the traces of ${[...agents].sort(compare).join(", ")}`
          }
    )
  }
  reasoning.push({
    rule: "defaults",
    source: "unmapped tools warn and enforcement_mode warn: a recommendation is observed before it is enforced"
  })

  return {
    policy: {
      meta: {
        schema_version: POLICY_SCHEMA_VERSION,
        name: `Recommended for team ${input.team_name}`.slice(0, 200),
        description: `Recommended by Candor for team ${input.team_id} from its members' recorded tool use and cards.`,
        scope: "org"
      },
      capability_mappings:
        allowed.length === 0
          ? {}
          : {
              observed_tools: {
                tools: allowed.map(([tool]) => tool),
                card_actions: [],
                description: "Tools the team's members were seen to use"
              }
            },
      forbidden,
      escalation_triggers: triggers.map(({ trigger }) => trigger),
      defaults: {
        unmapped_tool_action: "warn",
        unmapped_severity: "medium",
        fail_open: true,
        enforcement_mode: "warn",
        grace_period_hours: DEFAULT_GRACE_PERIOD_HOURS
      }
    },
    reasoning
  }
}
