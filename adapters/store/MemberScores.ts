/**
 * The seam between team reputation and agent reputation: each member's own score, whether it is
 * rated (eligible), and its containment status. Team reputation reads members through this one
 * service only, so the agent scores' store can be swapped in without touching the team code.
 *
 * Score and eligibility are the member's stored reputation (reputation_scores, kept by the workers);
 * a member never scored yet counts as score 0, not rated. Status is the agent's containment status
 * (`agents.settings.containment.status`; `active` for an agent never contained or without a row yet).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { MemberScore } from "../../core/TeamAssessment.js"
import { json } from "./Rows.js"
import { type StoreError, storeError } from "./Store.js"

export class MemberScores extends Context.Tag("candor/adapters/store/MemberScores")<
  MemberScores,
  {
    /** One entry per given agent, in the given order. */
    readonly memberScoresOf: (agentIds: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<MemberScore>, StoreError>
  }
>() {}

const STATUSES = new Set(["active", "paused", "killed"])

export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  return MemberScores.of({
    memberScoresOf: (agentIds) =>
      agentIds.length === 0
        ? Effect.succeed([])
        : sql<{ agent_id: string; status: string | null; score: unknown; is_eligible: boolean | null }>`
            select r.agent_id, a.settings->'containment'->>'status' as status, s.score, s.is_eligible
            from json_array_elements_text(${json(agentIds)}::json) as r(agent_id)
            left join agents a on a.agent_id = r.agent_id
            left join reputation_scores s on s.agent_id = r.agent_id`.pipe(
            Effect.map((rows) => {
              const byId = new Map(rows.map((row) => [row.agent_id, row]))
              return agentIds.map((agent_id): MemberScore => {
                const row = byId.get(agent_id)
                const s = row?.status
                return {
                  agent_id,
                  score: row?.score === null || row?.score === undefined ? 0 : Number(row.score),
                  eligible: row?.is_eligible === true,
                  status: s !== null && s !== undefined && STATUSES.has(s) ? (s as MemberScore["status"]) : "active"
                }
              })
            }),
            storeError("memberScores")
          )
  })
})

/** On the process's SqlClient. */
export const layer: Layer.Layer<MemberScores, never, SqlClient.SqlClient> = Layer.effect(MemberScores, make)
