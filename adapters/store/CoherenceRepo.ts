/**
 * What fleet coherence reads of the store (core/Coherence.ts, docs/coherence.md): an organization's
 * agents (their claims, `agent_claims.org_id`) with the values of their active card (`cards.active`),
 * and the fleet's version, cheap enough to ask on every request.
 *
 * The version (`fleet_versions`, migration 0034) moves in the transaction of every change that
 * could change the answer: an agent claimed into or out of the organization, an active card stored,
 * deactivated or removed, whichever process made it. One primary-key read.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type * as Statement from "@effect/sql/Statement"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type { FleetAgent } from "../../core/Coherence.js"
import { StoreError, storeError } from "./Store.js"

export interface OrgFleet {
  /** The agents with an active card, by id. */
  readonly agents: ReadonlyArray<FleetAgent>
  readonly without_card: number
}

export class CoherenceRepo extends Context.Tag("candor/adapters/store/CoherenceRepo")<
  CoherenceRepo,
  {
    /**
     * Moves whenever an agent joins or leaves or an active card changes; undefined when there is no
     * such organization.
     */
    readonly fleetVersion: (orgId: string) => Effect.Effect<string | undefined, StoreError>
    readonly fleet: (orgId: string) => Effect.Effect<OrgFleet, StoreError>
  }
>() {}

/** The card's `values` members coherence reads; the card was validated when it was stored. */
const CardValues = Schema.Struct({
  declared: Schema.Array(Schema.String),
  conflicts_with: Schema.optionalWith(Schema.NullOr(Schema.Array(Schema.String)), { exact: true })
})
/** jsonb arrives parsed from both drivers; text is accepted too rather than trusted to never happen. */
const decodeValues = Schema.decodeUnknown(Schema.Union(CardValues, Schema.parseJson(CardValues)))

/**
 * The fleet version of the organization `orgId` names (a parameter or a subquery), as text, as a
 * scalar subquery: null when there is no such organization, '0' before any change (versions start
 * at 1). Also read with a reputation recomputation's other inputs (ReputationRepo).
 */
export const fleetVersionOf = (sql: SqlClient.SqlClient, orgId: Statement.Fragment | string) =>
  sql`(select coalesce(v.version::text, '0') from orgs o left join fleet_versions v on v.org_id = o.org_id
    where o.org_id = ${orgId})`

export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  return CoherenceRepo.of({
    fleetVersion: (orgId) =>
      sql<{ version: string | null }>`select ${fleetVersionOf(sql, orgId)} as version`.pipe(
        Effect.map(([row]) => row?.version ?? undefined),
        storeError("fleetVersion")
      ),

    fleet: (orgId) =>
      Effect.gen(function* () {
        const rows = yield* sql<{ agent_id: string; values: unknown }>`
          select c.agent_id, k.card -> 'values' as values
          from agent_claims c left join cards k on k.agent_id = c.agent_id and k.active
          where c.org_id = ${orgId}
          order by c.agent_id`
        const agents: Array<FleetAgent> = []
        for (const row of rows) {
          if (row.values === null || row.values === undefined) continue
          const values = yield* decodeValues(row.values)
          agents.push({
            agent_id: row.agent_id,
            values: values.declared,
            conflicts_with: values.conflicts_with ?? null
          })
        }
        return { agents, without_card: rows.length - agents.length }
      }).pipe(storeError("coherenceFleet"))
  })
})

export const layer: Layer.Layer<CoherenceRepo, never, SqlClient.SqlClient> = Layer.effect(CoherenceRepo, make)
