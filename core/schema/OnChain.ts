/**
 * On-chain anchoring as requested and as answered (docs/on-chain.md): tree-head anchors and score
 * publications, each one transaction recording a batch root (core/AnchorBatch.ts) in the
 * CandorAnchor contract, with the leaves and proofs a third party checks it with.
 */
import { Schema } from "effect"
import { AgentId, DateTimeString, Hex32 } from "./Ids.js"
import { literalUnion } from "./Literals.js"
import { Grade, Score } from "./Reputation.js"

const BYTES32 = /^0x[0-9a-f]{64}$/

/** An anchor's id: the contract's key for it, 32 bytes as 0x and 64 lowercase hex characters. */
export const AnchorId = Schema.String.pipe(
  Schema.pattern(BYTES32, { message: () => "must be 0x and 64 lowercase hex characters" })
).annotations({ identifier: "AnchorId", description: "0x and 64 lowercase hex characters: the contract's key" })

export const TxHash = Schema.String.pipe(Schema.pattern(BYTES32)).annotations({
  identifier: "TxHash",
  description: "Transaction hash, 0x and 64 lowercase hex characters"
})

export const ChainAddress = Schema.String.pipe(Schema.pattern(/^0x[0-9a-fA-F]{40}$/)).annotations({
  identifier: "ChainAddress",
  description: "An Ethereum address"
})

export const ANCHOR_KINDS = ["tree_heads", "scores"] as const
export const AnchorKind = literalUnion(ANCHOR_KINDS, { identifier: "AnchorKind" })

export const ANCHOR_STATUSES = ["pending", "confirmed", "failed"] as const
export const AnchorStatus = literalUnion(ANCHOR_STATUSES, { identifier: "AnchorStatus" })
export type AnchorStatus = typeof AnchorStatus.Type

/** `chain` in a request: the CAIP-2 name (`eip155:<id>`) or the chain id, as a number or a string. */
export const ChainSelector = Schema.Union(Schema.String, Schema.Int).annotations({
  description: "The configured chain only: `eip155:<chain id>` or the chain id"
})

/** Refused outright: Candor publishes the scores it computed, never numbers from a caller. */
const Refused = (field: string) =>
  Schema.optional(
    Schema.Never.annotations({
      message: () =>
        `not accepted: Candor publishes the score it computed and serves at GET /v1/reputation/{agent_id}; send agent_ids only (${field})`
    })
  )

export const AnchorRootRequest = Schema.Struct({
  agent_ids: Schema.optional(Schema.Array(AgentId)).annotations({
    description: "1 to 200 agents the caller may write (default: every such agent with a log)"
  }),
  chain: Schema.optional(ChainSelector)
}).annotations({ identifier: "AnchorRootRequest" })

export const PublishScoresRequest = Schema.Struct({
  agent_ids: Schema.Array(AgentId).annotations({ description: "1 to 200 agents the caller may write" }),
  chain: Schema.optional(ChainSelector),
  score: Refused("score"),
  scores: Refused("scores"),
  grade: Refused("grade")
}).annotations({ identifier: "PublishScoresRequest" })

export const TreeHeadLeaf = Schema.Struct({
  agent_id: AgentId,
  log_origin: Schema.String,
  tree_size: Schema.NonNegativeInt,
  root: Hex32
}).annotations({ identifier: "AnchorTreeHeadLeaf" })

export const ScoreLeaf = Schema.Struct({
  agent_id: AgentId,
  score: Score,
  grade: Grade,
  computed_over: Schema.Struct({ tree_size: Schema.NonNegativeInt, root: Schema.NullOr(Hex32) })
}).annotations({ identifier: "AnchorScoreLeaf" })

/** Where and how a batch was recorded. */
const anchorFields = {
  anchor_id: AnchorId,
  kind: AnchorKind,
  chain: Schema.String.annotations({ description: "CAIP-2: `eip155:<chain_id>`" }),
  chain_id: Schema.Int,
  contract: ChainAddress,
  tx_hash: Schema.NullOr(TxHash).annotations({ description: "null when the transaction could not be sent" }),
  block_number: Schema.NullOr(Schema.NonNegativeInt).annotations({ description: "null until mined" }),
  batch_root: Hex32,
  leaf_count: Schema.Int.pipe(Schema.between(1, 200)),
  status: AnchorStatus,
  error: Schema.NullOr(Schema.String).annotations({ description: "Why a failed anchor failed" }),
  anchored_at: DateTimeString.annotations({ description: "When Candor built the batch and sent it" })
}

export const TreeHeadAnchor = Schema.Struct({
  ...anchorFields,
  agents: Schema.Array(
    Schema.Struct({
      agent_id: AgentId,
      tree_size: Schema.NonNegativeInt,
      root: Hex32,
      leaf_index: Schema.NonNegativeInt
    })
  )
}).annotations({ identifier: "TreeHeadAnchor" })

export const ScorePublication = Schema.Struct({
  ...anchorFields,
  scores_published: Schema.Int,
  proofs: Schema.Array(
    Schema.Struct({
      ...ScoreLeaf.fields,
      leaf_index: Schema.NonNegativeInt,
      proof: Schema.Array(Hex32).annotations({ description: "RFC 9162 inclusion proof, bottom-up" })
    })
  )
}).annotations({ identifier: "ScorePublication" })

/** An anchor of either kind as stored, with its leaves (history and status). */
export const AnchorSummary = Schema.Struct({
  ...anchorFields,
  agent_ids: Schema.Array(AgentId).annotations({ description: "In leaf order" })
}).annotations({ identifier: "AnchorSummary" })
export type AnchorSummary = typeof AnchorSummary.Type

export const AnchorStatusResponse = Schema.Struct({
  ...anchorFields,
  confirmations: Schema.NonNegativeInt.annotations({
    description: "Blocks since the one it was mined in, itself included; 0 until mined"
  }),
  receipt: Schema.NullOr(
    Schema.Struct({
      block_number: Schema.NonNegativeInt,
      block_hash: TxHash,
      status: literalUnion(["success", "reverted"]),
      from: ChainAddress,
      to: Schema.NullOr(ChainAddress),
      gas_used: Schema.String,
      effective_gas_price: Schema.String
    })
  )
}).annotations({ identifier: "AnchorStatus" })

export const AnchorHistory = Schema.Struct({
  agent_id: Schema.NullOr(AgentId),
  anchors: Schema.Array(AnchorSummary),
  next_cursor: Schema.NullOr(Schema.String).annotations({ description: "Pass as `cursor` for the next page" })
}).annotations({ identifier: "AnchorHistory" })

export const AnchorProof = Schema.Struct({
  anchor_id: AnchorId,
  kind: AnchorKind,
  agent_id: AgentId,
  chain: Schema.String,
  chain_id: Schema.Int,
  contract: ChainAddress,
  tx_hash: Schema.NullOr(TxHash),
  leaf: Schema.Union(TreeHeadLeaf, ScoreLeaf),
  leaf_hex: Schema.String.annotations({ description: "The leaf's bytes (tag ‖ 0x00 ‖ JCS), hex" }),
  leaf_hash: Hex32,
  leaf_index: Schema.NonNegativeInt,
  leaf_count: Schema.Int,
  proof: Schema.Array(Hex32),
  batch_root: Hex32,
  proof_valid: Schema.Boolean.annotations({ description: "The proof takes the leaf to batch_root" }),
  on_chain: Schema.Struct({
    root: Schema.NullOr(Hex32).annotations({ description: "What the contract holds now; null when nothing" }),
    leaf_count: Schema.NullOr(Schema.Int),
    timestamp: Schema.NullOr(Schema.Int).annotations({ description: "Block time it was recorded, Unix seconds" }),
    matches: Schema.Boolean.annotations({
      description: "The contract holds batch_root with leaf_count under anchor_id"
    })
  }),
  verified: Schema.Boolean.annotations({ description: "proof_valid and on_chain.matches" })
}).annotations({ identifier: "AnchorProof" })
