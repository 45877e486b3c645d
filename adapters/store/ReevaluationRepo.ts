/**
 * What the reputation recomputation reads of AIP re-evaluations (core/Reevaluation.ts): the
 * checkpoints of a log prefix whose stored verdict differs from the certified one, each with the
 * newest `aip.reevaluation` entry of the agent's governance log that changed it, and the newest
 * violation of their sessions by the verdicts counted.
 *
 * Read from the governance log first: an agent never re-evaluated (nearly all of them, on every
 * recomputation) costs one index lookup on its log, not a scan of its checkpoints.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { agentGovernanceLog, governanceLogKey } from "../../core/Governance.js"
import type { ReevaluatedInPrefix } from "../../core/Reevaluation.js"
import type { Verdict } from "../../core/schema/Verdict.js"
import { json, toCount, toIso } from "./Rows.js"
import { type StoreError, storeError } from "./Store.js"

/** A session holding a re-evaluated checkpoint, with its newest violation by the verdicts counted. */
export interface ReevaluatedSession {
  readonly session_id: string
  readonly last_violation_at: string | null
}

export class ReevaluationRepo extends Context.Tag("candor/adapters/store/ReevaluationRepo")<
  ReevaluationRepo,
  {
    /**
     * The agent's re-evaluated checkpoints among its first `treeSize` (verdict now differs from the
     * certified one), and per session holding one its newest violation by the verdicts counted, with
     * the card gaps left out.
     */
    readonly reevaluated: (
      agentId: string,
      treeSize: number
    ) => Effect.Effect<
      {
        readonly checkpoints: ReadonlyArray<ReevaluatedInPrefix>
        readonly sessions: ReadonlyArray<ReevaluatedSession>
      },
      StoreError
    >
  }
>() {}

export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  return ReevaluationRepo.of({
    reevaluated: (agentId: string, treeSize: number) =>
      Effect.gen(function* () {
        const rows = yield* sql<{
          checkpoint_id: string
          session_id: string
          verdict: Verdict
          certified: Verdict
          analysed: boolean
          governance_index: unknown
        }>`
          with changed as (
            select distinct on (ch ->> 'checkpoint_id') ch ->> 'checkpoint_id' as checkpoint_id, e.idx
            from governance_entries e, json_array_elements(e.record -> 'new_state' -> 'changed') ch
            where e.log_id = ${governanceLogKey(agentGovernanceLog(agentId))}
              and e.record ->> 'action' = 'aip.reevaluation'
            order by ch ->> 'checkpoint_id', e.idx desc
          )
          select c.checkpoint_id, c.session_id, c.verdict, c.body ->> 'original_verdict' as certified,
            coalesce(c.body -> 'analysis_metadata' ->> 'analysis_model', 'none') <> 'none' as analysed,
            changed.idx as governance_index
          from changed join checkpoints c on c.checkpoint_id = changed.checkpoint_id
          where c.agent_id = ${agentId} and c.position < ${treeSize}
            and c.verdict <> coalesce(c.body ->> 'original_verdict', c.verdict)`
        if (rows.length === 0)
          return {
            checkpoints: [] as ReadonlyArray<ReevaluatedInPrefix>,
            sessions: [] as ReadonlyArray<ReevaluatedSession>
          }
        const sessionIds = [...new Set(rows.map((row) => row.session_id))]
        const sessions = yield* sql<{ session_id: string; last_violation_at: unknown }>`
          select s.session_id,
            (select max(c.occurred_at) from checkpoints c
              where c.agent_id = ${agentId} and c.session_id = s.session_id and c.position < ${treeSize}
                and c.verdict = 'boundary_violation'
                and not exists (
                  select 1 from reclassifications r where r.checkpoint_id = c.checkpoint_id and r.new_type = 'card_gap')
            ) as last_violation_at
          from (select jsonb_array_elements_text(${json(sessionIds)}::jsonb) as session_id) s`
        return {
          checkpoints: rows.map((row): ReevaluatedInPrefix => ({
            checkpoint_id: row.checkpoint_id,
            verdict: row.verdict,
            certified: row.certified,
            analysed: row.analysed,
            governance_index: toCount(row.governance_index)
          })),
          sessions: sessions.map((row) => ({
            session_id: row.session_id,
            last_violation_at: row.last_violation_at === null ? null : toIso(row.last_violation_at)
          }))
        }
      }).pipe(storeError("reevaluated"))
  })
})

/** On the process's SqlClient. */
export const layer: Layer.Layer<ReevaluationRepo, never, SqlClient.SqlClient> = Layer.effect(ReevaluationRepo, make)
