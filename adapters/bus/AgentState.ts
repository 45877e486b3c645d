/**
 * What the gateway must know about an agent before forwarding: its enforcement mode, what to do when
 * analysis fails, whether it is contained, its tool policy, the card and conscience values its
 * reasoning is judged against, a nudge waiting for its next request, and when each of its tools was
 * first seen (the policy's grace period, ToolSightings.ts); and about a provider key,
 * whether it is contained (every agent of the key, `KeySettings`). The actors own this state
 * and publish it (KV `candor-agent-state`); the gateway reads a local copy. `layerMemory` is that
 * copy for the embedded default and for tests.
 *
 * Settings are plain JSON (the KV stores them as such): absent optional members mean "none". The
 * `AgentSettings` schema is that stored format; readers decode it, never cast it.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as PubSub from "effect/PubSub"
import type * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import { AlignmentCard } from "../../core/schema/Card.js"
import { ConscienceValue } from "../../core/schema/Conscience.js"
import { ContainmentState } from "../../core/schema/Containment.js"
import { EvidenceRedactionMode } from "../../core/schema/EvidenceRedaction.js"
import { Policy } from "../../core/schema/Policy.js"
import { GatewayTransaction } from "../../core/schema/ScopedTransaction.js"
import { EnforcementMode, FailurePolicy } from "../../core/schema/Verdict.js"
import type { BusError } from "./BusError.js"
import { ToolSightingsCopy } from "./ToolSightings.js"

export const AgentSettings = Schema.Struct({
  mode: EnforcementMode,
  failurePolicy: FailurePolicy,
  /** Paused or killed (the gateway refuses every request with 403 `containment_error`); undefined: active. */
  containment: Schema.UndefinedOr(ContainmentState),
  /** The tool policy in force (the organization's and the agent's, merged); none: no evaluation. */
  policy: Schema.optional(Policy),
  /**
   * The agent's open scoped transactions (docs/transactions.md), as the API last pushed them: a
   * request naming one (`X-Transaction-Id`) is evaluated against `policy` narrowed by it. One that
   * has expired may still be listed until the next push; the gateway checks `expires_at` itself.
   */
  transactions: Schema.optional(Schema.Array(GatewayTransaction)),
  /** The active Alignment Card, for the judge and the policy's card actions. */
  card: Schema.optional(AlignmentCard),
  /** The active card's id, for the checkpoint draft (the card's own `card_id` when `card` is set). */
  cardId: Schema.optional(Schema.String),
  /** The resolved conscience values; none: the defaults (`DEFAULT_CONSCIENCE_VALUES`). */
  conscienceValues: Schema.optional(Schema.Array(ConscienceValue)),
  /**
   * The agent's organization (its claim), named by the gateway's events; none: personal or unclaimed.
   * Written with the resolved policy (the API's PolicyPropagation), which every claim change pushes.
   */
  orgId: Schema.optional(Schema.String),
  /**
   * The agent's organization's evidence redaction (`PUT /v1/orgs/{org_id}/evidence-redaction`),
   * pushed with the policy; none: `none`. The gateway applies the stricter of it and the deployment's.
   */
  evidenceRedaction: Schema.optional(EvidenceRedactionMode),
  /**
   * Auto-containment's threshold. The gateways do not act on it; it is shared so that changing it
   * is a settings change like the others, which tells the workers to reload the agent's context.
   */
  autoContainmentThreshold: Schema.optional(Schema.Number)
})
export interface AgentSettings extends Schema.Schema.Type<typeof AgentSettings> {}

/** An unknown agent: observe, fail open (Mnemom's default), not contained. */
export const defaultSettings: AgentSettings = { mode: "observe", failurePolicy: "fail_open", containment: undefined }

/** What an MCP agent token opens: its agent, and the organization whose servers it may reach. */
export const McpTokenGrant = Schema.Struct({ token_id: Schema.String, agent_id: Schema.String, org_id: Schema.String })
export interface McpTokenGrant extends Schema.Schema.Type<typeof McpTokenGrant> {}

/** A registered MCP server as the gateway needs it. */
export const McpServerEntry = Schema.Struct({ org_id: Schema.String, url: Schema.String })
export interface McpServerEntry extends Schema.Schema.Type<typeof McpServerEntry> {}

/**
 * A server's tool pins (core/ToolDefinitionPin.ts): `pinned`, tool name → the definition hash
 * first listed (or last accepted); `changed`, tool name → a listed hash that differs from the pin,
 * until an Owner or Admin accepts it. At most `MAX_PINNED_TOOLS` names each.
 */
export const McpToolPins = Schema.Struct({
  pinned: Schema.Record({ key: Schema.String, value: Schema.String }),
  changed: Schema.Record({ key: Schema.String, value: Schema.String })
})
export interface McpToolPins extends Schema.Schema.Type<typeof McpToolPins> {}

/**
 * What the gateway must know about a provider key (by its hash), whatever agent name comes with it:
 * a key contained with scope `key` refuses every agent derived from the key, names not seen yet
 * included. Stored and pushed like agent settings (KV `key.<key_hash>`).
 *
 * The same namespace holds the MCP gateway's shared state (docs/mcp.md): an agent token's grant under
 * the token's SHA-256 (64 hex characters, like a provider key's hash: a token is a credential), and a
 * server's entry and pins under its id (`mcp_<uuid>`, never 64 hex characters, so never a hash), and
 * a token's last use under the token's id (`mtk_<uuid>`).
 */
export const KeySettings = Schema.Struct({
  /** Paused or killed with scope `key`; undefined: the key is not contained (its agents may be). */
  containment: Schema.UndefinedOr(ContainmentState),
  /** Under an MCP agent token's hash: the agent it speaks for (docs/mcp.md); none: no such token, or revoked. */
  mcpToken: Schema.optional(McpTokenGrant),
  /** Under an MCP server's id (`mcp_<uuid>`): where the gateway forwards and whose it is; none: no such server. */
  mcpServer: Schema.optional(McpServerEntry),
  /** Under an MCP server's id: its tools' pinned definitions and the changes not yet accepted. */
  mcpPins: Schema.optional(McpToolPins),
  /**
   * Under an MCP token's id (`mtk_<uuid>`): when a gateway last reported letting it in (ISO 8601;
   * each gateway reports a token at most once a minute). Apart from the grant, so that a late report
   * can never bring a revoked grant back.
   */
  mcpTokenUsedAt: Schema.optional(Schema.String)
})
export interface KeySettings extends Schema.Schema.Type<typeof KeySettings> {}

/** A key without settings of its own. */
export const defaultKeySettings: KeySettings = { containment: undefined }

export class AgentState extends Context.Tag("candor/adapters/bus/AgentState")<
  AgentState,
  {
    readonly get: (agentId: string) => Effect.Effect<AgentSettings>
    /**
     * `get` without an effect, for the gateway's per-request fast path (a map lookup needs no fiber).
     * `defaultSettings` itself for an agent without settings (the gateway tells known agents by it).
     * Optional: a state without a synchronous copy leaves it out, and the gateway uses `get`.
     */
    readonly peek?: (agentId: string) => AgentSettings
    /**
     * A provider key's settings (by its hash), from the local copy: a map lookup on every request.
     * `defaultKeySettings` itself for a key without settings.
     */
    readonly peekKey: (keyHash: string) => KeySettings
    /**
     * Sets a key's settings in the shared state; resolves once this process's gateway (and, on the
     * embedded default, the gateway thread) applies them. Fails like `update`.
     */
    readonly updateKey: (keyHash: string, patch: Partial<KeySettings>) => Effect.Effect<void, BusError>
    /**
     * Whether `takeNudge` may find a nudge for this agent, without taking it (false: certainly none).
     * Optional like `peek`; without it the gateway asks `takeNudge` on every request.
     */
    readonly nudgePending?: (agentId: string) => boolean
    /**
     * The agent's settings as the shared store holds them now, read past the local copy (which the
     * watch may not have brought up to date yet), and learned into it. For a rare miss that must
     * not be a false refusal (an `X-Transaction-Id` the copy does not know); never per request.
     * Optional: a state whose copy is the store (in memory) leaves it out, and `get` is asked.
     */
    readonly refresh?: (agentId: string) => Effect.Effect<AgentSettings>
    /**
     * When each of the agent's tools was first seen, from the local copy: the lookup the policy's
     * grace period takes (core/Policy.ts). Undefined for a tool not seen yet; `LONG_AGO` (no grace)
     * for one that cannot be recorded (ToolSightings.ts).
     */
    readonly toolsFirstSeen: (agentId: string) => (tool: string) => Date | undefined
    /**
     * Records `nowMs` as the first sighting of each tool not seen yet, in the local copy at once
     * (so the next lookup has it) and in the shared state without waiting (the request does not
     * wait for the write). Only a map lookup per tool when none is new.
     */
    readonly noteTools: (agentId: string, tools: ReadonlyArray<{ readonly name: string }>, nowMs: number) => void
    /** Fails when the shared state cannot be written (NATS unreachable past the retries). */
    readonly update: (agentId: string, patch: Partial<AgentSettings>) => Effect.Effect<void, BusError>
    /** The pending nudge, removed as it is read: each nudge is injected once. */
    readonly takeNudge: (agentId: string) => Effect.Effect<string | undefined>
    readonly setNudge: (agentId: string, text: string) => Effect.Effect<void>
    /**
     * The ids of agents whose settings change from now on (by this process or, on NATS, by any),
     * until the scope closes. The workers drop their cached context of such an agent, so a change
     * reaches its next certificate without waiting for the context's TTL. A queue rather than a
     * stream so the reader can drain what is pending before each batch: in one process an update
     * made before an event was published is always seen before that event is attested.
     */
    readonly subscribeChanges: Effect.Effect<Queue.Dequeue<string>, never, Scope.Scope>
  }
>() {
  static readonly layerMemory: Layer.Layer<AgentState> = Layer.effect(
    AgentState,
    Effect.map(PubSub.unbounded<string>(), (changed) => {
      const settings = new Map<string, AgentSettings>()
      const keys = new Map<string, KeySettings>()
      const nudges = new Map<string, string>()
      // Nothing to share: what is noted is the record.
      const tools = new ToolSightingsCopy()
      return {
        get: (agentId) => Effect.sync(() => settings.get(agentId) ?? defaultSettings),
        peek: (agentId) => settings.get(agentId) ?? defaultSettings,
        peekKey: (keyHash) => keys.get(keyHash) ?? defaultKeySettings,
        updateKey: (keyHash, patch) =>
          Effect.sync(() => void keys.set(keyHash, { ...(keys.get(keyHash) ?? defaultKeySettings), ...patch })),
        nudgePending: (agentId) => nudges.has(agentId),
        toolsFirstSeen: (agentId) => tools.lookup(agentId),
        noteTools: (agentId, seen, nowMs) => void tools.note(agentId, seen, nowMs),
        update: (agentId, patch) =>
          Effect.sync(
            () => void settings.set(agentId, { ...(settings.get(agentId) ?? defaultSettings), ...patch })
          ).pipe(Effect.zipRight(PubSub.publish(changed, agentId)), Effect.asVoid),
        takeNudge: (agentId) =>
          Effect.sync(() => {
            const text = nudges.get(agentId)
            nudges.delete(agentId)
            return text
          }),
        setNudge: (agentId, text) => Effect.sync(() => void nudges.set(agentId, text)),
        subscribeChanges: PubSub.subscribe(changed)
      }
    })
  )
}
