/**
 * Organization conscience values on the store (migrations/0008_org_conscience_values.ts): the
 * values, the layer's mode, the change log, and the read the workers and the API resolve an agent's
 * values from (`layerOfAgent`, through the agent's claim).
 *
 * Writes run in the caller's transaction (the API stores a change, its log entry, its governance
 * entry and its webhook drafts together). `lock` takes the organization's row lock first, so two
 * changes of one organization are serialised: the 20-value limit, the name check and the order are
 * decided on what is committed, never on a concurrent change's snapshot.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { type OrgConscienceLayer, resolveConscience } from "../../core/ConscienceResolution.js"
import * as Schema from "effect/Schema"
import {
  ConscienceChanges,
  type ConscienceSeverity,
  type ConscienceValueType,
  type OrgConscience,
  type OrgConscienceLogAction,
  OrgConscienceLogEntry,
  type OrgConscienceMode,
  OrgConscienceValue
} from "../../core/schema/Conscience.js"
import { Count, decodeAll, IsoTimestamp, json, toCount } from "./Rows.js"
import { type Store, StoreError, storeError } from "./Store.js"

/** The members of a value a change may set. */
export interface OrgConscienceFields {
  readonly type: ConscienceValueType
  readonly name: string
  readonly content: string
  readonly severity: ConscienceSeverity
  readonly is_active: boolean
}

export interface OrgConscienceLogDraft {
  readonly value_id: string | null
  readonly action: OrgConscienceLogAction
  readonly actor: string
  readonly changes: ConscienceChanges
  /** RFC 3339. */
  readonly at: string
}

export class OrgConscienceRepo extends Context.Tag("candor/adapters/store/OrgConscienceRepo")<
  OrgConscienceRepo,
  {
    /** The organization's layer (values in order); undefined when there is no such organization. */
    readonly get: (orgId: string) => Effect.Effect<OrgConscience | undefined, StoreError>
    /** As `get`, holding the organization's row lock until the caller's transaction ends. */
    readonly lock: (orgId: string) => Effect.Effect<OrgConscience | undefined, StoreError>
    readonly insert: (
      orgId: string,
      value: OrgConscienceFields & { readonly value_id: string; readonly sort_order: number },
      actor: string,
      at: string
    ) => Effect.Effect<void, StoreError>
    readonly update: (
      orgId: string,
      valueId: string,
      fields: OrgConscienceFields,
      actor: string,
      at: string
    ) => Effect.Effect<void, StoreError>
    readonly remove: (orgId: string, valueId: string) => Effect.Effect<void, StoreError>
    /** Sets each value's `sort_order` to its index in `order`. */
    readonly reorder: (
      orgId: string,
      order: ReadonlyArray<string>,
      actor: string,
      at: string
    ) => Effect.Effect<void, StoreError>
    readonly setMode: (
      orgId: string,
      mode: OrgConscienceMode,
      enabled: boolean,
      actor: string,
      at: string
    ) => Effect.Effect<void, StoreError>
    /** Returns the entry's id (increasing: occurrences and webhook ids are derived from it). */
    readonly appendLog: (orgId: string, draft: OrgConscienceLogDraft) => Effect.Effect<number, StoreError>
    /** Newest first. */
    readonly log: (
      orgId: string,
      limit: number,
      offset: number
    ) => Effect.Effect<ReadonlyArray<OrgConscienceLogEntry>, StoreError>
  }
>() {}

/** An `org_conscience_values` row: the published value (core/schema/Conscience.ts). */
const decodeValues = decodeAll(
  Schema.Struct({ ...OrgConscienceValue.fields, sort_order: Count, created_at: IsoTimestamp, updated_at: IsoTimestamp })
)

/** An `org_conscience_log` row: the published entry; `changes` is jsonb (a string on a driver that does not parse it). */
const decodeLogEntries = decodeAll(
  Schema.Struct({
    ...OrgConscienceLogEntry.fields,
    changes: Schema.Union(ConscienceChanges, Schema.parseJson(ConscienceChanges)),
    created_at: IsoTimestamp
  })
)

/** The settings when an organization never set them. */
const DEFAULT_SETTINGS = { mode: "augment", enabled: true } as const

/**
 * The organization layer of an agent (through its claim), or undefined for an agent outside any
 * organization: what `resolveConscience` reads. Shared by `Store.orgConscienceOf` (the workers) and
 * the API, so both resolve from the same rows.
 */
export const orgLayerOfAgent = (
  sql: SqlClient.SqlClient,
  agentId: string
): Effect.Effect<OrgConscienceLayer | undefined, StoreError> =>
  sql<OrgLayerRow>`
    select ${orgLayerColumns(sql)}
    from agent_claims c
    left join org_conscience_settings s on s.org_id = c.org_id
    where c.agent_id = ${agentId}`.pipe(
    Effect.map(([row]) => orgLayerOf(row)),
    storeError("orgLayerOfAgent")
  )

/** What {@link orgLayerColumns} reads. */
export interface OrgLayerRow {
  readonly org_id: string | null
  readonly mode: string | null
  readonly enabled: boolean | null
  readonly value_rows: ReadonlyArray<{
    readonly value_id: string
    readonly type: ConscienceValueType
    readonly name: string
    readonly content: string
    readonly severity: ConscienceSeverity
    readonly is_active: boolean
    readonly sort_order: unknown
  }> | null
}

/**
 * The organization layer's columns, for a statement joining the agent's claim as `c` and its
 * organization's settings as `s` (left joins): the organization, its settings and its values
 * aggregated in their order, so the layer costs one round trip (an actor's start reads it for every
 * new agent) however the statement is shaped.
 */
export const orgLayerColumns = (sql: SqlClient.SqlClient) => sql`
  c.org_id, s.mode, s.enabled,
  (select json_agg(json_build_object('value_id', v.value_id, 'type', v.type, 'name', v.name,
            'content', v.content, 'severity', v.severity, 'is_active', v.is_active, 'sort_order', v.sort_order)
          order by v.sort_order, v.value_id)
   from org_conscience_values v where v.org_id = c.org_id) as value_rows`

/** The layer those columns hold; undefined for an agent outside any organization. */
export const orgLayerOf = (row: OrgLayerRow | undefined): OrgConscienceLayer | undefined =>
  row === undefined || row.org_id === null
    ? undefined
    : {
        org_id: row.org_id,
        mode: (row.mode ?? DEFAULT_SETTINGS.mode) as OrgConscienceMode,
        enabled: row.enabled ?? DEFAULT_SETTINGS.enabled,
        values: (row.value_rows ?? []).map((value) => ({ ...value, sort_order: toCount(value.sort_order) }))
      }

export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const read = (orgId: string, forUpdate: boolean) =>
    Effect.gen(function* () {
      const [org] = forUpdate
        ? yield* sql<{ org_id: string }>`select org_id from orgs where org_id = ${orgId} for update`
        : yield* sql<{ org_id: string }>`select org_id from orgs where org_id = ${orgId}`
      if (org === undefined) return undefined
      const [settings] = yield* sql<{ mode: OrgConscienceMode; enabled: boolean }>`
        select mode, enabled from org_conscience_settings where org_id = ${orgId}`
      const values = yield* decodeValues(
        yield* sql`
          select value_id, type, name, content, severity, is_active, sort_order, created_by, updated_by, created_at,
            updated_at
          from org_conscience_values where org_id = ${orgId} order by sort_order, value_id`
      )
      return {
        org_id: orgId,
        mode: settings?.mode ?? DEFAULT_SETTINGS.mode,
        enabled: settings?.enabled ?? DEFAULT_SETTINGS.enabled,
        values
      } satisfies OrgConscience
    })

  return OrgConscienceRepo.of({
    get: (orgId) => read(orgId, false).pipe(storeError("orgConscience")),
    lock: (orgId) => read(orgId, true).pipe(storeError("lockOrgConscience")),
    insert: (orgId, value, actor, at) =>
      sql`
        insert into org_conscience_values (value_id, org_id, type, name, content, severity, is_active, sort_order,
          created_by, updated_by, created_at, updated_at)
        values (${value.value_id}, ${orgId}, ${value.type}, ${value.name}, ${value.content}, ${value.severity},
          ${value.is_active}, ${value.sort_order}, ${actor}, ${actor}, ${at}::timestamptz, ${at}::timestamptz)`.pipe(
        Effect.asVoid,
        storeError("insertOrgConscienceValue")
      ),
    update: (orgId, valueId, fields, actor, at) =>
      sql`
        update org_conscience_values set type = ${fields.type}, name = ${fields.name}, content = ${fields.content},
          severity = ${fields.severity}, is_active = ${fields.is_active}, updated_by = ${actor},
          updated_at = ${at}::timestamptz
        where org_id = ${orgId} and value_id = ${valueId}`.pipe(Effect.asVoid, storeError("updateOrgConscienceValue")),
    remove: (orgId, valueId) =>
      sql`delete from org_conscience_values where org_id = ${orgId} and value_id = ${valueId}`.pipe(
        Effect.asVoid,
        storeError("deleteOrgConscienceValue")
      ),
    reorder: (orgId, order, actor, at) =>
      sql`
        update org_conscience_values v set sort_order = r.sort_order, updated_by = ${actor},
          updated_at = ${at}::timestamptz
        from json_to_recordset(${json(order.map((value_id, sort_order) => ({ value_id, sort_order })))}::json)
          as r(value_id text, sort_order integer)
        where v.org_id = ${orgId} and v.value_id = r.value_id`.pipe(
        Effect.asVoid,
        storeError("reorderOrgConscienceValues")
      ),
    setMode: (orgId, mode, enabled, actor, at) =>
      sql`
        insert into org_conscience_settings (org_id, mode, enabled, updated_by, updated_at)
        values (${orgId}, ${mode}, ${enabled}, ${actor}, ${at}::timestamptz)
        on conflict (org_id) do update set mode = excluded.mode, enabled = excluded.enabled,
          updated_by = excluded.updated_by, updated_at = excluded.updated_at`.pipe(
        Effect.asVoid,
        storeError("setOrgConscienceMode")
      ),
    appendLog: (orgId, draft) =>
      sql<{ entry_id: unknown }>`
        insert into org_conscience_log (org_id, value_id, action, actor, changes, created_at)
        values (${orgId}, ${draft.value_id}, ${draft.action}, ${draft.actor}, ${json(draft.changes)}::jsonb,
          ${draft.at}::timestamptz)
        returning entry_id`.pipe(
        Effect.map(([row]) => toCount(row?.entry_id)),
        storeError("appendOrgConscienceLog")
      ),
    log: (orgId, limit, offset) =>
      sql`
        select value_id, action, actor, changes, created_at from org_conscience_log
        where org_id = ${orgId} order by entry_id desc limit ${limit} offset ${offset}`.pipe(
        Effect.flatMap(decodeLogEntries),
        storeError("orgConscienceLog")
      )
  })
})

/** On the process's SqlClient. */
export const layer: Layer.Layer<OrgConscienceRepo, never, SqlClient.SqlClient> = Layer.effect(OrgConscienceRepo, make)

/**
 * The agent's conscience values in force, resolved from the store: the workers build their context
 * from this and the API's `/conscience-values/effective` answers it, so the `values_hash` the API
 * shows is the one the agent's next certificates bind.
 */
export const resolvedConscienceOf = (store: Store["Type"], agentId: string) =>
  Effect.map(
    Effect.all([store.orgConscienceLayer(agentId), store.conscienceValues(agentId)], { concurrency: "unbounded" }),
    ([org, agentValues]) => resolveConscience({ org, agentValues })
  )
