/**
 * An `enforcement_records` row as the API and the export read it (core/schema/EnforcementRecord.ts):
 * the columns both select, and the record they make (absent, not null, checkpoint and session).
 */
import type { EnforcementRecord } from "../../core/schema/EnforcementRecord.js"
import { toIso } from "./Rows.js"

export interface EnforcementRecordRow {
  readonly record_id: string
  readonly agent_id: string
  readonly kind: string
  readonly rule: string
  readonly reason: string
  readonly checkpoint_id: string | null
  readonly session_id: string | null
  readonly actor: string
  readonly created_at: unknown
}

export const enforcementRecordOf = ({
  checkpoint_id,
  created_at,
  session_id,
  ...row
}: EnforcementRecordRow): EnforcementRecord => ({
  ...row,
  ...(checkpoint_id === null ? {} : { checkpoint_id }),
  ...(session_id === null ? {} : { session_id }),
  created_at: toIso(created_at)
})
