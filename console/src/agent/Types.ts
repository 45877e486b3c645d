/** The API answers the agent page reads (docs/api.md), as far as the page uses them. */
import type { AgentStatus } from "../../../core/schema/Agent.js"
import type { EnforcementMode, Verdict } from "../../../core/schema/Verdict.js"

// The published literals, from their one source (type-only: nothing of core/schema is bundled).
export type { Verdict }
export type Mode = EnforcementMode
export type Status = AgentStatus

export interface Checkpoint {
  readonly checkpoint_id: string
  readonly timestamp: string
  readonly verdict: Verdict
  readonly concerns: ReadonlyArray<{
    readonly category: string
    readonly severity: string
    readonly description: string
  }>
}

export interface Permissions {
  readonly role: "owner" | "admin" | "member" | "service"
  readonly may: Readonly<Record<"read" | "write" | "pause" | "resume" | "kill" | "reactivate", boolean>>
}

export interface Containment {
  readonly containment_status: Status
  readonly contained_at: string | null
  readonly contained_by: string | null
  readonly containment_reason: string | null
}

export interface DriftAlert {
  readonly alert_id: string
  readonly severity: string
  readonly drift_direction: string
  readonly message: string
  readonly detection_timestamp: string
  readonly checkpoint_ids?: ReadonlyArray<string>
}

export interface EffectiveValue {
  readonly value_id: string | null
  readonly type: string
  readonly name: string
  readonly content: string
  readonly severity: string
  readonly boundary: boolean
  readonly layer: string
}

export interface Reputation {
  readonly score: number
  readonly grade: string
  readonly tier: string
  readonly confidence: string
  readonly checkpoint_count: number
  readonly components: ReadonlyArray<{
    readonly key: string
    readonly label: string
    readonly score: number
    readonly weight: number
  }>
}

export interface GovernanceEntry {
  readonly index: number
  readonly record: {
    readonly action: string
    readonly actor: string
    readonly reason: string | null
    readonly previous_state: unknown
    readonly new_state: unknown
    readonly created_at: string
  }
}
