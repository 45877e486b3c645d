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
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import type * as Effect from "effect/Effect"
import type { AgentLogState, Attestation } from "../../core/attestation.js"
import type { Certificate } from "../../core/certificate.js"
import type { AlignmentCard } from "../../core/schema/card.js"
import type { IntegrityCheckpoint } from "../../core/schema/checkpoint.js"
import type { ConscienceValue } from "../../core/schema/conscience.js"
import type { DriftAlert } from "../../core/schema/drift.js"
import type { APTrace } from "../../core/schema/trace.js"
import type { Verdict } from "../../core/schema/verdict.js"

export class StoreError extends Data.TaggedError("StoreError")<{
  readonly operation: string
  readonly cause: unknown
}> {}

/** One checkpoint, attested, with everything that must be stored with it. */
export interface CommitInput {
  readonly checkpoint: IntegrityCheckpoint
  readonly trace: APTrace
  /** Certificate, chain link, Merkle nodes and the log state after this checkpoint. */
  readonly attestation: Attestation
  /** The log state the attestation extended: the compare-and-set fence. */
  readonly before: AgentLogState
  /** The C2SP signed note of the agent's log at the new size (signed tree head). */
  readonly treeHead: string
  readonly alerts: ReadonlyArray<DriftAlert>
  /** Sent after commit by the outbox relays: webhooks, prover jobs. */
  readonly outbox: ReadonlyArray<OutboxDraft>
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

export class Store extends Context.Tag("candor/Store")<Store, {
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

  // ---- reads ----
  readonly getCheckpoint: (checkpointId: string) => Effect.Effect<IntegrityCheckpoint | undefined, StoreError>
  readonly listCheckpoints: (query: CheckpointQuery) => Effect.Effect<Page<IntegrityCheckpoint>, StoreError>
  readonly getCertificate: (checkpointId: string) => Effect.Effect<Certificate | undefined, StoreError>
  readonly getTrace: (traceId: string) => Effect.Effect<APTrace | undefined, StoreError>
  /** The newest traces of an agent, newest first: the AAP drift baseline when an actor is rebuilt. */
  readonly recentTraces: (agentId: string, limit: number) => Effect.Effect<ReadonlyArray<APTrace>, StoreError>
  /** The newest checkpoints of a session, newest first: the AIP window when an actor is rebuilt. */
  readonly sessionCheckpoints: (
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
  /** The newest signed tree head, or the one at exactly `treeSize`. */
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

  // ---- outbox ----
  /** Up to `limit` due items of `kind`, leased for `leaseMs` so concurrent relays never send one twice. */
  readonly claimOutbox: (
    kind: string,
    limit: number,
    leaseMs: number
  ) => Effect.Effect<ReadonlyArray<OutboxItem>, StoreError>
  readonly completeOutbox: (id: string) => Effect.Effect<void, StoreError>
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
}>() {}
