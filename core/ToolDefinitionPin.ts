/**
 * An MCP tool's definition as the gateway pins it (issue 28, docs/mcp.md): the SHA-256 of the JCS
 * (RFC 8785, `core/Canonical.ts`) of `{name, description, input_schema}` as a server's `tools/list`
 * answer gives them, `sha256:<hex>`. A server that later lists the same tool with another hash has
 * changed what the agent is told the tool does (a "rug pull"): the gateway records it and, under an
 * enforcing policy, refuses calls to the tool until a person accepts the new definition.
 *
 * Pure. Bounds: a definition whose canonical form passes `MAX_DEFINITION_BYTES` is not pinned (its
 * hash is `undefined`: the gateway treats it as a definition it cannot vouch for).
 */
import { toHex, utf8 } from "./Bytes.js"
import { tryCanonicalJson } from "./Canonical.js"
import { sha256 } from "./Hash.js"

/** Tools pinned per server at most; tools listed beyond them are not pinned (docs/mcp.md). */
export const MAX_PINNED_TOOLS = 512

/** The largest definition pinned, in bytes of its canonical JSON. */
export const MAX_DEFINITION_BYTES = 64 * 1024

/** Tool names as pinned: MCP names them in at most 128 characters (SEP-986); longer ones are not pinned. */
export const MAX_PINNED_NAME = 128

export type PinnedDefinition =
  | { readonly _tag: "pinned"; readonly name: string; readonly hash: string }
  /** A tool the gateway cannot pin: its definition too large or not JSON text. */
  | { readonly _tag: "unpinnable"; readonly name: string; readonly reason: string }

/** One listed tool's pin, or why it has none; `undefined` when the entry has no usable name. */
export const pinOf = (tool: unknown): PinnedDefinition | undefined => {
  if (typeof tool !== "object" || tool === null || Array.isArray(tool)) return undefined
  const { description, inputSchema, name } = tool as Record<string, unknown>
  if (typeof name !== "string" || name.length === 0 || name.length > MAX_PINNED_NAME) return undefined
  const canonical = tryCanonicalJson({
    name,
    description: description ?? null,
    input_schema: inputSchema ?? null
  })
  if (canonical === undefined) return { _tag: "unpinnable", name, reason: "definition is not JSON text" }
  const bytes = utf8(canonical)
  if (bytes.length > MAX_DEFINITION_BYTES)
    return { _tag: "unpinnable", name, reason: `definition larger than ${MAX_DEFINITION_BYTES} bytes` }
  return { _tag: "pinned", name, hash: `sha256:${toHex(sha256(bytes))}` }
}
