/**
 * What fleet coherence reads of the store (core/Coherence.ts, docs/coherence.md): an organization's
 * agents (their claims, `agent_claims.org_id`) with the values of their active card (`cards.active`),
 * and a fingerprint of that set cheap enough to ask on every request.
 *
 * The fingerprint names every agent of the organization with its active card's version (or none):
 * a card update makes a new version, and a claim moving in or out changes the list, so any change
 * that could change the answer changes the fingerprint, whichever process served the update. It
 * reads two indexed tables and no card document.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type { FleetAgent } from "../../core/Coherence.js"
import { toCount } from "./Rows.js"
import { StoreError, storeError } from "./Store.js"

export interface FleetFingerprint {
  /** Agents of the organization (claimed into it). */
  readonly agents: number
  /** Of those, agents with an active card. */
  readonly carded: number
  /** Changes whenever an agent joins or leaves or an active card changes. */
  readonly fingerprint: string
}

export interface OrgFleet {
  /** The agents with an active card, by id. */
  readonly agents: ReadonlyArray<FleetAgent>
  readonly without_card: number
}

export class CoherenceRepo extends Context.Tag("candor/adapters/store/CoherenceRepo")<
  CoherenceRepo,
  {
    /** undefined when there is no such organization. */
    readonly fingerprint: (orgId: string) => Effect.Effect<FleetFingerprint | undefined, StoreError>
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

export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  return CoherenceRepo.of({
    // Ids hold no whitespace (core/schema/Ids.ts), so "id version" lines joined by newlines are unambiguous.
    fingerprint: (orgId) =>
      sql<{ agents: unknown; carded: unknown; fingerprint: string }>`
        select count(c.agent_id) as agents, count(k.agent_id) as carded,
          md5(coalesce(string_agg(c.agent_id || ' ' || coalesce(k.version::text, '-'), E'\n' order by c.agent_id), ''))
            as fingerprint
        from orgs o
        left join agent_claims c on c.org_id = o.org_id
        left join cards k on k.agent_id = c.agent_id and k.active
        where o.org_id = ${orgId}
        group by o.org_id`.pipe(
        Effect.map(([row]) =>
          row === undefined
            ? undefined
            : { agents: toCount(row.agents), carded: toCount(row.carded), fingerprint: row.fingerprint }
        ),
        storeError("coherenceFingerprint")
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
