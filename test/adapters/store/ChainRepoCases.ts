/**
 * Cases of the repositories read and written around an agent's checkpoint log, run in the
 * repository conformance suite (RepositoryConformance.ts) on PGlite and PostgreSQL: reclassified
 * checkpoints and card amendments (ReclassificationRepo), re-evaluated verdicts
 * (ReevaluationRepo), the export's pages and inclusion proofs (ExportRepo), witness cosignatures
 * (WitnessRepo) and on-chain anchors (AnchorRepo). Each commits a log of its own through the store.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import { randomUUID } from "node:crypto"
import { expect } from "vitest"
import { AgentQueries } from "../../../adapters/store/AgentQueries.js"
import { AnchorRepo, type NewAnchor } from "../../../adapters/store/AnchorRepo.js"
import { ExportRepo } from "../../../adapters/store/ExportRepo.js"
import { ReclassificationRepo } from "../../../adapters/store/ReclassificationRepo.js"
import { ReevaluationRepo } from "../../../adapters/store/ReevaluationRepo.js"
import { RiskRepo } from "../../../adapters/store/RiskRepo.js"
import { Store } from "../../../adapters/store/Store.js"
import { WitnessRepo } from "../../../adapters/store/WitnessRepo.js"
import { agentGovernanceLog, governanceLogKey } from "../../../core/Governance.js"
import type { CardAmendment, Reclassification } from "../../../core/schema/Reclassification.js"
import { claimed } from "./AgentRepoCases.js"
import { fresh, makeInputs, uniqueId } from "./Fixtures.js"

/** A log of `count` checkpoints committed for a new agent. */
const committedLog = (prefix: string, count: number) =>
  Effect.gen(function* () {
    const store = yield* Store
    const agentId = uniqueId(prefix)
    const { inputs } = makeInputs(agentId, fresh(agentId), count)
    expect(yield* store.commitBatch(inputs)).toEqual({ _tag: "Committed" })
    return { agentId, inputs }
  })

export const reclassifications = Effect.gen(function* () {
  const repo = yield* ReclassificationRepo
  const risk = yield* RiskRepo
  const { agentId, inputs } = yield* committedLog("agt-rc", 6)
  const violation = inputs.find((input) => input.checkpoint.verdict === "boundary_violation")!
  const { checkpoint } = violation
  expect(yield* repo.checkpoint(agentId, checkpoint.checkpoint_id)).toEqual({
    checkpoint_id: checkpoint.checkpoint_id,
    session_id: checkpoint.session_id,
    verdict: "boundary_violation"
  })
  expect(yield* repo.checkpoint(uniqueId("agt-rc"), checkpoint.checkpoint_id)).toBeUndefined()
  expect(yield* repo.exists(checkpoint.checkpoint_id)).toBe(false)
  const violationsBefore = (yield* risk.violations(agentId, "2026-01-01T00:00:00.000Z")).length

  const row: Reclassification = {
    reclassification_id: `rc-${randomUUID()}`,
    agent_id: agentId,
    checkpoint_id: checkpoint.checkpoint_id,
    session_id: checkpoint.session_id,
    original_verdict: "boundary_violation",
    new_type: "card_gap",
    reason: "the card lacked the action",
    approved_by: "user-rc",
    chain_hash: violation.attestation.certificate.chain.hash,
    governance_index: 0,
    created_at: "2026-11-02T00:00:00.000Z"
  }
  expect(yield* repo.insert(row)).toBe(true)
  // One reclassification per checkpoint.
  expect(yield* repo.insert({ ...row, reclassification_id: `rc-${randomUUID()}` })).toBe(false)
  expect(yield* repo.exists(checkpoint.checkpoint_id)).toBe(true)
  expect(yield* repo.list(agentId)).toEqual([row])
  expect(yield* repo.list(uniqueId("agt-rc"))).toEqual([])
  // A card gap is the card's fault, not a violation of the agent's.
  expect(yield* risk.violations(agentId, "2026-01-01T00:00:00.000Z")).toHaveLength(violationsBefore - 1)

  const amendment: CardAmendment = {
    amendment_id: `am-${randomUUID()}`,
    agent_id: agentId,
    reclassification_id: row.reclassification_id,
    field_changed: "autonomy_envelope.bounded_actions",
    old_value: null,
    new_value: "reply",
    triggered_by: "reclassification",
    created_by: "user-rc",
    created_at: "2026-11-02T00:00:01.000Z"
  }
  yield* repo.insertAmendment(amendment)
  expect(yield* repo.amendments(agentId)).toEqual([amendment])
})

export const reevaluatedVerdicts = Effect.gen(function* () {
  const repo = yield* ReevaluationRepo
  const queries = yield* AgentQueries
  const sql = yield* SqlClient.SqlClient
  const { agentId, inputs } = yield* committedLog("agt-re", 6)
  expect(yield* repo.reevaluated(agentId, 6)).toEqual({ checkpoints: [], sessions: [] })

  const target = inputs.find((input) => input.checkpoint.verdict === "boundary_violation")!.checkpoint
  const position = inputs.findIndex((input) => input.checkpoint === target)
  yield* queries.reevaluateCheckpoints([
    {
      previous: target.verdict,
      checkpoint: {
        ...target,
        verdict: "clear",
        re_evaluated_at: "2026-11-02T00:00:00.000Z",
        original_verdict: target.verdict
      }
    }
  ])
  // The governance entry that names it, as the governance log files an `aip.reevaluation`.
  const record = { action: "aip.reevaluation", new_state: { changed: [{ checkpoint_id: target.checkpoint_id }] } }
  yield* sql`insert into governance_entries (log_id, idx, leaf_hash, record)
    values (${governanceLogKey(agentGovernanceLog(agentId))}, 3, ${new Uint8Array(32)}, ${JSON.stringify(record)}::json)`
  const found = yield* repo.reevaluated(agentId, 6)
  expect(found.checkpoints).toEqual([
    {
      checkpoint_id: target.checkpoint_id,
      verdict: "clear",
      certified: "boundary_violation",
      analysed: expect.any(Boolean),
      governance_index: 3
    }
  ])
  expect(found.sessions.map((s) => s.session_id)).toEqual([target.session_id])
  // Outside the prefix: not counted.
  expect(yield* repo.reevaluated(agentId, position)).toEqual({ checkpoints: [], sessions: [] })
})

export const exportPages = Effect.gen(function* () {
  const repo = yield* ExportRepo
  const { agentId, inputs } = yield* committedLog("agt-exp", 5)
  const ids = (rows: ReadonlyArray<{ readonly position: number }>) => rows.map((row) => row.position)
  const first = yield* repo.page({ agentId, after: -1, below: 5, limit: 2 })
  expect(ids(first)).toEqual([0, 1])
  expect(first[0]).toMatchObject({ checkpoint: inputs[0]!.checkpoint, trace: inputs[0]!.trace })
  expect(first[0]!.certificate.chain).toEqual(inputs[0]!.attestation.certificate.chain)
  expect(ids(yield* repo.page({ agentId, after: 1, below: 5, limit: 10 }))).toEqual([2, 3, 4])
  // Bounded by the tree head the export ends with, and by time.
  expect(ids(yield* repo.page({ agentId, after: -1, below: 3, limit: 10 }))).toEqual([0, 1, 2])
  expect(
    ids(
      yield* repo.page({
        agentId,
        after: -1,
        below: 5,
        from: inputs[1]!.checkpoint.timestamp,
        to: inputs[3]!.checkpoint.timestamp,
        limit: 10
      })
    )
  ).toEqual([1, 2])
  expect(yield* repo.page({ agentId: uniqueId("agt-exp"), after: -1, below: 5, limit: 10 })).toEqual([])

  const proofs = yield* repo.inclusionProofs(agentId, [0, 4], 5)
  expect(proofs).toHaveLength(2)
  expect(proofs[0]).toHaveLength(3)
  expect(proofs[1]).toHaveLength(1)
})

export const witnessCosignatures = Effect.gen(function* () {
  const repo = yield* WitnessRepo
  const witnessKey = `witness.example+${randomUUID().replaceAll("-", "")}`
  const { agentId } = yield* committedLog("agt-wit", 3)
  const { agentId: refused } = yield* committedLog("agt-wit", 2)
  const dueOf = (agent: string) =>
    Effect.map(repo.due(witnessKey, 100_000), (due) => due.find((log) => log.agent_id === agent))
  expect(yield* dueOf(agentId)).toMatchObject({ agent_id: agentId, tree_size: 3, cosigned_size: 0 })

  const cosignature = {
    agent_id: agentId,
    tree_size: 3,
    witness_key: witnessKey,
    witness_name: "witness.example",
    cosigned_at: 1_790_000_000,
    line: "— witness.example AAAA"
  }
  yield* repo.record(cosignature)
  expect(yield* dueOf(agentId)).toBeUndefined()
  expect(yield* repo.at(agentId, 3)).toEqual([{ ...cosignature, created_at: expect.any(String) }])
  expect(yield* repo.at(agentId, 2)).toEqual([])

  // A failure without the witness's size leaves the log due; with it (a 409), from that size.
  yield* repo.failed(witnessKey, refused, "timeout")
  expect(yield* dueOf(refused)).toMatchObject({ tree_size: 2, cosigned_size: 0 })
  yield* repo.failed(witnessKey, refused, "conflict", 2)
  expect(yield* dueOf(refused)).toBeUndefined()
})

export const anchors = Effect.gen(function* () {
  const repo = yield* AnchorRepo
  const { agentId, inputs } = yield* committedLog("agt-anc", 2)
  const { agentId: hidden } = yield* committedLog("agt-anc", 1)
  yield* claimed(null, [hidden])
  yield* (yield* SqlClient.SqlClient)`update agent_claims set visibility = 'private' where agent_id = ${hidden}`
  const unknown = uniqueId("agt-anc")
  expect(yield* repo.withLogs([agentId, hidden, unknown])).toEqual([agentId])
  const unanchored = (agent: string) =>
    Effect.map(repo.unanchored, (all) => all.find((entry) => entry.agent_id === agent))
  expect(yield* unanchored(agentId)).toEqual({ agent_id: agentId, owner: `agent:${agentId}` })
  expect(yield* unanchored(hidden)).toBeUndefined()

  const anchor = (treeSize: number): NewAnchor => ({
    anchor_id: `anc-${randomUUID()}`,
    kind: "tree_heads",
    chain_id: 84532,
    contract: "0x" + "ab".repeat(20),
    batch_root: "cd".repeat(32),
    leaves: [
      { agent_id: agentId, log_origin: `candor.test/agents/${agentId}`, tree_size: treeSize, root: "ef".repeat(32) }
    ],
    requested_by: "system",
    anchored_at: inputs[1]!.checkpoint.timestamp
  })
  const first = anchor(2)
  yield* repo.insert(first)
  expect(yield* repo.get(first.anchor_id)).toMatchObject({
    ...first,
    status: "pending",
    tx_hash: null,
    block_number: null,
    leaf_count: 1
  })
  expect(yield* unanchored(agentId)).toBeUndefined()
  yield* repo.setTransaction(first.anchor_id, "0x" + "12".repeat(32))
  yield* repo.settle(first.anchor_id, { status: "failed", block_number: null, error: "reverted" })
  expect(yield* repo.get(first.anchor_id)).toMatchObject({ status: "failed", error: "reverted" })
  // A failed anchor does not count.
  expect(yield* unanchored(agentId)).toBeDefined()
  const second = anchor(2)
  yield* repo.insert(second)
  yield* repo.settle(second.anchor_id, { status: "confirmed", block_number: 17, error: null })
  expect(yield* repo.get(second.anchor_id)).toMatchObject({ status: "confirmed", block_number: 17 })
  expect(yield* repo.get(`anc-${randomUUID()}`)).toBeUndefined()

  // Newest first, by cursor; only anchors whose every agent the reader may read.
  const history = yield* repo.history({ agentId, readers: "all", limit: 10, cursor: undefined })
  expect(history.map((a) => a.anchor_id)).toEqual([second.anchor_id, first.anchor_id])
  expect(
    (yield* repo.history({ agentId, readers: "all", limit: 10, cursor: history[0]!.seq })).map((a) => a.anchor_id)
  ).toEqual([first.anchor_id])
  expect(yield* repo.history({ agentId, readers: [agentId], limit: 1, cursor: undefined })).toHaveLength(1)
  expect(yield* repo.history({ agentId, readers: [unknown], limit: 10, cursor: undefined })).toEqual([])
})
