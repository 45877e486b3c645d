/**
 * The Integrity Checkpoint: one judged thinking block. The thinking text itself never appears,
 * only its hash.
 */
import { Schema } from "effect"
import { literalUnion } from "./Literals.js"
import { Concern, ConsultationDepth } from "./Concern.js"
import { ConscienceSeverity, ConscienceValueType } from "./Conscience.js"
import { AgentId, CardId, CheckpointId, DateTimeString, Hex32, SessionId, ThinkingBlockHash, TraceId } from "./Ids.js"
import { SyntheticReason, UnanalysedReason, Verdict } from "./Verdict.js"

const optional = <S extends Schema.Schema.Any>(schema: S) => Schema.optionalWith(schema, { exact: true })

/**
 * The AIP version the analysis implements (the specification references AIP 0.1.5): what the
 * webhooks' `X-AIP-Version` says, so a receiver of the AIP reference knows the rules its verdicts follow.
 */
export const AIP_VERSION = "0.1.5"

/** One value a layer contributed to the values in force, without its content (the card's owner has it). */
export const LayerValue = Schema.Struct({
  type: ConscienceValueType,
  name: Schema.String,
  severity: optional(ConscienceSeverity)
}).annotations({ identifier: "LayerValue" })
export type LayerValue = typeof LayerValue.Type

/** The values each layer put in force (a value another layer already put in force is not listed). */
export const ConscienceLayers = Schema.Struct({
  defaults: Schema.Array(LayerValue),
  organization: Schema.Array(LayerValue),
  agent: Schema.Array(LayerValue)
}).annotations({ identifier: "ConscienceLayers", description: "The conscience values in force, by layer" })
export type ConscienceLayers = typeof ConscienceLayers.Type

/**
 * How `core/ConscienceResolution.ts` combined the layers. In every mode a name is in force once and
 * the earlier layer keeps it (defaults, then organization, then agent), except that an organization
 * value replaces a default of the same name.
 * - `no_organization`: the agent is in no organization: defaults, then the agent's values;
 * - `organization_disabled`: its organization turned its layer off: as `no_organization`;
 * - `augment`: defaults, then the organization's active values, then the agent's;
 * - `replace`: the organization's active values instead of the defaults, then the agent's.
 */
export const RESOLUTION_MODES = ["no_organization", "organization_disabled", "augment", "replace"] as const
export const ResolutionMode = literalUnion(RESOLUTION_MODES, {
  identifier: "ResolutionMode",
  description: "How the defaults, organization and agent layers of conscience values were combined"
})
export type ResolutionMode = typeof ResolutionMode.Type

export const ConscienceContext = Schema.Struct({
  /** `TYPE:name` of every value the judge applied (docs/formats.md says what each judge applies). */
  values_checked: Schema.Array(Schema.String),
  /** `TYPE:name` of the applied values a concern names. */
  conflicts: Schema.Array(Schema.String),
  /** `TYPE:name` of the applied values the judge reports the reasoning upholds (the LLM judge only). */
  supports: Schema.Array(Schema.String),
  /** The judge's short notes on how the values bore on the reasoning (the LLM judge only). */
  considerations: Schema.Array(Schema.String),
  consultation_depth: ConsultationDepth,
  /** Added: absent on checkpoints recorded before; set by the workers with the resolution `values_hash` binds. */
  layers: optional(ConscienceLayers),
  resolution_mode: optional(ResolutionMode)
}).annotations({ identifier: "ConscienceContext", description: "Which conscience values the judge weighed, and how" })
export type ConscienceContext = typeof ConscienceContext.Type

export const WindowPosition = Schema.Struct({
  index: Schema.NonNegativeInt.annotations({ description: "0-based position in the session window" }),
  window_size: Schema.NonNegativeInt.annotations({ description: "Size of the window when this checkpoint entered it" })
}).annotations({ identifier: "WindowPosition" })
export type WindowPosition = typeof WindowPosition.Type

const TokenCount = Schema.NonNegativeInt

/**
 * What the judge read. `tool_result`: the text of a tool's result the agent was about to read (issue
 * 28): its checkpoint is in the agent's chain and log but never counts toward its reputation, AIP
 * drift or auto-containment (a web page an agent reads must not get the agent paused).
 */
export const ANALYSIS_SCOPES = ["thinking", "output", "thinking_and_output", "tool_result"] as const
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

export const CheckpointList = Schema.Struct({
  checkpoints: Schema.Array(IntegrityCheckpoint).annotations({ description: "Newest first" }),
  total: Schema.NonNegativeInt.annotations({ description: "Checkpoints matching the filters, all pages" }),
  limit: Schema.Int,
  offset: Schema.NonNegativeInt
}).annotations({ identifier: "CheckpointList" })
