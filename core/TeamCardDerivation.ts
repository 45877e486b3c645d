/**
 * A team card derived from its members' active Alignment Cards (docs/teams.md, "Deriving a card").
 * Pure and deterministic: the same cards (in any order) give the same card, so anyone holding the
 * members' cards can recompute what `POST /v1/teams/{team_id}/card/derive` answered.
 *
 * - `values.declared`: every value any member declares, most frequent first (a card counts a name
 *   once), ties by name; `values.definitions`: for each of them, the first definition found in the
 *   cards ordered by agent id; `values.conflicts_with`: the union, by name.
 * - `autonomy_envelope`: `bounded_actions` and `forbidden_actions` the unions, by name;
 *   `escalation_triggers` the union of `{condition, action, reason}` (a trigger repeated by several
 *   members once), by condition, then action, then reason; `max_autonomous_value` the smallest any
 *   member declares, when all that declare one use the same currency (else none).
 * - `audit_commitment`: `retention_days` the maximum (the team keeps what its longest-keeping
 *   member promised), `queryable` only when every member's is, `trace_format` the most frequent.
 * - `principal`: the organization (`type: "organization"`, `identifier: org_id`) with the members'
 *   most frequent relationship and escalation contact (ties by name).
 *
 * Team-only members (`team_mission`, `coordination_mode`, `member_requirements`) are not derived:
 * a person adds them and PUTs the card as `hybrid`.
 */
import { DEFAULT_AAP_VERSION } from "./schema/Card.js"
import type { AlignmentCard } from "./schema/Card.js"
import type { TeamCard } from "./schema/TeamCard.js"

export interface MemberCard {
  readonly agent_id: string
  readonly card: AlignmentCard
}

export interface DerivationContext {
  readonly team_id: string
  readonly org_id: string
}

/** Fewer members with a card leave nothing to combine. */
export const MIN_MEMBERS_WITH_CARDS = 2

const byName = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

const union = (lists: ReadonlyArray<ReadonlyArray<string> | null | undefined>): Array<string> =>
  [...new Set(lists.flatMap((list) => list ?? []))].sort(byName)

/** Names by how many cards carry them (each card once), most first, ties by name. */
const byFrequency = (lists: ReadonlyArray<ReadonlyArray<string>>): Array<string> => {
  const counts = new Map<string, number>()
  for (const list of lists) for (const name of new Set(list)) counts.set(name, (counts.get(name) ?? 0) + 1)
  return [...counts.entries()].sort(([a, x], [b, y]) => y - x || byName(a, b)).map(([name]) => name)
}

const mostFrequent = (names: ReadonlyArray<string | null | undefined>): string | undefined =>
  byFrequency(names.filter((name): name is string => typeof name === "string").map((name) => [name]))[0]

type Trigger = AlignmentCard["autonomy_envelope"]["escalation_triggers"][number]

const triggerKey = (t: Trigger): string => JSON.stringify([t.condition, t.action, t.reason])

const triggers = (cards: ReadonlyArray<AlignmentCard>) => {
  const seen = new Map<string, { condition: string; action: Trigger["action"]; reason: string }>()
  for (const card of cards) {
    for (const t of card.autonomy_envelope.escalation_triggers) {
      seen.set(triggerKey(t), { condition: t.condition, action: t.action, reason: t.reason })
    }
  }
  return [...seen.values()].sort(
    (a, b) => byName(a.condition, b.condition) || byName(a.action, b.action) || byName(a.reason, b.reason)
  )
}

/** The smallest declared limit, when every member that declares one uses the same currency. */
const maxAutonomousValue = (cards: ReadonlyArray<AlignmentCard>) => {
  const limits = cards.flatMap((card) =>
    card.autonomy_envelope.max_autonomous_value == null ? [] : [card.autonomy_envelope.max_autonomous_value]
  )
  if (limits.length === 0) return undefined
  const currencies = new Set(limits.map((limit) => limit.currency ?? null))
  if (currencies.size !== 1) return undefined
  const amount = Math.min(...limits.map((limit) => limit.amount))
  const currency = limits[0]!.currency
  return currency === undefined ? { amount } : { amount, currency }
}

/** Own members only, built with `fromEntries`: a value may be named `__proto__` like any other. */
const definitions = (cards: ReadonlyArray<AlignmentCard>, declared: ReadonlyArray<string>) => {
  const found: Array<[string, NonNullable<AlignmentCard["values"]["definitions"]>[string]]> = []
  for (const name of declared) {
    const definition = cards
      .map((card) => card.values.definitions)
      .find((defined) => defined != null && Object.prototype.hasOwnProperty.call(defined, name))?.[name]
    if (definition !== undefined) found.push([name, definition])
  }
  return found.length === 0 ? undefined : Object.fromEntries(found)
}

/** The derived card, from at least one card (the API asks for `MIN_MEMBERS_WITH_CARDS`). */
export const deriveTeamCard = (members: ReadonlyArray<MemberCard>, context: DerivationContext): TeamCard => {
  const cards = [...members].sort((a, b) => byName(a.agent_id, b.agent_id)).map((member) => member.card)
  const declared = byFrequency(cards.map((card) => card.values.declared))
  const defined = definitions(cards, declared)
  const limit = maxAutonomousValue(cards)
  const relationship = mostFrequent(cards.map((card) => card.principal.relationship)) ?? "delegated_authority"
  return {
    aap_version: DEFAULT_AAP_VERSION,
    team_id: context.team_id,
    principal: {
      type: "organization",
      identifier: context.org_id,
      relationship: relationship as AlignmentCard["principal"]["relationship"],
      escalation_contact: mostFrequent(cards.map((card) => card.principal.escalation_contact)) ?? null
    },
    values: {
      declared,
      ...(defined === undefined ? {} : { definitions: defined }),
      conflicts_with: union(cards.map((card) => card.values.conflicts_with))
    },
    autonomy_envelope: {
      bounded_actions: union(cards.map((card) => card.autonomy_envelope.bounded_actions)),
      forbidden_actions: union(cards.map((card) => card.autonomy_envelope.forbidden_actions)),
      escalation_triggers: triggers(cards),
      ...(limit === undefined ? {} : { max_autonomous_value: limit })
    },
    audit_commitment: {
      trace_format: mostFrequent(cards.map((card) => card.audit_commitment.trace_format)) ?? "ap-trace-v1",
      retention_days: Math.max(...cards.map((card) => card.audit_commitment.retention_days)),
      queryable: cards.every((card) => card.audit_commitment.queryable)
    }
  }
}
