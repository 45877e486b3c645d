/**
 * The JSON-RPC 2.0 the MCP gateway reads (docs/mcp.md): what a client's POST body asks, and the
 * error answers Candor gives in place of a server's. Messages are read as untrusted JSON: only the
 * members the gateway acts on are looked at, each checked for its type; nothing is cast.
 */

/** A JSON-RPC id: a string or a number (null only in an error answering an unreadable request). */
export type JsonRpcId = string | number | null

export type ClientMessage =
  /** A request or notification with its method (`params` as sent; `id` undefined for a notification). */
  | { readonly _tag: "call"; readonly method: string; readonly id: JsonRpcId | undefined; readonly params: unknown }
  /** Anything else a client POSTs: a response to a server's request, or an object without a method. */
  | { readonly _tag: "other" }

/** Standard JSON-RPC codes, and Candor's own (in the range the spec leaves to servers). */
export const PARSE_ERROR = -32700
export const INVALID_REQUEST = -32600
export const INVALID_PARAMS = -32602
/** The server's answer to an approved call could not be relayed (an HTTP error, an unreadable body). */
export const INTERNAL_ERROR = -32603
/** A call Candor refused: tool policy, a changed tool definition, a transaction, an approval not given. */
export const REFUSED_BY_CANDOR = -32001
/** The agent is contained (paused or killed). */
export const AGENT_CONTAINED = -32002
/** A `tools/call` result Candor withheld (enforce): judged a boundary violation, or unreadable to judge. */
export const TOOL_RESULT_WITHHELD = -32003

const isId = (value: unknown): value is string | number =>
  typeof value === "string" || (typeof value === "number" && Number.isFinite(value))

/** One parsed JSON value as a client message; `undefined` when it is not an object (not JSON-RPC at all). */
export const clientMessageOf = (value: unknown): ClientMessage | undefined => {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined
  const { id, method, params } = value as Record<string, unknown>
  if (typeof method !== "string") return { _tag: "other" }
  return { _tag: "call", method, id: isId(id) ? id : id === null ? null : undefined, params }
}

/** A server's answer: its id, and the `result` or `error` it carries. */
export interface ServerAnswer {
  readonly id: string | number
  readonly result: unknown
}

/** A parsed server message as an answer with a result, or `undefined` (a request, a notification, an error). */
export const serverAnswerOf = (value: unknown): ServerAnswer | undefined => {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined
  const record = value as Record<string, unknown>
  if (!isId(record["id"]) || !("result" in record) || "method" in record) return undefined
  return { id: record["id"], result: record["result"] }
}

/** A JSON-RPC error message's bytes. */
export const errorMessage = (id: JsonRpcId, code: number, message: string, data?: unknown): Buffer =>
  Buffer.from(
    JSON.stringify({
      jsonrpc: "2.0",
      id,
      error: data === undefined ? { code, message } : { code, message, data }
    })
  )
