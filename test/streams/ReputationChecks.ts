/**
 * The reputation tests' reference: the tally of an agent's log computed from scratch, from the
 * committed inputs themselves (no store, no increments), and seeding that varies what the tally
 * counts: sessions of different lengths, checkpoints not analysed, AIP drift alerts, violations
 * spread over months.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import type { ReputationTally } from "../../core/Reputation.js"
import type { CommitInput } from "../../adapters/store/Store.js"
import type { InputOptions } from "../adapters/store/Fixtures.js"

const BASE = Date.parse("2026-06-01T00:00:00.000Z")

/** Position p: session `s<p mod 11 div 2>` (runs of 2 interleaved), a checkpoint every 12 hours. */
export const spreadOptions = (agentId: string): InputOptions => ({
  sessionId: (p) => `${agentId}-s${Math.floor((p % 11) / 2)}-${Math.floor(p / 40)}`,
  timestamp: (p) => new Date(BASE + p * 12 * 3_600_000).toISOString()
})

/** Every fifth checkpoint not analysed; an AIP drift alert with every 17th (in its session). */
export const varied = (input: CommitInput, index: number): CommitInput => {
  const position = input.attestation.link.entry.position
  const checkpoint =
    position % 5 === 4
      ? { ...input.checkpoint, analysis_metadata: { ...input.checkpoint.analysis_metadata, analysis_model: "none" } }
      : input.checkpoint
  const alerts =
    position % 17 === 16
      ? [
          {
            alert_id: `ida-${input.checkpoint.checkpoint_id.slice(3, 35)}`,
            agent_id: checkpoint.agent_id,
            session_id: checkpoint.session_id,
            checkpoint_ids: [checkpoint.checkpoint_id],
            sustained_checks: 3,
            severity: "medium" as const,
            drift_direction: "value_erosion" as const,
            message: "m",
            detection_timestamp: checkpoint.timestamp
          }
        ]
      : // AAP alerts (any other id) say nothing about AIP stability.
        index % 13 === 3
        ? [
            {
              alert_id: `ada-${input.checkpoint.checkpoint_id}`,
              agent_id: checkpoint.agent_id,
              session_id: checkpoint.session_id,
              checkpoint_ids: [checkpoint.checkpoint_id],
              sustained_checks: 3,
              severity: "low" as const,
              drift_direction: "unknown" as const,
              message: "m",
              detection_timestamp: checkpoint.timestamp
            }
          ]
        : []
  return { ...input, checkpoint, alerts }
}

/** The tally of these inputs (a whole log, in order), from scratch. */
export const referenceTally = (inputs: ReadonlyArray<CommitInput>): ReputationTally => {
  const sessions = new Map<string, { n: number; last: string | null; drifted: boolean }>()
  let analysed = 0
  let clear = 0
  for (const { alerts, checkpoint } of inputs) {
    const session = sessions.get(checkpoint.session_id) ?? { n: 0, last: null, drifted: false }
    session.n++
    if (checkpoint.analysis_metadata.analysis_model !== "none") {
      analysed++
      if ((checkpoint.original_verdict ?? checkpoint.verdict) === "clear") clear++
    }
    if ((checkpoint.original_verdict ?? checkpoint.verdict) === "boundary_violation") {
      if (session.last === null || Date.parse(checkpoint.timestamp) > Date.parse(session.last))
        session.last = checkpoint.timestamp
    }
    if (alerts.some((alert) => alert.alert_id.startsWith("ida-"))) session.drifted = true
    sessions.set(checkpoint.session_id, session)
  }
  const long = [...sessions.values()].filter((s) => s.n >= 3)
  return {
    certified: inputs.length,
    analysed,
    analysed_clear: clear,
    long_sessions: long.length,
    stable_sessions: long.filter((s) => !s.drifted).length,
    violation_sessions: [...sessions]
      .filter(([, s]) => s.last !== null)
      .map(([session_id, s]) => ({ session_id, last_violation_at: s.last! }))
      .sort((a, b) => (a.session_id < b.session_id ? -1 : a.session_id > b.session_id ? 1 : 0))
  }
}

/** The types of the catalogue events in the outbox about this agent, oldest first. */
export const outboxEvents = (agentId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ type: string }>`
      select payload ->> 'type' as type from outbox
      where kind = 'event' and payload ->> 'agent_id' = ${agentId} order by id`.pipe(
      Effect.map((rows) => rows.map((row) => row.type))
    )
  ).pipe(Effect.orDie)
