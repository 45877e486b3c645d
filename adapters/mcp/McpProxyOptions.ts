/**
 * The MCP gateway's settings (McpProxy.ts), and their defaults: what the process configures
 * (src/Serve.ts) and the tests and benchmarks override.
 */
import type { EvidenceRedactionMode } from "../../core/schema/EvidenceRedaction.js"
import { DEFAULT_PREFIX } from "../bus/Subjects.js"
import { type ContainedRefusalLimits, defaultContainedRefusalLimits } from "../gateway/ContainedRefusals.js"
import { DEFAULT_ANALYSIS_TIMEOUT_MS } from "../gateway/Judging.js"
import { defaultToolResultMemoryLimits, type ToolResultMemoryLimits } from "../gateway/ToolResultMemory.js"
import { defaultHeldCallLimits, type HeldCallLimits } from "./HeldCalls.js"

export interface McpProxyOptions {
  /** `CANDOR_MCP_ALLOW_PRIVATE`: servers on private addresses and plain http (development, tests). */
  readonly allowPrivate: boolean
  readonly subjectPrefix: string
  /** Largest POST body read (413 above): MCP requests are small; 4 MiB leaves room for large arguments. */
  readonly maxRequestBytes: number
  /** Largest answer message read on the side; a larger one passes, counted unreadable (not pinned). */
  readonly maxMessageBytes: number
  readonly containedRefusals: ContainedRefusalLimits
  /** How long a server may take to answer with headers. Bodies (SSE streams) have no deadline. */
  readonly headersTimeoutMs: number
  /** The judge's deadline for a tool result (as the LLM gateway's `ANALYSIS_TIMEOUT_MS`). */
  readonly analysisTimeoutMs: number
  readonly evidenceRedaction: EvidenceRedactionMode
  /** The tool results remembered as judged, per agent and overall (ToolResultMemory.ts). */
  readonly toolResultMemory: ToolResultMemoryLimits
  /** Calls held for approval at once, per agent and overall (HeldCalls.ts): each keeps a connection open. */
  readonly heldCalls: HeldCallLimits
  /** How often a held call's client gets `notifications/progress` (docs/approvals.md: every 15 s). */
  readonly progressIntervalMs: number
}

export const defaultMcpProxyOptions: McpProxyOptions = {
  allowPrivate: false,
  subjectPrefix: DEFAULT_PREFIX,
  maxRequestBytes: 4 * 1024 * 1024,
  maxMessageBytes: 4 * 1024 * 1024,
  containedRefusals: defaultContainedRefusalLimits,
  headersTimeoutMs: 60_000,
  analysisTimeoutMs: DEFAULT_ANALYSIS_TIMEOUT_MS,
  evidenceRedaction: "none",
  toolResultMemory: defaultToolResultMemoryLimits,
  heldCalls: defaultHeldCallLimits,
  progressIntervalMs: 15_000
}
