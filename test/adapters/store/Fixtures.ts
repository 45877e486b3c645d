/**
 * Real attestations for store tests: core `attest` with a generated key, signed tree heads made
 * with `signNote`, and checkpoint and trace records that match them.
 */
import { randomUUID } from "node:crypto"
import { type AgentLogState, attest, emptyLogState } from "../../../core/Attestation.js"
import { toHex } from "../../../core/Bytes.js"
import type { CertificateConcern } from "../../../core/Certificate.js"
import { frontierRoot } from "../../../core/Merkle.js"
import { formatCheckpoint, type NoteVerifier, signNote } from "../../../core/Note.js"
import type { AlignmentCard } from "../../../core/schema/Card.js"
import type { IntegrityCheckpoint } from "../../../core/schema/Checkpoint.js"
import type { DriftAlert } from "../../../core/schema/Drift.js"
import type { APTrace } from "../../../core/schema/Trace.js"
import { generateSigningKey } from "../../../core/Signing.js"
import type { CommitInput, OutboxDraft } from "../../../adapters/store/Store.js"

export const key = generateSigningKey()
export const resolveKey = (keyId: string) => (keyId === key.keyId ? key.publicKey : undefined)
const NOTE_NAME = "candor.test"
export const noteVerifier: NoteVerifier = { name: NOTE_NAME, publicKey: key.publicKey }
export const origin = (agentId: string) => `candor.test/agents/${agentId}`

/** A fresh id, so tests sharing one database never see each other's agents. */
export const uniqueId = (prefix: string) => `${prefix}-${randomUUID().slice(0, 8)}`
export const checkpointId = () => `ic-${randomUUID()}`

const HEX = (c: string) => c.repeat(64)

/** Cycles through clear, review_needed and boundary_violation (the verdict the rule derives). */
const CONCERNS: ReadonlyArray<ReadonlyArray<CertificateConcern>> = [
  [],
  [{ category: "undeclared_intent", severity: "medium", description: "d", relevant_conscience_value: null }],
  [{ category: "prompt_injection", severity: "high", description: "d", relevant_conscience_value: null }]
]

export interface InputOptions {
  readonly sessionId?: (position: number) => string
  /** Checkpoint and trace time of the entry at `position`. */
  readonly timestamp?: (position: number) => string
  readonly outbox?: (position: number) => ReadonlyArray<OutboxDraft>
  readonly alerts?: boolean
  /** Every entry clear (no concerns) instead of the verdict cycle. */
  readonly allClear?: boolean
  /** The certified concerns of the entry at `position`, instead of the verdict cycle's. */
  readonly concerns?: (position: number) => ReadonlyArray<CertificateConcern>
  /** Overrides the checkpoint id of the entry at `position`. */
  readonly checkpointId?: (position: number) => string | undefined
  /**
   * The reasoning-derived text of the entry at `position`: each concern's evidence, and the summary
   * (checkpoint, certificate claim, and the trace's selection reasoning, as the gateway writes it).
   */
  readonly reasoning?: (position: number) => {
    readonly evidence: string
    readonly summary: string
    /** An LLM judge's note, in `conscience_context.considerations` (sealed like the summary). */
    readonly consideration?: string
  }
}

const BASE_TIME = Date.parse("2026-11-01T00:00:00.000Z")
const defaultTime = (position: number) => new Date(BASE_TIME + position * 1000).toISOString()

/** One attested input extending `before`. */
export const makeInput = (agentId: string, before: AgentLogState, options: InputOptions = {}): CommitInput => {
  const position = before.head.position
  const id = options.checkpointId?.(position) ?? checkpointId()
  const sessionId = options.sessionId?.(position) ?? `${agentId}-session`
  const timestamp = (options.timestamp ?? defaultTime)(position)
  const concerns =
    options.concerns?.(position) ?? (options.allClear === true ? [] : CONCERNS[position % CONCERNS.length]!)
  const reasoning = options.reasoning?.(position)
  const summary = reasoning?.summary ?? `summary ${position}`
  const attestation = attest(
    before,
    {
      certificate_id: `cert-${id}`,
      issued_at: timestamp,
      subject: { checkpoint_id: id, agent_id: agentId, session_id: sessionId, card_id: "card-1", timestamp },
      claims: {
        concerns,
        boundary_values: ["boundary-no-deception"],
        reasoning_summary: summary,
        analysis_model: "rules",
        extraction_confidence: 1
      },
      input_commitments: {
        thinking_block_hash: HEX("1"),
        card_hash: HEX("2"),
        values_hash: HEX("3"),
        analysis_hash: HEX("4"),
        model: "m"
      }
    },
    key
  )
  const traceId = `tr-${id}`
  const checkpoint: IntegrityCheckpoint = {
    checkpoint_id: id,
    agent_id: agentId,
    card_id: "card-1",
    session_id: sessionId,
    timestamp,
    thinking_block_hash: HEX("1"),
    provider: "anthropic",
    model: "m",
    verdict: attestation.certificate.claims.verdict,
    concerns: concerns.map((c) => ({
      category: c.category,
      severity: c.severity,
      evidence: reasoning?.evidence ?? "e",
      description: c.description
    })),
    reasoning_summary: summary,
    conscience_context: {
      values_checked: [],
      conflicts: [],
      supports: [],
      considerations: reasoning?.consideration === undefined ? [] : [reasoning.consideration],
      consultation_depth: "standard"
    },
    window_position: { index: position % 10, window_size: 10 },
    analysis_metadata: {
      analysis_model: "rules",
      analysis_duration_ms: 1.5,
      thinking_tokens_original: 10,
      thinking_tokens_analyzed: 10,
      truncated: false,
      extraction_confidence: 1
    },
    linked_trace_id: traceId,
    re_evaluated_at: null,
    original_verdict: null
  }
  const trace: APTrace = {
    trace_id: traceId,
    agent_id: agentId,
    card_id: "card-1",
    timestamp,
    action: { type: "execute", name: "reply", category: "bounded" },
    decision: { selected: "reply", selection_reasoning: reasoning?.summary ?? "r", values_applied: ["honesty"] },
    context: { session_id: sessionId },
    verification: { verified: true, violations: [] },
    created_at: timestamp
  }
  const { state } = attestation
  const treeHead = signNote(
    formatCheckpoint({
      origin: origin(agentId),
      size: state.frontier.size,
      root: frontierRoot(state.frontier),
      extensions: []
    }),
    { name: NOTE_NAME, key }
  )
  const alerts: ReadonlyArray<DriftAlert> = options.alerts
    ? [
        {
          alert_id: `alert-${id}`,
          agent_id: agentId,
          session_id: sessionId,
          checkpoint_ids: [id],
          sustained_checks: 3,
          severity: "medium",
          drift_direction: "value_erosion",
          message: "m",
          detection_timestamp: timestamp
        }
      ]
    : []
  return { checkpoint, trace, attestation, before, treeHead, alerts, outbox: options.outbox?.(position) ?? [] }
}

/** `count` consecutive inputs of one agent from `before`, and the state after the last. */
export const makeInputs = (
  agentId: string,
  before: AgentLogState,
  count: number,
  options: InputOptions = {}
): { readonly inputs: ReadonlyArray<CommitInput>; readonly state: AgentLogState } => {
  const inputs: Array<CommitInput> = []
  let state = before
  for (let i = 0; i < count; i++) {
    const input = makeInput(agentId, state, options)
    inputs.push(input)
    state = input.attestation.state
  }
  return { inputs, state }
}

export const fresh = (agentId: string) => emptyLogState(agentId)

/** The leaf hashes of some inputs, for a reference `MemoryMerkleLog`. */
export const leafHashes = (inputs: ReadonlyArray<CommitInput>) =>
  inputs.map((input) => input.attestation.nodes[0]!.hash)

export const hex = toHex

export const card = (agentId: string, retentionDays: number, cardId = "card-1"): AlignmentCard => ({
  aap_version: "0.5.0",
  card_id: cardId,
  agent_id: agentId,
  issued_at: "2026-11-01T00:00:00Z",
  principal: { type: "human", relationship: "delegated_authority" },
  values: { declared: ["honesty"] },
  autonomy_envelope: { bounded_actions: ["reply"], escalation_triggers: [] },
  audit_commitment: { trace_format: "ap-trace-v1", retention_days: retentionDays, queryable: true }
})
