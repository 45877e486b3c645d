/**
 * Checkpoints of a tool's result (issue 28: `analysis_metadata.analysis_scope: "tool_result"`, its
 * certificate's `claims.analysis_scope`, its trace's `context.metadata.analysis_scope`): in the
 * agent's chain and log like any checkpoint, but judging what the agent read, not what it did. So
 * they count toward none of its reputation, AIP and AAP drift, nor the violation streak of
 * auto-containment: a web page an agent reads must not get the agent paused. Every counter that
 * skips them reads this module, so the workers and the offline verifier agree.
 */
import type { AnalysisMetadata } from "./schema/Checkpoint.js"

export const TOOL_RESULT_SCOPE = "tool_result"

export const isToolResultCheckpoint = (checkpoint: {
  readonly analysis_metadata: Pick<AnalysisMetadata, "analysis_scope">
}): boolean => checkpoint.analysis_metadata.analysis_scope === TOOL_RESULT_SCOPE

export const isToolResultCertificate = (certificate: {
  readonly claims: { readonly analysis_scope?: string | undefined }
}): boolean => certificate.claims.analysis_scope === TOOL_RESULT_SCOPE

export const isToolResultTrace = (trace: {
  readonly context?: { readonly metadata?: Readonly<Record<string, unknown>> | null | undefined } | null | undefined
}): boolean => trace.context?.metadata?.["analysis_scope"] === TOOL_RESULT_SCOPE
