/**
 * What one `commitBatch` writes, worked out before touching the database: the chain-head moves to
 * compare-and-set, and one array of rows per table. Each array is sent as a single JSON parameter
 * and expanded by `json_to_recordset`, so a batch costs the same handful of statements whatever its
 * size, with one SQL text for both backends (no driver-specific array encoding). The fields derived
 * from the model's reasoning are sealed here under the active key (./SealedFields.ts), each row
 * naming that key in `sealed_by`.
 */
import type { AgentLogState } from "../../core/Attestation.js"
import { bytesEqual, toHex } from "../../core/Bytes.js"
import { genesisHash } from "../../core/Chain.js"
import type { SecretKey } from "../../core/SecretBox.js"
import { certificateFields, checkpointFields, sealBody, traceFields } from "./SealedFields.js"
import type { CommitInput } from "./Store.js"

/** The stored head of one agent before and after the batch (hashes hex, frontier hex largest first). */
export interface HeadMove {
  readonly agent_id: string
  readonly before_position: number
  readonly before_hash: string
  readonly position: number
  readonly hash: string
  readonly frontier: ReadonlyArray<string>
}

export interface CheckpointRow {
  readonly checkpoint_id: string
  readonly agent_id: string
  readonly session_id: string
  readonly verdict: string
  readonly occurred_at: string
  readonly position: number
  readonly body: object
  /** The key id the body's reasoning-derived fields are sealed under. */
  readonly sealed_by: string
}

/** A head inserted for an agent's first checkpoint, with the label it was seen under (its default name). */
export interface NewHead extends HeadMove {
  readonly default_name?: string
}

export interface CommitPlan {
  /** Agents whose batch starts from the empty log: their head row is inserted, not updated. */
  readonly newHeads: ReadonlyArray<NewHead>
  readonly movedHeads: ReadonlyArray<HeadMove>
  readonly checkpoints: ReadonlyArray<CheckpointRow>
  readonly certificates: ReadonlyArray<object>
  readonly traces: ReadonlyArray<object>
  readonly nodes: ReadonlyArray<object>
  readonly treeHeads: ReadonlyArray<object>
  readonly alerts: ReadonlyArray<object>
  readonly outbox: ReadonlyArray<object>
}

export type PlanResult =
  | { readonly _tag: "Plan"; readonly plan: CommitPlan }
  /** Inputs of these agents do not extend one another: refused before any SQL runs. */
  | { readonly _tag: "Broken"; readonly agentIds: ReadonlyArray<string> }

const sameState = (a: AgentLogState, b: AgentLogState): boolean =>
  a.head.position === b.head.position &&
  bytesEqual(a.head.hash, b.head.hash) &&
  a.frontier.size === b.frontier.size &&
  a.frontier.hashes.length === b.frontier.hashes.length &&
  a.frontier.hashes.every((hash, i) => bytesEqual(hash, b.frontier.hashes[i]!))

/** PostgreSQL reads RFC 3339 but not its lowercase `t`/`z`; the body keeps the original text. */
const timestamptz = (text: string): string => text.toUpperCase()

/**
 * Groups the inputs by agent and checks that each agent's inputs extend one another, starting
 * from its genesis when the first one starts at position 0, and that no checkpoint id repeats.
 */
export const planCommit = (inputs: ReadonlyArray<CommitInput>, key: SecretKey): PlanResult => {
  const firsts = new Map<string, CommitInput>()
  const lasts = new Map<string, CommitInput>()
  const broken = new Set<string>()
  const checkpointIds = new Set<string>()
  for (const input of inputs) {
    const agentId = input.attestation.link.entry.agent_id
    // The same id twice in one batch: the second would be skipped by the insert, not refused.
    if (checkpointIds.has(input.checkpoint.checkpoint_id)) broken.add(agentId)
    checkpointIds.add(input.checkpoint.checkpoint_id)
    const last = lasts.get(agentId)
    if (last === undefined) firsts.set(agentId, input)
    const extendsPrevious = last === undefined || sameState(last.attestation.state, input.before)
    const positioned =
      input.attestation.link.entry.position === input.before.head.position &&
      input.attestation.state.head.position === input.before.head.position + 1
    if (!extendsPrevious || !positioned || input.checkpoint.agent_id !== agentId) broken.add(agentId)
    lasts.set(agentId, input)
  }
  const newHeads: Array<NewHead> = []
  const movedHeads: Array<HeadMove> = []
  for (const [agentId, first] of firsts) {
    const { before } = first
    const last = lasts.get(agentId)!
    // The log's newest size must have its signed head: sizes in between are signed on demand.
    if (last.treeHead === undefined) broken.add(agentId)
    const state = last.attestation.state
    if (
      before.head.position === 0 &&
      (!bytesEqual(before.head.hash, genesisHash(agentId)) || before.frontier.size !== 0)
    ) {
      broken.add(agentId)
    }
    const move: HeadMove = {
      agent_id: agentId,
      before_position: before.head.position,
      before_hash: toHex(before.head.hash),
      position: state.head.position,
      hash: toHex(state.head.hash),
      frontier: state.frontier.hashes.map(toHex)
    }
    if (before.head.position !== 0) movedHeads.push(move)
    else newHeads.push(first.agentName === undefined ? move : { ...move, default_name: first.agentName })
  }
  if (broken.size > 0) return { _tag: "Broken", agentIds: [...broken] }

  const plan: CommitPlan = {
    newHeads,
    movedHeads,
    checkpoints: inputs.map(({ checkpoint, attestation }) => ({
      checkpoint_id: checkpoint.checkpoint_id,
      agent_id: checkpoint.agent_id,
      session_id: checkpoint.session_id,
      verdict: checkpoint.verdict,
      occurred_at: timestamptz(checkpoint.timestamp),
      position: attestation.link.entry.position,
      body: sealBody(checkpointFields, key, checkpoint.checkpoint_id, checkpoint),
      sealed_by: key.keyId
    })),
    certificates: inputs.map(({ attestation: { certificate } }) => ({
      checkpoint_id: certificate.subject.checkpoint_id,
      key_id: certificate.key_id,
      body: sealBody(certificateFields, key, certificate.subject.checkpoint_id, certificate),
      sealed_by: key.keyId
    })),
    traces: inputs.map(({ trace }) => ({
      trace_id: trace.trace_id,
      agent_id: trace.agent_id,
      occurred_at: timestamptz(trace.timestamp),
      body: sealBody(traceFields, key, trace.trace_id, trace),
      sealed_by: key.keyId
    })),
    nodes: inputs.flatMap(({ attestation }) =>
      attestation.nodes.map((node) => ({
        agent_id: attestation.link.entry.agent_id,
        level: node.level,
        idx: node.index,
        hash: toHex(node.hash)
      }))
    ),
    treeHeads: inputs.flatMap(({ attestation: { certificate }, treeHead }) =>
      treeHead === undefined
        ? []
        : [
            {
              agent_id: certificate.subject.agent_id,
              tree_size: certificate.merkle.tree_size,
              root: certificate.merkle.root,
              note: treeHead
            }
          ]
    ),
    alerts: inputs.flatMap(({ alerts }) =>
      alerts.map((alert) => ({
        alert_id: alert.alert_id,
        agent_id: alert.agent_id,
        session_id: alert.session_id,
        detected_at: timestamptz(alert.detection_timestamp),
        body: alert
      }))
    ),
    outbox: inputs.flatMap(({ outbox }) =>
      outbox.map((draft) => ({ kind: draft.kind, payload: draft.payload ?? null }))
    )
  }
  return { _tag: "Plan", plan }
}
