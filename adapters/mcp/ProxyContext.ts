/**
 * What the MCP gateway's modules share (McpProxy.ts builds it once, in `make`, and hands it to each
 * module's factory): the settings, the agent state's local copy, the clock, how side work is
 * started, and how records and catalogue events are published (Publication.ts); who a request is
 * (`Caller`) and what its answer is read for (`Watch`); the small helpers they all use.
 */
import type * as Clock from "effect/Clock"
import type * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import type { ServerResponse } from "node:http"
import type { GatewayBlock } from "../../core/EventData.js"
import type { EventOccurrence } from "../../core/Events.js"
import type { AgentSettings, AgentState, McpServerEntry } from "../bus/AgentState.js"
import type { EventPublisher } from "../gateway/EventPublisher.js"
import type { McpProxyOptions } from "./McpProxyOptions.js"

export const SESSION_HEADER = "mcp-session-id"

/** The `provider` Candor's events name for an MCP exchange. */
export const PROVIDER = "mcp"

/** Who a request is, once its token and server are known. */
export interface Caller {
  readonly agentId: string
  readonly orgId: string
  readonly serverId: string
  readonly server: McpServerEntry
  readonly settings: AgentSettings
  /** The checkpoints' session: the MCP session when the client names one, else the server's id. */
  readonly sessionId: string
}

/** What the answer to a forwarded POST is read for. */
export type CallWatch = { readonly kind: "call"; readonly id: string | number; readonly tool: string }
export type Watch = { readonly kind: "list"; readonly id: string | number } | CallWatch

/** What the proxy's modules share, built once in `make` (McpProxy.ts). */
export interface ProxyContext {
  readonly settings: McpProxyOptions
  readonly state: AgentState["Type"]
  readonly clock: Clock.Clock
  readonly now: () => Date
  readonly runFork: <A, E>(effect: Effect.Effect<A, E>) => Fiber.RuntimeFiber<A, E>
  /** Side work started after what the caller is doing now (`runAfter` in McpProxy.ts says why). */
  readonly runAfter: <A, E>(effect: Effect.Effect<A, E>) => Fiber.RuntimeFiber<A, E>
  /** The effect, its failure logged as `what` (the error's kind only). */
  readonly logged: (effect: Effect.Effect<void, unknown>, what: string) => Effect.Effect<void>
  /** A catalogue event, off the request's path. */
  readonly announce: (occurrence: EventOccurrence | undefined) => void
  /** An enforcement record, published with the agent's events. */
  readonly record: (caller: Caller, message: Parameters<EventPublisher["publish"]>[1]) => void
  /** A refusal: its enforcement record and its `enforcement.blocked` announcement. */
  readonly blocked: (caller: Caller, rule: GatewayBlock["rule"], reason: string, checkpointId?: string | null) => void
}

export const json = (res: ServerResponse, status: number, body: Buffer, headers: Record<string, string> = {}) => {
  if (res.headersSent) return
  res.writeHead(status, { "content-type": "application/json", "content-length": String(body.length), ...headers })
  res.end(body)
}

export const plainError = (res: ServerResponse, status: number, error: string) =>
  json(res, status, Buffer.from(JSON.stringify({ error })))

export const headerValue = (value: string | ReadonlyArray<string> | undefined): string | undefined =>
  typeof value === "string" ? value : value?.[0]

/** A failure named by its kind in logs, as the LLM gateway names its own. */
export { errorKind } from "../gateway/Publication.js"
