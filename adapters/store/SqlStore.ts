/**
 * The `Store` on any PostgreSQL `SqlClient`: @effect/sql-pg on a server, or PgliteClient embedded.
 * One SQL text for both (PGlite is PostgreSQL); see migrations/0001_initial.ts for the schema.
 *
 * Stored records (checkpoints, traces, certificates, cards, alerts) are read back without decoding:
 * only this store writes them, from values already typed by their schemas. The fields of
 * checkpoints, traces and certificates derived from the model's reasoning are sealed by the commit
 * and opened by every read (./SealedFields.ts).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { type AgentLogState, emptyLogState } from "../../core/Attestation.js"
import { fromHex } from "../../core/Bytes.js"
import type { Certificate } from "../../core/Certificate.js"
import type { AlignmentCard } from "../../core/schema/Card.js"
import type { IntegrityCheckpoint } from "../../core/schema/Checkpoint.js"
import type { ConscienceValue } from "../../core/schema/Conscience.js"
import type { DriftAlert } from "../../core/schema/Drift.js"
import type { APTrace } from "../../core/schema/Trace.js"
import { selectCheckpointPage } from "./AgentQueries.js"
import { orgLayerColumns, orgLayerOf, type OrgLayerRow, orgLayerOfAgent } from "./OrgConscienceRepo.js"
import { enforcementRecordOf, type EnforcementRecordRow } from "./EnforcementRecordRows.js"
import { json, toCount, toIso } from "./Rows.js"
import { makeCommitBatch } from "./SqlCommit.js"
import { makeMerkleReads } from "./SqlMerkle.js"
import {
  agentSettingsOf,
  type AgentSettingsRecord,
  defaultAgentSettings,
  type ContainmentLogEntry,
  type EnforcementRecord,
  type OutboxItem,
  Store,
  StoreError,
  storeError
} from "./Store.js"
import {
  certificateFields,
  checkpointFields,
  openBodies,
  openBody,
  type SealedRow,
  type SealedTable,
  traceFields
} from "./SealedFields.js"
import * as Repositories from "./Repositories.js"
import { transaction } from "./Transaction.js"
import { SecretKeys } from "../keys/SecretKeys.js"

/** Bodies of the rows, in the order the query returned them. */
const bodies = <A>(rows: ReadonlyArray<{ readonly body: unknown }>): ReadonlyArray<A> =>
  rows.map((row) => row.body as A)

export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const secretKeys = yield* SecretKeys
  const merkle = makeMerkleReads(sql)

  /** The first row's body with its sealed fields opened. */
  const firstOpened = <A>(
    operation: string,
    spec: SealedTable<A>,
    query: Effect.Effect<ReadonlyArray<SealedRow<A>>, SqlError>
  ): Effect.Effect<A | undefined, StoreError> =>
    query.pipe(
      Effect.flatMap(([row]) => (row === undefined ? Effect.succeed(undefined) : openBody(spec, secretKeys.all, row))),
      storeError(operation)
    )

  const loadLogState = (agentId: string): Effect.Effect<AgentLogState, StoreError> =>
    sql<{ position: unknown; hash: string; frontier: ReadonlyArray<string> }>`
      select position, encode(hash, 'hex') as hash, frontier from chain_heads where agent_id = ${agentId}`.pipe(
      Effect.map(([row]) => {
        if (row === undefined) return emptyLogState(agentId)
        const size = toCount(row.position)
        return {
          head: { position: size, hash: fromHex(row.hash)! },
          frontier: { size, hashes: row.frontier.map((hash) => fromHex(hash)!) }
        }
      }),
      storeError("loadLogState")
    )

  const existingCheckpoints = (ids: ReadonlyArray<string>): Effect.Effect<ReadonlySet<string>, StoreError> =>
    ids.length === 0
      ? Effect.succeed(new Set())
      : sql<{ checkpoint_id: string }>`
          select checkpoint_id from checkpoints
          where checkpoint_id in (select jsonb_array_elements_text(${json(ids)}::jsonb))`.pipe(
          Effect.map((rows) => new Set(rows.map((row) => row.checkpoint_id))),
          storeError("existingCheckpoints")
        )

  const listCheckpoints: Store["Type"]["listCheckpoints"] = (query) =>
    storeError("listCheckpoints")(selectCheckpointPage(sql, secretKeys.all, query))

  const treeHead: Store["Type"]["treeHead"] = (agentId, treeSize) =>
    sql<{ agent_id: string; tree_size: unknown; root: string; note: string; created_at: unknown }>`
      select agent_id, tree_size, encode(root, 'hex') as root, note, created_at from tree_heads
      where agent_id = ${agentId} ${treeSize === undefined ? sql`` : sql`and tree_size = ${treeSize}`}
      order by tree_size desc limit 1`.pipe(
      Effect.map(([row]) =>
        row === undefined
          ? undefined
          : {
              agent_id: row.agent_id,
              tree_size: toCount(row.tree_size),
              root: row.root,
              note: row.note,
              created_at: toIso(row.created_at)
            }
      ),
      storeError("treeHead")
    )

  const putCard = (agentId: string, card: AlignmentCard): Effect.Effect<number, StoreError> =>
    transaction(
      sql,
      Effect.gen(function* () {
        yield* sql`insert into agents (agent_id) values (${agentId}) on conflict do nothing`
        // The agent row lock serialises versioning: two concurrent puts get versions n and n + 1.
        yield* sql`select agent_id from agents where agent_id = ${agentId} for update`
        yield* sql`update cards set active = false where agent_id = ${agentId} and active`
        const [row] = yield* sql<{ version: number }>`
        insert into cards (agent_id, version, card_id, card, retention_days, active)
        select ${agentId}, coalesce(max(version), 0) + 1, ${card.card_id}, ${json(card)}::jsonb,
               ${card.audit_commitment.retention_days}, true
        from cards where agent_id = ${agentId}
        returning version`
        return row!.version
      })
    ).pipe(storeError("putCard"))

  const claimOutbox = (
    kind: string,
    limit: number,
    leaseMs: number
  ): Effect.Effect<ReadonlyArray<OutboxItem>, StoreError> =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => {
      const at = new Date(now).toISOString()
      const until = new Date(now + leaseMs).toISOString()
      // SKIP LOCKED: relays claiming at the same moment take disjoint items instead of waiting.
      return sql<{ id: unknown; kind: string; payload: unknown; attempts: number; created_at: unknown }>`
        update outbox o set leased_until = ${until}::timestamptz, attempts = o.attempts + 1
        from (
          select id from outbox
          where kind = ${kind} and not dead and due_at <= ${at}::timestamptz
            and (leased_until is null or leased_until <= ${at}::timestamptz)
          order by due_at, id
          limit ${limit}
          for update skip locked
        ) due
        where o.id = due.id
        returning o.id, o.kind, o.payload, o.attempts, o.created_at`
    }).pipe(
      Effect.map((rows) =>
        rows
          .map((row) => ({
            id: String(row.id),
            kind: row.kind,
            payload: row.payload,
            attempts: row.attempts,
            created_at: toIso(row.created_at)
          }))
          .sort((a, b) => toCount(a.id) - toCount(b.id))
      ),
      storeError("claimOutbox")
    )

  const failOutbox = (id: string, error: string, retryInMs: number, maxAttempts: number) =>
    Effect.flatMap(
      Clock.currentTimeMillis,
      (now) => sql`
        update outbox
        set last_error = ${error}, leased_until = null, due_at = ${new Date(now + retryInMs).toISOString()}::timestamptz,
            dead = attempts >= ${maxAttempts}
        where id = ${id}::bigint`
    ).pipe(Effect.asVoid, storeError("failOutbox"))

  const putAgentSettings = (
    agentId: string,
    patch: Partial<AgentSettingsRecord>
  ): Effect.Effect<AgentSettingsRecord, StoreError> =>
    // `||` merges at the top level: a key set to null (containment on resume) is kept as null.
    sql<{ settings: unknown }>`
      insert into agents (agent_id, settings) values (${agentId}, ${json(patch)}::jsonb)
      on conflict (agent_id) do update set settings = agents.settings || excluded.settings
      returning settings`.pipe(
      Effect.flatMap(([row]) => agentSettingsOf(row?.settings)),
      storeError("putAgentSettings")
    )

  const recordEnforcement: Store["Type"]["recordEnforcement"] = (draft, patch) =>
    transaction(
      sql,
      Effect.gen(function* () {
        const { record } = draft
        yield* sql`insert into agents (agent_id) values (${record.agent_id}) on conflict do nothing`
        // The agent row lock orders this against settings written by the API at the same moment.
        const [row] = yield* sql<{ settings: unknown }>`
        select settings from agents where agent_id = ${record.agent_id} for update`
        const current = yield* agentSettingsOf(row?.settings)
        const inserted = yield* sql<{ id: unknown }>`
        insert into enforcement_records (record_id, agent_id, kind, rule, reason, checkpoint_id, session_id, actor,
                                         created_at, mode, action, body)
        values (${record.record_id}, ${record.agent_id}, ${record.kind}, ${record.rule}, ${record.reason},
                ${record.checkpoint_id ?? null}, ${record.session_id ?? null}, ${record.actor},
                ${record.created_at}::timestamptz, ${draft.mode ?? current.mode}, ${record.kind},
                ${json(draft.body ?? {})}::jsonb)
        on conflict do nothing
        returning id`
        if (inserted.length === 0 || patch === undefined) return { recorded: inserted.length > 0, settings: current }
        const [updated] = yield* sql<{ settings: unknown }>`
        update agents set settings = settings || ${json(patch)}::jsonb
        where agent_id = ${record.agent_id}
        returning settings`
        return { recorded: true, settings: yield* agentSettingsOf(updated?.settings) }
      })
    ).pipe(storeError("recordEnforcement"))

  const recordEnforcements: Store["Type"]["recordEnforcements"] = (drafts) =>
    drafts.length === 0
      ? Effect.succeed(0)
      : sql<{ id: unknown }>`
      insert into enforcement_records (record_id, agent_id, kind, rule, reason, checkpoint_id, session_id, actor,
                                       created_at, mode, action, body)
      select r.record_id, r.agent_id, r.kind, r.rule, r.reason, r.checkpoint_id, r.session_id, r.actor, r.created_at,
             coalesce(r.mode, a.settings->>'mode', ${defaultAgentSettings.mode}), r.kind, coalesce(r.body, '{}'::jsonb)
      from json_to_recordset(${json(
        drafts.map(({ body, mode, record }) => ({
          ...record,
          checkpoint_id: record.checkpoint_id ?? null,
          session_id: record.session_id ?? null,
          mode: mode ?? null,
          body: body ?? null
        }))
      )}::json) as r(record_id text, agent_id text, kind text, rule text, reason text, checkpoint_id text,
                     session_id text, actor text, created_at timestamptz, mode text, body jsonb)
      left join agents a on a.agent_id = r.agent_id
      -- Without a target: a record id stored already, or the same act on the same checkpoint, stores nothing.
      on conflict do nothing
      returning id`.pipe(
          Effect.map((rows) => rows.length),
          storeError("recordEnforcements")
        )

  const enforcementRecordPage: Store["Type"]["enforcementRecordPage"] = (query) => {
    const filters = sql.and([
      sql`agent_id = ${query.agentId}`,
      ...(query.kind === undefined ? [] : [sql`kind = ${query.kind}`]),
      ...(query.from === undefined ? [] : [sql`created_at >= ${query.from}::timestamptz`]),
      ...(query.to === undefined ? [] : [sql`created_at < ${query.to}::timestamptz`])
    ])
    return Effect.all([
      sql<EnforcementRecordRow>`
        select record_id, agent_id, kind, rule, reason, checkpoint_id, session_id, actor, created_at
        from enforcement_records where ${filters}
        order by created_at desc, id desc limit ${query.limit} offset ${query.offset}`,
      sql<{ n: unknown }>`select count(*) as n from enforcement_records where ${filters}`
    ]).pipe(
      Effect.map(([rows, [count]]) => ({
        items: rows.map(enforcementRecordOf),
        total: toCount(count?.n)
      })),
      storeError("enforcementRecordPage")
    )
  }

  const lockAgentSettings: Store["Type"]["lockAgentSettings"] = (agentId) =>
    Effect.gen(function* () {
      yield* sql`insert into agents (agent_id) values (${agentId}) on conflict do nothing`
      const [row] = yield* sql<{ settings: unknown; org_id: string | null }>`
        select a.settings, c.org_id from agents a left join agent_claims c on c.agent_id = a.agent_id
        where a.agent_id = ${agentId} for update of a`
      return { settings: yield* agentSettingsOf(row?.settings), org_id: row?.org_id ?? null }
    }).pipe(storeError("lockAgentSettings"))

  const appendContainmentLog: Store["Type"]["appendContainmentLog"] = (entry) =>
    sql`
      insert into containment_log (id, agent_id, action, actor, reason, previous_status, new_status, scope, metadata,
                                   created_at)
      values (${entry.id}, ${entry.agent_id}, ${entry.action}, ${entry.actor}, ${entry.reason}, ${entry.previous_status},
              ${entry.new_status}, ${entry.scope}, ${json(entry.metadata)}::jsonb, ${entry.created_at}::timestamptz)`.pipe(
      Effect.asVoid,
      storeError("appendContainmentLog")
    )

  const containmentLog: Store["Type"]["containmentLog"] = (agentId, limit) =>
    sql<{
      id: string
      agent_id: string
      action: ContainmentLogEntry["action"]
      actor: string
      reason: string | null
      previous_status: ContainmentLogEntry["previous_status"]
      new_status: ContainmentLogEntry["new_status"]
      scope: ContainmentLogEntry["scope"]
      metadata: Record<string, unknown>
      created_at: unknown
    }>`
      select id, agent_id, action, actor, reason, previous_status, new_status, scope, metadata, created_at
      from containment_log where agent_id = ${agentId} order by seq desc limit ${limit}`.pipe(
      Effect.map((rows) => rows.map((row) => ({ ...row, created_at: toIso(row.created_at) }))),
      storeError("containmentLog")
    )

  const enforcementRecords = (
    agentId: string,
    limit: number
  ): Effect.Effect<ReadonlyArray<EnforcementRecord>, StoreError> =>
    sql<{
      id: unknown
      agent_id: string
      checkpoint_id: string | null
      session_id: string | null
      mode: string
      action: string
      body: unknown
      created_at: unknown
    }>`
      select id, agent_id, checkpoint_id, session_id, mode, action, body, created_at from enforcement_records
      where agent_id = ${agentId} order by created_at desc, id desc limit ${limit}`.pipe(
      Effect.map((rows) => rows.map((row) => ({ ...row, id: String(row.id), created_at: toIso(row.created_at) }))),
      storeError("enforcementRecords")
    )

  /** Rows past the retention of the agent's active card; agents without a card keep everything. */
  const purgeExpired = (now: Date): Effect.Effect<number, StoreError> => {
    const at = now.toISOString()
    return transaction(
      sql,
      Effect.gen(function* () {
        const [checkpoints] = yield* sql<{ n: unknown }>`
        with expired as (
          select c.checkpoint_id from checkpoints c
          join cards k on k.agent_id = c.agent_id and k.active
          where c.occurred_at < ${at}::timestamptz - make_interval(days => k.retention_days)
        ), certificates_gone as (
          delete from certificates where checkpoint_id in (select checkpoint_id from expired)
        ), proofs_gone as (
          delete from proofs where checkpoint_id in (select checkpoint_id from expired)
        ), gone as (
          delete from checkpoints where checkpoint_id in (select checkpoint_id from expired)
          returning agent_id, verdict
        ), counted as (
          update checkpoint_counts n set count = n.count - g.count
          from (select agent_id, verdict, count(*) as count from gone group by agent_id, verdict) g
          where n.agent_id = g.agent_id and n.verdict = g.verdict
        )
        select count(*) as n from gone`
        const [traces] = yield* sql<{ n: unknown }>`
        with gone as (
          delete from traces t using cards k
          where k.agent_id = t.agent_id and k.active
            and t.occurred_at < ${at}::timestamptz - make_interval(days => k.retention_days)
          returning 1
        )
        select count(*) as n from gone`
        return toCount(checkpoints?.n) + toCount(traces?.n)
      })
    ).pipe(storeError("purgeExpired"))
  }

  return Store.of({
    loadLogState,
    existingCheckpoints,
    commitBatch: makeCommitBatch(sql, secretKeys.active),
    ping: sql`select 1`.pipe(Effect.asVoid, storeError("ping")),

    getCheckpoint: (checkpointId) =>
      firstOpened(
        "getCheckpoint",
        checkpointFields,
        sql<SealedRow<IntegrityCheckpoint>>`
          select checkpoint_id as id, sealed_by, body from checkpoints where checkpoint_id = ${checkpointId}`
      ),
    listCheckpoints,
    getCertificate: (checkpointId) =>
      firstOpened(
        "getCertificate",
        certificateFields,
        sql<SealedRow<Certificate>>`
          select checkpoint_id as id, sealed_by, body from certificates where checkpoint_id = ${checkpointId}`
      ),
    getTrace: (traceId) =>
      firstOpened(
        "getTrace",
        traceFields,
        sql<SealedRow<APTrace>>`select trace_id as id, sealed_by, body from traces where trace_id = ${traceId}`
      ),
    recentTraces: (agentId, limit) =>
      sql<SealedRow<APTrace>>`
        select trace_id as id, sealed_by, body from traces where agent_id = ${agentId}
        order by occurred_at desc limit ${limit}`.pipe(
        Effect.flatMap((rows) => openBodies(traceFields, secretKeys.all, rows)),
        storeError("recentTraces")
      ),
    sessionCheckpoints: (agentId, sessionId, limit) =>
      sql<SealedRow<IntegrityCheckpoint>>`
        select checkpoint_id as id, sealed_by, body from checkpoints
        where agent_id = ${agentId} and session_id = ${sessionId}
        order by occurred_at desc, position desc limit ${limit}`.pipe(
        Effect.flatMap((rows) => openBodies(checkpointFields, secretKeys.all, rows)),
        storeError("sessionCheckpoints")
      ),
    inclusionProof: merkle.inclusion,
    consistencyProof: merkle.consistency,
    rootAt: merkle.root,
    treeHead,
    driftAlerts: (agentId, limit) =>
      sql<{ body: unknown }>`
        select body from drift_alerts where agent_id = ${agentId} order by detected_at desc limit ${limit}`.pipe(
        Effect.map(bodies<DriftAlert>),
        storeError("driftAlerts")
      ),

    putCard,
    activeCard: (agentId) =>
      sql<{ card: unknown; version: number }>`
        select card, version from cards where agent_id = ${agentId} and active`.pipe(
        Effect.map(([row]) =>
          row === undefined ? undefined : { card: row.card as AlignmentCard, version: row.version }
        ),
        storeError("activeCard")
      ),
    putConscienceValues: (agentId, values) =>
      sql`
        insert into conscience_values (agent_id, "values") values (${agentId}, ${json(values)}::jsonb)
        on conflict (agent_id) do update set "values" = excluded."values", updated_at = now()`.pipe(
        Effect.asVoid,
        storeError("putConscienceValues")
      ),
    conscienceValues: (agentId) =>
      sql<{ values: ReadonlyArray<ConscienceValue> }>`
        select "values" from conscience_values where agent_id = ${agentId}`.pipe(
        Effect.map(([row]) => row?.values ?? []),
        storeError("conscienceValues")
      ),
    orgConscienceLayer: (agentId) => orgLayerOfAgent(sql, agentId),
    agentContextInputs: (agentId) =>
      Effect.gen(function* () {
        const [row] = yield* sql<
          OrgLayerRow & {
            active_card: { card: unknown; version: number } | null
            settings: unknown
            agent_values: ReadonlyArray<ConscienceValue> | null
          }
        >`
          select
            (select json_build_object('card', k.card, 'version', k.version) from cards k
              where k.agent_id = a.agent_id and k.active) as active_card,
            (select g.settings from agents g where g.agent_id = a.agent_id) as settings,
            (select cv."values" from conscience_values cv where cv.agent_id = a.agent_id) as agent_values,
            ${orgLayerColumns(sql)}
          from (select ${agentId}::text as agent_id) a
          left join agent_claims c on c.agent_id = a.agent_id
          left join org_conscience_settings s on s.org_id = c.org_id`
        return {
          card:
            row?.active_card == null
              ? undefined
              : { card: row.active_card.card as AlignmentCard, version: row.active_card.version },
          settings: yield* agentSettingsOf(row?.settings),
          agentValues: row?.agent_values ?? [],
          orgLayer: orgLayerOf(row)
        }
      }).pipe(storeError("agentContextInputs")),

    agentSettings: (agentId) =>
      sql<{ settings: unknown }>`select settings from agents where agent_id = ${agentId}`.pipe(
        Effect.flatMap(([row]) => agentSettingsOf(row?.settings)),
        storeError("agentSettings")
      ),
    putAgentSettings,
    recordEnforcement,
    recordEnforcements,
    enforcementRecordPage,
    lockAgentSettings,
    appendContainmentLog,
    containmentLog,
    enforcementRecords,

    enqueueOutbox: (drafts) =>
      drafts.length === 0
        ? Effect.void
        : Effect.flatMap(Clock.currentTimeMillis, (now) => {
            const at = new Date(now).toISOString()
            return sql`
              insert into outbox (kind, payload, due_at, created_at)
              select kind, coalesce(payload, 'null'::json), ${at}::timestamptz, ${at}::timestamptz
              from json_to_recordset(${json(drafts)}::json) as r(kind text, payload json)`
          }).pipe(Effect.asVoid, storeError("enqueueOutbox")),
    claimOutbox,
    completeOutbox: (ids) =>
      ids.length === 0
        ? Effect.void
        : sql`delete from outbox where id in (select jsonb_array_elements_text(${json(ids)}::jsonb)::bigint)`.pipe(
            Effect.asVoid,
            storeError("completeOutbox")
          ),
    failOutbox,

    purgeExpired
  })
})

/**
 * The store on whichever `SqlClient` is provided; the schema must be migrated (see StoreDatabase).
 * With it, every repository (Repositories.ts), on the same client and key: wherever there is a
 * store, each repository is there once, and nothing else provides one.
 */
export const layer: Layer.Layer<Store | Repositories.Repositories, never, SqlClient.SqlClient | SecretKeys> =
  Layer.merge(Layer.effect(Store, make), Repositories.layer)
