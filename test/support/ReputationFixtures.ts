/**
 * Reputations for the badge and page tests, computed with core/Reputation.ts (so the components add
 * up to the score as in production) and decoded with the published schema: a rated agent, one
 * still building, and one whose every string tries to break out of the HTML.
 */
import { Schema } from "effect"
import { sha256 } from "../../core/Hash.js"
import { formatCheckpoint, signNote } from "../../core/Note.js"
import { computeReputation, NO_COHERENCE, type ReputationTally } from "../../core/Reputation.js"
import { AgentReputation, type ReputationHistoryItem } from "../../core/schema/Reputation.js"
import { signingKeyFromSeed } from "../../core/Signing.js"
import type { PageVerification, ReputationPageInput } from "../../adapters/http/ReputationPage.js"

export const COMPUTED_AT = "2026-03-31T12:00:00Z"
const DAY = 86_400_000
const at = (daysBefore: number, hours = 0) =>
  new Date(Date.parse(COMPUTED_AT) - daysBefore * DAY - hours * 3_600_000).toISOString()

const key = signingKeyFromSeed(new Uint8Array(32).fill(7))
if (key === undefined) throw new Error("fixture key")

const treeHead = (agentId: string, size: number) => {
  const root = sha256(new TextEncoder().encode(`${agentId}/${size}`))
  const origin = `candor.example/agents/${agentId}`
  const note = signNote(formatCheckpoint({ origin, size, root, extensions: [] }), { name: "candor.example", key })
  return { root: Buffer.from(root).toString("hex"), note }
}

const reputationOf = (
  agentId: string,
  tally: ReputationTally,
  trend: number | null,
  overrides: Partial<AgentReputation> = {}
): AgentReputation => {
  const result = computeReputation(tally, NO_COHERENCE, new Date(COMPUTED_AT))
  const head = treeHead(agentId, tally.certified)
  return Schema.decodeUnknownSync(AgentReputation)({
    agent_id: agentId,
    ...result,
    computed_at: COMPUTED_AT,
    computed_over: { tree_size: tally.certified, root: head.root, checkpoint: head.note },
    trend_30d: trend,
    visibility: "public",
    ...overrides
  })
}

export const ratedAgent = reputationOf(
  "agent-rated-7",
  {
    certified: 1320,
    analysed: 1200,
    analysed_clear: 1050,
    long_sessions: 60,
    stable_sessions: 51,
    violation_sessions: [{ session_id: "s-9", last_violation_at: at(3) }]
  },
  14
)

export const buildingAgent = reputationOf(
  "agent-new-2",
  {
    certified: 30,
    analysed: 23,
    analysed_clear: 23,
    long_sessions: 2,
    stable_sessions: 2,
    violation_sessions: []
  },
  null
)

/** A valid AgentId (no whitespace, ≤ 256 characters) that is also markup. */
export const TAMPERED_ID = `<script>alert("id")</script><img/src=x/onerror=alert(1)>'&amp;`

const tamperedBase = reputationOf(
  TAMPERED_ID,
  {
    certified: 80,
    analysed: 70,
    analysed_clear: 60,
    long_sessions: 3,
    stable_sessions: 3,
    violation_sessions: []
  },
  -11
)
export const tamperedAgent: AgentReputation = {
  ...tamperedBase,
  tier: `</div><script>alert("tier")</script>`,
  components: tamperedBase.components.map((c, i) =>
    i === 0 ? { ...c, label: `<b>bold</b>"`, inputs: { ...c.inputs, note: "</span><script>alert(2)</script>" } } : c
  ),
  computed_over: {
    ...tamperedBase.computed_over,
    checkpoint: `candor.example/agents/x\n80\n</pre><script>alert("sth")</script>\n\n— candor.example AAAA\n`
  }
}

/** Ninety days of history ending at COMPUTED_AT: several recomputations a day, a weekly snapshot. */
export const historyOf = (finalScore: number, days = 90): ReadonlyArray<ReputationHistoryItem> =>
  Array.from({ length: days }, (_, d) => days - 1 - d).flatMap((daysBefore) => {
    const score = Math.max(0, Math.min(1000, Math.round(finalScore - daysBefore * 0.4 + 12 * Math.sin(daysBefore / 6))))
    const item = (hours: number, kind: ReputationHistoryItem["kind"]): ReputationHistoryItem => ({
      score: hours === 0 ? score : Math.max(0, score - 5),
      grade: score >= 800 ? "AA" : score >= 700 ? "A" : score >= 600 ? "BBB" : "BB",
      confidence: "medium",
      checkpoint_count: 1200 - daysBefore * 5,
      tree_size: 1320 - daysBefore * 5,
      kind,
      computed_at: at(daysBefore, hours)
    })
    return daysBefore % 7 === 0 ? [item(0, "weekly_snapshot"), item(6, "recomputation")] : [item(0, "recomputation")]
  })

const verified = (reputation: AgentReputation): PageVerification => ({
  chain_valid: true,
  signed_tree_head_valid: true,
  tree_size: reputation.computed_over.tree_size,
  root: reputation.computed_over.root,
  signed_tree_head: reputation.computed_over.checkpoint
})

export const pageInputs = (
  apiBase: string
): Readonly<Record<"rated" | "building" | "tampered", ReputationPageInput>> => ({
  rated: { reputation: ratedAgent, history: historyOf(ratedAgent.score), verification: verified(ratedAgent), apiBase },
  building: { reputation: buildingAgent, history: historyOf(buildingAgent.score, 5), verification: null, apiBase },
  tampered: {
    reputation: tamperedAgent,
    history: historyOf(tamperedAgent.score, 20),
    verification: { ...verified(tamperedAgent), chain_valid: false },
    apiBase
  }
})
