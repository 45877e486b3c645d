/**
 * The store: every row Candor keeps, behind one service so the actors, the API and the verifiers
 * never see SQL. One implementation (`SqlStore`) runs the same SQL on PostgreSQL (`DATABASE_URL`)
 * and on embedded PGlite (`CANDOR_DATA_DIR`).
 *
 * The write path is `commitBatch`: the agent actors attest checkpoints in memory (core/attestation)
 * and hand the results here; one SQL transaction stores them all or none. The chain head of each
 * agent is compared-and-set, so two workers that both believe they own a partition cannot fork a
 * chain or duplicate a Merkle leaf: the loser gets `Conflict`, reloads and retries.
 */
import type { SqlError } from "@effect/sql/SqlError"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import type * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import type { AgentLogState, Attestation } from "../../core/Attestation.js"
import type { Certificate } from "../../core/Certificate.js"
import type { OrgConscienceLayer } from "../../core/ConscienceResolution.js"
import type { AlignmentCard } from "../../core/schema/Card.js"
import type { IntegrityCheckpoint } from "../../core/schema/Checkpoint.js"
import type { ConscienceValue } from "../../core/schema/Conscience.js"
import type { DriftAlert } from "../../core/schema/Drift.js"
import type { EnforcementRecord as EnforcementRecordEntry } from "../../core/schema/EnforcementRecord.js"
import type { APTrace } from "../../core/schema/Trace.js"
import type { AgentStatus } from "../../core/schema/Agent.js"
import { type ContainmentAction, type ContainmentScope, ContainmentState } from "../../core/schema/Containment.js"
import { EnforcementMode, FailurePolicy, type Verdict } from "../../core/schema/Verdict.js"
import type { SealedFieldUnreadable } from "./SealedFields.js"

export class StoreError extends Data.TaggedError("StoreError")<{
  readonly operation: string
  readonly cause: unknown
}> {}

/**
 * A query's failure (SQL, a stored value that does not decode, a sealed field that does not open)
 * as the `StoreError` of `operation`.
 */
export const storeError =
  (operation: string) =>
  <A, R>(
    effect: Effect.Effect<A, SqlError | ParseResult.ParseError | SealedFieldUnreadable, R>
  ): Effect.Effect<A, StoreError, R> =>
    Effect.mapError(effect, (cause) => new StoreError({ operation, cause }))

/** One checkpoint, attested, with everything that must be stored with it. */
export interface CommitInput {
  readonly checkpoint: IntegrityCheckpoint
  readonly trace: APTrace
  /** Certificate, chain link, Merkle nodes and the log state after this checkpoint. */
  readonly attestation: Attestation
  /** The log state the attestation extended: the compare-and-set fence. */
  readonly before: AgentLogState
  /**
   * The C2SP signed note of the agent's log at the new size (signed tree head). Only the last input
   * of each agent in a batch carries one: the note has no timestamp, so a head for a size in between
   * is the same note signed on demand (`rootAt`), and a batch costs one signature per agent, not two
   * per checkpoint.
   */
  readonly treeHead: string | undefined
  readonly alerts: ReadonlyArray<DriftAlert>
  /** Sent after commit by the outbox relays: webhooks, prover jobs. */
  readonly outbox: ReadonlyArray<OutboxDraft>
  /**
   * The event's `x-candor-agent` label, when it had one: stored as the agent's `default_name` with its
   * chain head's insert (the label is part of the agent id, so the first one is every one).
   */
  readonly agentName?: string | undefined
}

export type CommitResult =
  | { readonly _tag: "Committed" }
  /** Some agent's stored head was not `before` of its first input, or a checkpoint id was taken: nothing was written. */
  | { readonly _tag: "Conflict"; readonly agentIds: ReadonlyArray<string> }

export interface OutboxDraft {
  /** `webhook`, `prover`, …: each relay claims its own kind. */
  readonly kind: string
  readonly payload: unknown
}

export interface OutboxItem extends OutboxDraft {
  readonly id: string
  readonly attempts: number
  readonly created_at: string
}

export interface CheckpointQuery {
  readonly agentId: string
  readonly limit: number
  readonly offset: number
  readonly verdict?: Verdict | undefined
  readonly sessionId?: string | undefined
}

export interface Page<A> {
  readonly items: ReadonlyArray<A>
  readonly total: number
}

/** A stored signed tree head of one agent's log. */
export interface TreeHead {
  readonly agent_id: string
  readonly tree_size: number
  /** Hex SHA-256 root. */
  readonly root: string
  /** The C2SP signed note. */
  readonly note: string
  readonly created_at: string
}

/** An agent's settings as kept in `agents.settings`, with the defaults filled in. */
export const AgentSettingsRecord = Schema.Struct({
  mode: EnforcementMode,
  failure_policy: FailurePolicy,
  /** Pause the agent after this many consecutive boundary violations; null: never. */
  auto_containment_threshold: Schema.NullOr(Schema.Number),
  /** Set while the agent is paused or killed; null: active. */
  containment: Schema.NullOr(ContainmentState)
})
export interface AgentSettingsRecord extends Schema.Schema.Type<typeof AgentSettingsRecord> {}

/** An agent never configured: observe, fail open (Mnemom's default), no auto-containment, active. */
export const defaultAgentSettings: AgentSettingsRecord = {
  mode: "observe",
  failure_policy: "fail_open",
  auto_containment_threshold: null,
  containment: null
}

const decodeStoredSettings = Schema.decodeUnknown(Schema.partialWith(AgentSettingsRecord, { exact: true }), {
  errors: "all"
})

/** What `Store.agentContextInputs` reads. */
export interface AgentContextInputs {
  readonly card: { readonly card: AlignmentCard; readonly version: number } | undefined
  readonly settings: AgentSettingsRecord
  readonly agentValues: ReadonlyArray<ConscienceValue>
  readonly orgLayer: OrgConscienceLayer | undefined
}

/**
 * The settings of an `agents.settings` value, which holds only what was ever set (none: a row-less
 * agent); the defaults fill the rest. A value that is not settings fails: guessing could lift a containment.
 */
export const agentSettingsOf = (stored: unknown): Effect.Effect<AgentSettingsRecord, ParseResult.ParseError> =>
  Effect.map(decodeStoredSettings(stored ?? {}), (set) => ({ ...defaultAgentSettings, ...set }))

/**
 * An act of enforcement to store (core/schema/EnforcementRecord.ts), with what the store keeps beside
 * the published record: the enforcement mode in force and details for the audit trail.
 */
export interface EnforcementDraft {
  readonly record: EnforcementRecordEntry
  /** The enforcement mode in force; absent: the agent's stored mode. */
  readonly mode?: EnforcementMode
  readonly body?: unknown
}

export interface EnforcementRecordQuery {
  readonly agentId: string
  readonly kind?: string | undefined
  /** At or after (RFC 3339). */
  readonly from?: string | undefined
  /** Before (RFC 3339). */
  readonly to?: string | undefined
  readonly limit: number
  readonly offset: number
}

export interface EnforcementRecord {
  readonly id: string
  readonly agent_id: string
  readonly checkpoint_id: string | null
  readonly session_id: string | null
  readonly mode: string
  readonly action: string
  readonly body: unknown
  readonly created_at: string
}

/** One row of an agent's containment log (migrations/0007_containment.ts). */
export interface ContainmentLogEntry {
  /** `ctl-<uuid>`. */
  readonly id: string
  readonly agent_id: string
  readonly action: ContainmentAction
  /** A user id, `service` or `system`. */
  readonly actor: string
  readonly reason: string | null
  readonly previous_status: AgentStatus
  readonly new_status: AgentStatus
  /** The containment changed: the agent's own, or its provider key's (statuses above are the key's then). */
  readonly scope: ContainmentScope
  /** What triggered it (an automatic pause: `checkpoint_id`, `violations`); `{}` for a person's action. */
  readonly metadata: Readonly<Record<string, unknown>>
  /** RFC 3339. */
  readonly created_at: string
}

export class Store extends Context.Tag("candor/adapters/store/Store")<
  Store,
  {
    // ---- the write path (actors) ----
    /** The agent's chain head and Merkle frontier; `emptyLogState` for an agent never seen. */
    readonly loadLogState: (agentId: string) => Effect.Effect<AgentLogState, StoreError>
    /** Which of these checkpoint ids are already stored (redelivered events are acked, not re-attested). */
    readonly existingCheckpoints: (ids: ReadonlyArray<string>) => Effect.Effect<ReadonlySet<string>, StoreError>
    /**
     * All inputs in one transaction, in order. Several consecutive inputs may belong to one agent:
     * the first one's `before` must equal the stored state, each next one's `before` the previous
     * one's `attestation.state`.
     */
    readonly commitBatch: (inputs: ReadonlyArray<CommitInput>) => Effect.Effect<CommitResult, StoreError>
    /** One round trip: fails while the database cannot be reached (an outage, not a bad batch). */
    readonly ping: Effect.Effect<void, StoreError>

    // ---- reads ----
    readonly getCheckpoint: (checkpointId: string) => Effect.Effect<IntegrityCheckpoint | undefined, StoreError>
    readonly listCheckpoints: (query: CheckpointQuery) => Effect.Effect<Page<IntegrityCheckpoint>, StoreError>
    readonly getCertificate: (checkpointId: string) => Effect.Effect<Certificate | undefined, StoreError>
    readonly getTrace: (traceId: string) => Effect.Effect<APTrace | undefined, StoreError>
    /** The newest traces of an agent, newest first: the AAP drift baseline when an actor is rebuilt. */
    readonly recentTraces: (agentId: string, limit: number) => Effect.Effect<ReadonlyArray<APTrace>, StoreError>
    /**
     * The newest checkpoints of one agent in one session, newest first: the AIP window when an actor
     * is rebuilt. Never another agent's, whatever session id it sent (issue 24).
     */
    readonly sessionCheckpoints: (
      agentId: string,
      sessionId: string,
      limit: number
    ) => Effect.Effect<ReadonlyArray<IntegrityCheckpoint>, StoreError>
    /** Audit paths (hex), or undefined when the leaf or the size is not in the log. */
    readonly inclusionProof: (
      agentId: string,
      leafIndex: number,
      treeSize: number
    ) => Effect.Effect<ReadonlyArray<string> | undefined, StoreError>
    readonly consistencyProof: (
      agentId: string,
      fromSize: number,
      toSize: number
    ) => Effect.Effect<ReadonlyArray<string> | undefined, StoreError>
    /** The hex root of the agent's log at `treeSize`, from the stored nodes; `undefined` past the log's size. */
    readonly rootAt: (agentId: string, treeSize: number) => Effect.Effect<string | undefined, StoreError>
    /** The newest signed tree head, or the one stored at exactly `treeSize` (the last size of a batch). */
    readonly treeHead: (agentId: string, treeSize?: number) => Effect.Effect<TreeHead | undefined, StoreError>
    readonly driftAlerts: (agentId: string, limit: number) => Effect.Effect<ReadonlyArray<DriftAlert>, StoreError>

    // ---- cards and conscience values ----
    /** Stores a new version and makes it active; returns its version number (1, 2, …). */
    readonly putCard: (agentId: string, card: AlignmentCard) => Effect.Effect<number, StoreError>
    readonly activeCard: (
      agentId: string
    ) => Effect.Effect<{ readonly card: AlignmentCard; readonly version: number } | undefined, StoreError>
    readonly putConscienceValues: (
      agentId: string,
      values: ReadonlyArray<ConscienceValue>
    ) => Effect.Effect<void, StoreError>
    readonly conscienceValues: (agentId: string) => Effect.Effect<ReadonlyArray<ConscienceValue>, StoreError>
    /** The conscience layer of the agent's organization (through its claim); undefined outside any organization. */
    readonly orgConscienceLayer: (agentId: string) => Effect.Effect<OrgConscienceLayer | undefined, StoreError>
    /**
     * What an agent's actor is built on, in one statement rather than four (`activeCard`,
     * `agentSettings`, `conscienceValues`, `orgConscienceLayer`): every new actor and every context
     * refresh reads it.
     */
    readonly agentContextInputs: (agentId: string) => Effect.Effect<AgentContextInputs, StoreError>

    // ---- agent settings and enforcement records ----
    /** The agent's settings; `defaultAgentSettings` for an agent never configured. */
    readonly agentSettings: (agentId: string) => Effect.Effect<AgentSettingsRecord, StoreError>
    /** Merges `patch` into the stored settings (creating the agent) and returns the result. */
    readonly putAgentSettings: (
      agentId: string,
      patch: Partial<AgentSettingsRecord>
    ) => Effect.Effect<AgentSettingsRecord, StoreError>
    /**
     * Records an enforcement once per record id, and once per (agent, checkpoint, kind), and, only when it is new, merges
     * `settings` into the agent's settings, in one transaction: a decision handled twice applies once
     * (and does not undo an admin's resume in between). Returns whether it was new and the settings after.
     */
    readonly recordEnforcement: (
      record: EnforcementDraft,
      settings?: Partial<AgentSettingsRecord>
    ) => Effect.Effect<{ readonly recorded: boolean; readonly settings: AgentSettingsRecord }, StoreError>
    /**
     * The agent's settings and organization (null: personal or unclaimed), its row locked until the
     * ambient transaction ends (creating the agent): a change decided on these settings is
     * compared-and-set against concurrent writers. Only meaningful inside `transaction(sql, …)`.
     */
    readonly lockAgentSettings: (
      agentId: string
    ) => Effect.Effect<{ readonly settings: AgentSettingsRecord; readonly org_id: string | null }, StoreError>
    /** Appends to the containment log, in the ambient transaction if any. */
    readonly appendContainmentLog: (entry: ContainmentLogEntry) => Effect.Effect<void, StoreError>
    /** The agent's containment log, newest first. */
    readonly containmentLog: (
      agentId: string,
      limit: number
    ) => Effect.Effect<ReadonlyArray<ContainmentLogEntry>, StoreError>
    /**
     * Stores each record unless its id (or its agent, checkpoint and kind) is stored already, in one
     * statement: the workers store the gateway's records so, a redelivery storing nothing. The count stored.
     */
    readonly recordEnforcements: (drafts: ReadonlyArray<EnforcementDraft>) => Effect.Effect<number, StoreError>
    /** A page of the agent's records, newest first, with the total of the filtered set. */
    readonly enforcementRecordPage: (
      query: EnforcementRecordQuery
    ) => Effect.Effect<Page<EnforcementRecordEntry>, StoreError>
    /** Newest first. */
    readonly enforcementRecords: (
      agentId: string,
      limit: number
    ) => Effect.Effect<ReadonlyArray<EnforcementRecord>, StoreError>

    // ---- outbox ----
    /**
     * Adds items to the outbox, due now, in the ambient transaction if any: an API action writes its
     * webhook drafts with the change it reports, so one is never sent without the other.
     */
    readonly enqueueOutbox: (drafts: ReadonlyArray<OutboxDraft>) => Effect.Effect<void, StoreError>
    /** Up to `limit` due items of `kind`, leased for `leaseMs` so concurrent relays never send one twice. */
    readonly claimOutbox: (
      kind: string,
      limit: number,
      leaseMs: number
    ) => Effect.Effect<ReadonlyArray<OutboxItem>, StoreError>
    /** Removes these items, sent (a relay's round completes its items in one statement). */
    readonly completeOutbox: (ids: ReadonlyArray<string>) => Effect.Effect<void, StoreError>
    /** Another attempt after `retryInMs`; after `maxAttempts` the item is kept as dead, never dropped. */
    readonly failOutbox: (
      id: string,
      error: string,
      retryInMs: number,
      maxAttempts: number
    ) => Effect.Effect<void, StoreError>

    // ---- retention ----
    /** Deletes checkpoint and trace rows older than their card's `audit_commitment.retention_days`; the log stays. */
    readonly purgeExpired: (now: Date) => Effect.Effect<number, StoreError>
  }
>() {}
