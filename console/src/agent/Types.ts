/** The API answers the agent page reads (docs/api.md), as far as the page uses them. */
import type { AgentStatus } from "../../../core/schema/Agent.js"
import type { AgentPermissions as PublishedPermissions } from "../../../core/schema/AgentPermissions.js"
import type { IntegrityCheckpoint } from "../../../core/schema/Checkpoint.js"
import type { EffectiveConscienceValue } from "../../../core/schema/Conscience.js"
import type { AgentContainment as PublishedContainment } from "../../../core/schema/Containment.js"
import type { DriftAlert as PublishedDriftAlert } from "../../../core/schema/Drift.js"
import type { GovernanceLogEntry } from "../../../core/schema/Governance.js"
import type { AgentReputation } from "../../../core/schema/Reputation.js"
import type { EnforcementMode, Verdict } from "../../../core/schema/Verdict.js"

// The published literals, from their one source (type-only: nothing of core/schema is bundled).
export type { Verdict }
export type Mode = EnforcementMode
export type Status = AgentStatus

// The published answers (core/schema), as far as the page reads them.
export type Checkpoint = Pick<IntegrityCheckpoint, "checkpoint_id" | "timestamp" | "verdict"> & {
  // Read as text, not as the published literals: the chart counts whatever categories a newer server sends.
  readonly concerns: ReadonlyArray<{
    readonly category: string
    readonly severity: string
    readonly description: string
  }>
}
export type Permissions = Pick<typeof PublishedPermissions.Type, "role" | "may">
export type Containment = Pick<
  typeof PublishedContainment.Type,
  "containment_status" | "contained_at" | "contained_by" | "containment_reason"
>
export type DriftAlert = Pick<
  PublishedDriftAlert,
  "alert_id" | "severity" | "drift_direction" | "message" | "detection_timestamp" | "checkpoint_ids"
>
export type EffectiveValue = Pick<
  EffectiveConscienceValue,
  "value_id" | "type" | "name" | "content" | "severity" | "boundary" | "layer"
>
export type Reputation = Pick<
  AgentReputation,
  "score" | "grade" | "tier" | "confidence" | "checkpoint_count" | "components"
>
export type GovernanceEntry = Pick<GovernanceLogEntry, "index" | "record">
