/**
 * Team fault lines (docs/intelligence.md): the values a team's members do not hold alike, read from
 * their active Alignment Cards and the team card. Pure and deterministic: the same cards give the
 * same list, in the same order, whatever order the members came in.
 *
 * For each value some member declares (or the team card declares or requires):
 * - `incompatible`: a member declares it and another lists it in `conflicts_with`;
 * - `resolvable`: some members do not declare it (and nobody conflicts with it);
 * - `priority_mismatch`: every member declares it, at different ranks (a ranked card's rank of a
 *   value is its `definitions[value].priority` when set, else, under a `lexicographic` hierarchy,
 *   its position in `declared`; `weighted` without priorities and `contextual` cards have no rank);
 * - otherwise it is no fault line.
 *
 * `impact_score` is the share of member pairs the value divides (two decimals would hide a pair in a
 * team of fifty, so four): an incompatible pair is one declaring and one conflicting; a resolvable
 * pair one declaring and one not (for a value the team card asks for, any pair with a member
 * lacking it); a priority pair two different ranks.
 */
import type { AlignmentCard } from "./schema/Card.js"
import type { TeamCard } from "./schema/TeamCard.js"

export const FAULT_LINE_CLASSIFICATIONS = ["resolvable", "priority_mismatch", "incompatible"] as const
export type FaultLineClassification = (typeof FAULT_LINE_CLASSIFICATIONS)[number]

export const FAULT_LINE_SEVERITIES = ["low", "medium", "high", "critical"] as const
export type FaultLineSeverity = (typeof FAULT_LINE_SEVERITIES)[number]

export const RESOLUTION_HINTS: Readonly<Record<FaultLineClassification, string>> = {
  resolvable:
    "Some members do not declare this value: add it to their cards (or drop it from the team card), or record why they do not hold it.",
  priority_mismatch:
    "Every member declares this value at a different rank: agree one position (lexicographic) or priority (weighted) across the cards.",
  incompatible:
    "A member declares this value and another lists it in conflicts_with: remove the conflict, keep these members from deciding together, or name an escalation path."
}

export interface FaultLine {
  readonly value: string
  readonly classification: FaultLineClassification
  readonly severity: FaultLineSeverity
  readonly impact_score: number
  readonly resolution_hint: string
  /** Whether the team card declares the value or lists it in `member_requirements.required_values`. */
  readonly team_requires: boolean
  /** Agent ids, sorted. */
  readonly agents_declaring: ReadonlyArray<string>
  readonly agents_missing: ReadonlyArray<string>
  readonly agents_conflicting: ReadonlyArray<string>
}

/** What fault lines read of a member's card. */
export interface MemberValues {
  readonly agent_id: string
  readonly values: Pick<AlignmentCard["values"], "declared" | "conflicts_with" | "hierarchy" | "definitions">
}

/** Code-unit order: the same in every locale. */
const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

const round4 = (x: number): number => Math.round(x * 10_000) / 10_000

/** The value's rank on this card, or undefined when the card does not rank it. */
const rankOf = (member: MemberValues, value: string): number | undefined => {
  const priority = member.values.definitions?.[value]?.priority
  if (priority !== undefined) return priority
  if (member.values.hierarchy !== "lexicographic") return undefined
  const index = member.values.declared.indexOf(value)
  return index < 0 ? undefined : index + 1
}

const SEVERITY_RANK: Readonly<Record<FaultLineSeverity, number>> = { low: 0, medium: 1, high: 2, critical: 3 }

/**
 * incompatible: critical when it divides half the pairs or more, else high; the others: medium from
 * half the pairs, else low, one step up (resolvable only) when the team card asks for the value.
 */
const severityOf = (
  classification: FaultLineClassification,
  impact: number,
  teamRequires: boolean
): FaultLineSeverity => {
  if (classification === "incompatible") return impact >= 0.5 ? "critical" : "high"
  const base: FaultLineSeverity = impact >= 0.5 ? "medium" : "low"
  if (classification === "resolvable" && teamRequires) return base === "medium" ? "high" : "medium"
  return base
}

const pairsWhere = <A>(items: ReadonlyArray<A>, divides: (a: A, b: A) => boolean): number => {
  let count = 0
  for (let i = 0; i < items.length; i++)
    for (let j = i + 1; j < items.length; j++) if (divides(items[i]!, items[j]!)) count++
  return count
}

/** The team card's values: those it declares and those it requires of every member. */
export const teamValuesOf = (card: Pick<TeamCard, "values" | "member_requirements"> | undefined): ReadonlySet<string> =>
  new Set([...(card?.values.declared ?? []), ...(card?.member_requirements?.required_values ?? [])])

export const faultLinesOf = (
  members: ReadonlyArray<MemberValues>,
  teamValues: ReadonlySet<string> = new Set()
): ReadonlyArray<FaultLine> => {
  const sorted = [...members].sort((a, b) => compare(a.agent_id, b.agent_id))
  const declares = new Map(sorted.map((m) => [m.agent_id, new Set(m.values.declared)]))
  const conflicts = new Map(sorted.map((m) => [m.agent_id, new Set(m.values.conflicts_with ?? [])]))
  const values = [...new Set([...sorted.flatMap((m) => m.values.declared), ...teamValues])].sort(compare)
  const totalPairs = (sorted.length * (sorted.length - 1)) / 2

  const lines: Array<FaultLine> = []
  for (const value of values) {
    const holds = (m: MemberValues) => declares.get(m.agent_id)!.has(value)
    const rejects = (m: MemberValues) => conflicts.get(m.agent_id)!.has(value)
    const declaring = sorted.filter(holds)
    const conflicting = sorted.filter(rejects)
    const missing = sorted.filter((m) => !holds(m) && !rejects(m))
    const teamRequires = teamValues.has(value)

    let classification: FaultLineClassification
    let divided: number
    if (conflicting.length > 0 && (declaring.length > 0 || teamRequires)) {
      classification = "incompatible"
      divided = pairsWhere(sorted, (a, b) => (holds(a) && rejects(b)) || (holds(b) && rejects(a)))
    } else if (missing.length > 0 || conflicting.length > 0) {
      classification = "resolvable"
      divided = teamRequires
        ? pairsWhere(sorted, (a, b) => !holds(a) || !holds(b))
        : pairsWhere(sorted, (a, b) => holds(a) !== holds(b))
    } else {
      const ranks = new Set(sorted.map((m) => rankOf(m, value)).filter((rank) => rank !== undefined))
      if (ranks.size < 2) continue
      classification = "priority_mismatch"
      divided = pairsWhere(sorted, (a, b) => {
        const x = rankOf(a, value)
        const y = rankOf(b, value)
        return x !== undefined && y !== undefined && x !== y
      })
    }
    const impact = totalPairs === 0 ? 0 : round4(divided / totalPairs)
    lines.push({
      value,
      classification,
      severity: severityOf(classification, impact, teamRequires),
      impact_score: impact,
      resolution_hint: RESOLUTION_HINTS[classification],
      team_requires: teamRequires,
      agents_declaring: declaring.map((m) => m.agent_id),
      agents_missing: missing.map((m) => m.agent_id),
      agents_conflicting: conflicting.map((m) => m.agent_id)
    })
  }
  return lines.sort(
    (a, b) =>
      SEVERITY_RANK[b.severity] - SEVERITY_RANK[a.severity] ||
      b.impact_score - a.impact_score ||
      compare(a.value, b.value)
  )
}
