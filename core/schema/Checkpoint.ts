/**
 * The Integrity Checkpoint: one judged thinking block. The thinking text itself never appears,
 * only its hash.
 */
import { Schema } from "effect"
import { literalUnion } from "./Literals.js"
import { Concern, ConsultationDepth } from "./Concern.js"
import { AgentId, CardId, CheckpointId, DateTimeString, Hex32, SessionId, ThinkingBlockHash, TraceId } from "./Ids.js"
import { SyntheticReason, UnanalysedReason, Verdict } from "./Verdict.js"

const optional = <S extends Schema.Schema.Any>(schema: S) => Schema.optionalWith(schema, { exact: true })

/**
 * The AIP version the analysis implements (the specification references AIP 0.1.5): what the
 * webhooks' `X-AIP-Version` says, so a receiver of the AIP reference knows the rules its verdicts follow.
 */
export const AIP_VERSION = "0.1.5"

export const ConscienceContext = Schema.Struct({
  values_checked: Schema.Array(Schema.String),
  conflicts: Schema.Array(Schema.String),
  supports: Schema.Array(Schema.String),
  considerations: Schema.Array(Schema.String),
  consultation_depth: ConsultationDepth
}).annotations({ identifier: "ConscienceContext", description: "Which conscience values the judge weighed, and how" })
export type ConscienceContext = typeof ConscienceContext.Type

export const WindowPosition = Schema.Struct({
  index: Schema.NonNegativeInt.annotations({ description: "0-based position in the session window" }),
  window_size: Schema.NonNegativeInt.annotations({ description: "Size of the window when this checkpoint entered it" })
}).annotations({ identifier: "WindowPosition" })
export type WindowPosition = typeof WindowPosition.Type

const TokenCount = Schema.NonNegativeInt

export const ANALYSIS_SCOPES = ["thinking", "output", "thinking_and_output"] as const
export const AnalysisScope = literalUnion(ANALYSIS_SCOPES, { identifier: "AnalysisScope" })

export const AnalysisMetadata = Schema.Struct({
  analysis_model: Schema.String.annotations({
    description: "Judge that produced the verdict: `rules` or `<provider>:<model>`"
  }),
  analysis_duration_ms: Schema.NonNegative,
  thinking_tokens_original: TokenCount,
  thinking_tokens_analyzed: TokenCount,
  truncated: Schema.Boolean,
  /** `null` when nothing was extracted (non-reasoning model), as there is no confidence to report. */
  extraction_confidence: Schema.NullOr(Schema.Number.pipe(Schema.between(0, 1))),
  analysis_scope: optional(AnalysisScope),
  output_tokens_original: optional(TokenCount),
  output_tokens_analyzed: optional(TokenCount),
  /** The verdict the judge proposed, when it differs from (or before) the deterministic derivation. */
  llm_verdict: optional(Verdict),
  /** The stream ended early (client disconnect, upstream error, timeout): the judge saw a prefix. */
  partial: optional(Schema.Boolean),
  /** Set with `synthetic_reason: "unanalysed"`: why the answer was not analysed. */
  unanalysed_reason: optional(UnanalysedReason)
}).annotations({ identifier: "AnalysisMetadata", description: "How the analysis was done" })
export type AnalysisMetadata = typeof AnalysisMetadata.Type

export const IntegrityCheckpoint = Schema.Struct({
  checkpoint_id: CheckpointId,
  agent_id: AgentId,
  card_id: CardId,
  session_id: SessionId,
  timestamp: DateTimeString,
  thinking_block_hash: ThinkingBlockHash,
  output_block_hash: optional(Hex32),
  provider: Schema.String,
  model: Schema.String,
  verdict: Verdict,
  concerns: Schema.Array(Concern),
  reasoning_summary: Schema.String,
  conscience_context: ConscienceContext,
  window_position: WindowPosition,
  analysis_metadata: AnalysisMetadata,
  linked_trace_id: Schema.NullOr(TraceId),
  re_evaluated_at: Schema.NullOr(DateTimeString),
  original_verdict: Schema.NullOr(Verdict),
  synthetic: optional(Schema.Boolean),
  synthetic_reason: optional(SyntheticReason),
  cross_validation_warnings: optional(Schema.Array(Schema.String))
}).annotations({
  identifier: "IntegrityCheckpoint",
  description: "The verdict on one thinking block; the block itself is never stored, only its SHA-256"
})
export type IntegrityCheckpoint = typeof IntegrityCheckpoint.Type
