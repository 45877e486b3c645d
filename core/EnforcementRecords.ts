/**
 * The gateway's enforcement records (core/schema/EnforcementRecord.ts): a refusal (403) and a nudge
 * injected, built from what the gateway already knows, with the id and time passed in. Pure. Each
 * text is cut to what the schema keeps, so the worker never refuses a record the gateway made (a
 * policy's reason lists the forbidden tools, as many as the request declared).
 */
import type { GatewayBlock } from "./EventData.js"
import { ENFORCEMENT_RECORD_ID_PREFIX, type EnforcementRecord, GATEWAY_ACTOR } from "./schema/EnforcementRecord.js"

/** The longest reason a record keeps (the schema's bound). */
export const MAX_RECORD_REASON = 2000

const bounded = (text: string): string =>
  text.length <= MAX_RECORD_REASON ? text : `${text.slice(0, MAX_RECORD_REASON - 1)}…`

/** `enf-<uuid>`. */
export const enforcementRecordId = (uuid: string): string => `${ENFORCEMENT_RECORD_ID_PREFIX}${uuid}`

/** A 403 the gateway answered: kind `blocked`, the block's rule and reason. */
export const blockedRecord = (block: GatewayBlock, uuid: string, at: Date): EnforcementRecord => ({
  record_id: enforcementRecordId(uuid),
  agent_id: block.agentId,
  kind: "blocked",
  rule: block.rule,
  reason: bounded(block.reason),
  ...(block.checkpointId === null ? {} : { checkpoint_id: block.checkpointId }),
  ...(block.sessionId === null ? {} : { session_id: block.sessionId }),
  actor: GATEWAY_ACTOR,
  created_at: at.toISOString()
})

export interface InjectedNudge {
  readonly agentId: string
  readonly sessionId: string
  /** The enforcement mode that left the nudge (`nudge`, or `enforce` for a stream it could not block). */
  readonly mode: string
  /** The violating checkpoint the nudge names, when it names one. */
  readonly checkpointId: string | undefined
}

/** A nudge injected into a request: kind `nudged`, for the boundary violation of the checkpoint it names. */
export const nudgedRecord = (nudge: InjectedNudge, uuid: string, at: Date): EnforcementRecord => ({
  record_id: enforcementRecordId(uuid),
  agent_id: nudge.agentId,
  kind: "nudged",
  rule: nudge.mode,
  reason: "boundary_violation",
  ...(nudge.checkpointId === undefined ? {} : { checkpoint_id: nudge.checkpointId }),
  session_id: nudge.sessionId,
  actor: GATEWAY_ACTOR,
  created_at: at.toISOString()
})

/** What an MCP gateway decision names (docs/mcp.md): the rule, why, and the agent's session if any. */
export interface McpDecision {
  readonly agentId: string
  readonly rule: string
  readonly reason: string
}

/**
 * A `tools/call` the policy found fault with under `warn` (forwarded, recorded: kind `warned`), or a
 * tool definition that changed (kind `tool_changed`, rule `mcp_pin`): issue 28.
 */
export const mcpRecord = (
  kind: "warned" | "tool_changed",
  decision: McpDecision,
  uuid: string,
  at: Date
): EnforcementRecord => ({
  record_id: enforcementRecordId(uuid),
  agent_id: decision.agentId,
  kind,
  rule: decision.rule,
  reason: bounded(decision.reason),
  actor: GATEWAY_ACTOR,
  created_at: at.toISOString()
})
