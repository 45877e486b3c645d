/**
 * The event a gateway publishes per response on `<prefix>.events.<partition>.<agent_id>`: the
 * checkpoint and AP-Trace drafts, linked by construction, and how the exchange ended. It holds
 * hashes and metadata only, never prompt, response or thinking text, so security teams may
 * subscribe to it directly. The actors decode every event with this schema before attesting it.
 */
import { Schema } from "effect"
import { IntegrityCheckpoint } from "./Checkpoint.js"
import { EnforcementRecord } from "./EnforcementRecord.js"
import { AgentId, AgentName, SessionId } from "./Ids.js"
import { literalUnion } from "./Literals.js"
import { APTraceDraft } from "./Trace.js"
import { EnforcementMode } from "./Verdict.js"

export const OUTCOME_KINDS = ["complete", "partial", "upstream_error", "timeout", "client_aborted"] as const

export const ExchangeOutcome = Schema.Struct({
  kind: literalUnion(OUTCOME_KINDS, { identifier: "OutcomeKind" }),
  status: Schema.optional(Schema.Number),
  bytes: Schema.NonNegativeInt,
  cause: Schema.optional(Schema.String)
}).annotations({ identifier: "ExchangeOutcome", description: "How one proxied exchange ended" })

export const GatewayEvent = Schema.Struct({
  type: Schema.Literal("gateway.response"),
  agent_id: AgentId,
  /**
   * The request's `x-candor-agent`, as the gateway validated it; absent without one. The worker keeps
   * it as the agent's default name (never in the checkpoint or trace, which are published).
   */
  agent_name: Schema.optionalWith(AgentName, { exact: true }),
  session_id: SessionId,
  provider: Schema.String,
  outcome: ExchangeOutcome,
  checkpoint: IntegrityCheckpoint,
  trace: APTraceDraft
})
  .pipe(
    Schema.filter(
      (event) =>
        (event.checkpoint.agent_id === event.agent_id &&
          event.trace.agent_id === event.agent_id &&
          event.checkpoint.session_id === event.session_id &&
          event.checkpoint.linked_trace_id === event.trace.trace_id) ||
        "the checkpoint and trace must belong to the event's agent and session, and the checkpoint must link the trace"
    )
  )
  .annotations({ identifier: "GatewayEvent", description: "One gateway response: checkpoint and trace drafts" })
export type GatewayEvent = typeof GatewayEvent.Type
/** The JSON form published on the bus. */
export type GatewayEventEncoded = typeof GatewayEvent.Encoded

/**
 * The gateway's encoding of an event it built, equal to `Schema.encodeSync(GatewayEvent)` without
 * re-validating. Every member of the schema encodes to itself (no transformations), so the encoded
 * form is the value; the schema's encoder would only check it again, at some 65 µs per event (seven
 * times its JSON serialisation) on the gateway's publishing path. The worker decodes every event with
 * the schema and dead-letters what does not decode. If a transformation is ever added, this stops
 * compiling (the types part) or `test/adapters/gateway/ResponseEvent.test.ts`, which encodes random
 * events both ways, fails.
 */
export const encodeGatewayEvent = (event: GatewayEvent): GatewayEventEncoded => event

/**
 * An act of enforcement by the gateway (a 403, a nudge injected), published on the agent's event
 * subject like its responses, so the workers store it at least once (deduplicated by `record_id`).
 * `mode` is the enforcement mode the gateway applied, kept beside the record.
 */
export const GatewayEnforcement = Schema.Struct({
  type: Schema.Literal("gateway.enforcement"),
  mode: EnforcementMode,
  record: EnforcementRecord
}).annotations({ identifier: "GatewayEnforcement", description: "One act of enforcement by the gateway" })
export type GatewayEnforcement = typeof GatewayEnforcement.Type

/** What a gateway publishes on an agent's event subject. */
export type GatewayMessage = GatewayEvent | GatewayEnforcement
