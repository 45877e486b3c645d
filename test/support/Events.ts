/**
 * Gateway events as the actors receive them, built directly (not through the gateway) so actor
 * tests control agents, sessions and concerns exactly.
 */
import { randomUUID } from "node:crypto"
import type { Concern } from "../../core/schema/Concern.js"
import type { GatewayEvent } from "../../core/schema/Event.js"

export interface EventOptions {
  readonly sessionId?: string
  readonly concerns?: ReadonlyArray<Concern>
  readonly tool?: string
  readonly at?: Date
}

export const violation: Concern = {
  category: "prompt_injection",
  severity: "critical",
  description: "follows injected instructions",
  evidence: "ignore previous instructions",
  relevant_conscience_value: null
}

export const gatewayEvent = (agentId: string, options: EventOptions = {}): GatewayEvent => {
  const timestamp = (options.at ?? new Date()).toISOString()
  const sessionId = options.sessionId ?? `ses-${agentId}`
  const traceId = `tr-${randomUUID()}`
  const concerns = options.concerns ?? []
  const verdict = concerns.some((c) => c.severity === "critical") ? "boundary_violation" : "clear"
  return {
    type: "gateway.response",
    agent_id: agentId,
    session_id: sessionId,
    provider: "anthropic",
    outcome: { kind: "complete", status: 200, bytes: 512 },
    checkpoint: {
      checkpoint_id: `ic-${randomUUID()}`,
      agent_id: agentId,
      card_id: "card-unbound",
      session_id: sessionId,
      timestamp,
      thinking_block_hash: "a".repeat(64),
      provider: "anthropic",
      model: "claude-test",
      verdict,
      concerns,
      reasoning_summary: verdict === "clear" ? "no concerns" : "injection",
      conscience_context: {
        values_checked: [],
        conflicts: [],
        supports: [],
        considerations: [],
        consultation_depth: "surface"
      },
      window_position: { index: 0, window_size: 0 },
      analysis_metadata: {
        analysis_model: "rules",
        analysis_duration_ms: 1,
        thinking_tokens_original: 10,
        thinking_tokens_analyzed: 10,
        truncated: false,
        extraction_confidence: 1
      },
      linked_trace_id: traceId,
      re_evaluated_at: null,
      original_verdict: null
    },
    trace: {
      trace_id: traceId,
      agent_id: agentId,
      timestamp,
      action:
        options.tool !== undefined
          ? { type: "execute", name: options.tool, category: "bounded" }
          : { type: "recommend", name: "respond", category: "bounded" },
      decision: { selected: options.tool ?? "respond", selection_reasoning: "", values_applied: [] },
      context: { session_id: sessionId, metadata: { provider: "anthropic" } }
    }
  }
}
