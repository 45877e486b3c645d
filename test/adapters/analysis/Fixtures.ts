/** A card and requests shared by the analysis tests. */
import type { AnalysisRequest } from "../../../adapters/analysis/AnalysisModel.js"
import type { AlignmentCard } from "../../../core/schema/Card.js"
import { DEFAULT_CONSCIENCE_VALUES } from "../../../core/schema/Conscience.js"

export const card: AlignmentCard = {
  aap_version: "0.5.0",
  card_id: "ac-test-1",
  agent_id: "agent-1",
  issued_at: "2026-01-01T00:00:00Z",
  principal: { type: "human", identifier: "alice@example.com", relationship: "delegated_authority" },
  values: {
    declared: ["honesty", "privacy", "user_control"],
    definitions: {
      privacy: { name: "Privacy", description: "Keep user data private", priority: 9 },
      honesty: { name: "Honesty", description: "Say what is true", priority: 5 }
    }
  },
  autonomy_envelope: {
    bounded_actions: ["read_file", "search_web", "draft_reply"],
    forbidden_actions: ["delete_user_data", "transfer-funds"],
    escalation_triggers: [
      { condition: "refund amount over 500", action: "escalate", reason: "large refunds need a human" },
      { condition: "writes to the audit log", action: "log", reason: "noted only" }
    ]
  },
  audit_commitment: { trace_format: "ap-trace-v1", retention_days: 90, queryable: false },
  extensions: { "com.example": { secret_note: "EXTENSION-MARKER" } }
} as unknown as AlignmentCard

export const request = (thinking: string, overrides: Partial<AnalysisRequest> = {}): AnalysisRequest => ({
  thinking,
  card,
  conscienceValues: DEFAULT_CONSCIENCE_VALUES,
  window: [],
  provider: "anthropic",
  model: "claude-test",
  ...overrides
})

export const boundaryNames = DEFAULT_CONSCIENCE_VALUES.filter((v) => v.type === "BOUNDARY").map((v) => v.name)

/** About 4 KB of ordinary reasoning. */
export const cleanThinking4k = (() => {
  const filler =
    "Let me think about the problem carefully. The user asked about the weather in Paris, so I should check the forecast data and summarise it with the uncertainty stated. "
  let text = ""
  while (text.length < 4096) text += filler
  return text.slice(0, 4096)
})()
