/**
 * One team assessment and the hash of what it was made from (docs/team-reputation.md). Pure: the
 * members' scores and statuses, their active cards' values, the team card's values and the roster
 * changes are all the inputs, and the same inputs always give the same assessment and hash.
 *
 * - `member_coherence`: the fleet score (core/Coherence.ts) of the members with a card: the mean
 *   pair score over every scored pair of them (null with fewer than two).
 * - `card_coherence`: the mean pair score of each carded member's values with the team card's
 *   (null without a team card, or when no pair has anything to compare).
 * - `risk_level`: `teamRiskLevel` of the members (core/TeamReputation.ts).
 *
 * The inputs hash is SHA-256 of the JCS (RFC 8785) text of the inputs, hex: a recomputation whose
 * inputs hash the same as the previous computation's records nothing and costs nothing. Only what
 * the computation reads is hashed (a card's values, not its other fields), so a card change that
 * cannot move the score does not count as new inputs.
 */
import { toHex } from "./Bytes.js"
import { canonicalBytes } from "./Canonical.js"
import { fleetCoherence, pairScore, valueSet } from "./Coherence.js"
import { sha256 } from "./Hash.js"
import { type AssessedMember, type RiskLevel, teamRiskLevel } from "./TeamReputation.js"

/** A member as an assessment records it: its own score, eligibility and containment status. */
export interface MemberScore extends AssessedMember {
  readonly agent_id: string
}

/** What coherence reads of a card. */
export interface CardValues {
  readonly values: { readonly declared: ReadonlyArray<string>; readonly conflicts_with?: ReadonlyArray<string> | null }
}

export interface TeamInputs {
  /** Every current member, carded or not. */
  readonly members: ReadonlyArray<MemberScore>
  /** The members' active cards, by agent id. */
  readonly member_cards: ReadonlyArray<{ readonly agent_id: string; readonly card: CardValues }>
  /** The team card in force, if any. */
  readonly team_card: CardValues | undefined
  /** Times of the roster changes after the team's creation, oldest first. */
  readonly roster_changes: ReadonlyArray<string>
}

export interface Assessment {
  readonly member_coherence: number | null
  readonly card_coherence: number | null
  readonly risk_level: RiskLevel
  /** By agent id. */
  readonly member_scores: ReadonlyArray<MemberScore>
}

const byAgent = (a: { readonly agent_id: string }, b: { readonly agent_id: string }) =>
  a.agent_id < b.agent_id ? -1 : a.agent_id > b.agent_id ? 1 : 0

const fleetAgent = (agentId: string, card: CardValues) => ({
  agent_id: agentId,
  values: card.values.declared,
  conflicts_with: card.values.conflicts_with ?? null
})

export const assessTeam = (inputs: TeamInputs): Assessment => {
  const carded = inputs.member_cards.map(({ agent_id, card }) => fleetAgent(agent_id, card))
  const member_coherence = carded.length < 2 ? null : fleetCoherence(carded).fleet_score
  let card_coherence: number | null = null
  if (inputs.team_card !== undefined) {
    const team = fleetAgent("team", inputs.team_card)
    const scores = [...carded].sort(byAgent).flatMap((member) => {
      const score = pairScore(member, team)
      return score === null ? [] : [score]
    })
    card_coherence = scores.length === 0 ? null : scores.reduce((sum, s) => sum + s, 0) / scores.length
  }
  const member_scores = [...inputs.members].sort(byAgent).map((m) => ({
    agent_id: m.agent_id,
    score: m.score,
    eligible: m.eligible,
    status: m.status
  }))
  return { member_coherence, card_coherence, risk_level: teamRiskLevel(member_scores), member_scores }
}

const valuesOf = (card: CardValues) => ({
  declared: valueSet(card.values.declared),
  conflicts_with: valueSet(card.values.conflicts_with)
})

/** The canonical form of the inputs that is hashed (documented field by field in docs/team-reputation.md). */
export const hashedInputs = (inputs: TeamInputs) => ({
  members: [...inputs.members]
    .sort(byAgent)
    .map((m) => ({ agent_id: m.agent_id, score: m.score, eligible: m.eligible, status: m.status })),
  member_cards: [...inputs.member_cards].sort(byAgent).map((c) => ({ agent_id: c.agent_id, ...valuesOf(c.card) })),
  team_card: inputs.team_card === undefined ? null : valuesOf(inputs.team_card),
  roster_changes: [...inputs.roster_changes]
})

/** SHA-256 (hex) of the JCS text of `hashedInputs`. */
export const teamInputsHash = (inputs: TeamInputs): string => toHex(sha256(canonicalBytes(hashedInputs(inputs))))
