/** The fleet page's data: GET /v1/agents items, their search and filters, and the containment summary. Pure. */

import type { AgentStatus } from "../../../core/schema/Agent.js"
import type { AgentListItem } from "../../../core/schema/AgentList.js"
import type { EnforcementMode } from "../../../core/schema/Verdict.js"
import type { NamedAgent } from "./Names.js"

// The published literals, from their one source (type-only: nothing of core/schema is bundled).
export type { AgentStatus, EnforcementMode }

/** A GET /v1/agents item (core/schema/AgentList.ts). */
export type FleetAgent = NamedAgent &
  Pick<
    AgentListItem,
    | "status"
    | "enforcement_mode"
    | "card_id"
    | "last_seen"
    | "total_checkpoints"
    | "checkpoint_counts"
    | "claimed"
    | "visibility"
    | "reputation"
  >

export interface FleetFilter {
  /** Matched, case-insensitively, against the agent's id and name and its organization's id and name. */
  readonly query: string
  readonly status: AgentStatus | "all"
  readonly mode: EnforcementMode | "all"
  /** Only agents with at least one boundary violation. */
  readonly violationsOnly: boolean
}

export const NO_FILTER: FleetFilter = { query: "", status: "all", mode: "all", violationsOnly: false }

export const filterFleet = (agents: ReadonlyArray<FleetAgent>, filter: FleetFilter): ReadonlyArray<FleetAgent> => {
  const query = filter.query.trim().toLowerCase()
  return agents.filter(
    (agent) =>
      (filter.status === "all" || agent.status === filter.status) &&
      (filter.mode === "all" || agent.enforcement_mode === filter.mode) &&
      (!filter.violationsOnly || agent.checkpoint_counts.boundary_violation > 0) &&
      (query === "" ||
        [agent.agent_id, agent.display_name, agent.org_id, agent.org_name].some(
          (text) => text !== null && text.toLowerCase().includes(query)
        ))
  )
}

export interface FleetSummary {
  readonly total: number
  readonly active: number
  readonly paused: number
  readonly killed: number
  readonly clear: number
  readonly review_needed: number
  readonly boundary_violation: number
}

export const summarise = (agents: ReadonlyArray<FleetAgent>): FleetSummary =>
  agents.reduce<FleetSummary>(
    (sum, agent) => ({
      total: sum.total + 1,
      active: sum.active + (agent.status === "active" ? 1 : 0),
      paused: sum.paused + (agent.status === "paused" ? 1 : 0),
      killed: sum.killed + (agent.status === "killed" ? 1 : 0),
      clear: sum.clear + agent.checkpoint_counts.clear,
      review_needed: sum.review_needed + agent.checkpoint_counts.review_needed,
      boundary_violation: sum.boundary_violation + agent.checkpoint_counts.boundary_violation
    }),
    { total: 0, active: 0, paused: 0, killed: 0, clear: 0, review_needed: 0, boundary_violation: 0 }
  )
