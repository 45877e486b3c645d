/**
 * The caps on the tools a request declares, applied whenever the gateway must read them (an active
 * tool policy): at most `maxTools` entries in the tool lists (counted as adapters/gateway/
 * ToolCount.ts counts them) and names of at most `maxNameLength` characters. Over a cap the
 * request is refused with 413 `{error}` naming the cap (GATEWAY_MAX_TOOLS, GATEWAY_MAX_TOOL_NAME in
 * src/Config.ts) before the provider is called; a request whose tools are not read is forwarded
 * unchanged, whatever it declares.
 *
 * Why: evaluation costs grow with tools × rules × name length on the gateway's one thread, so one
 * agent offering 20,000 tools against a large policy stalled every other tenant (issue 24). The
 * count is first taken from the bytes (`toolEntriesOver`, before any parse) for bodies large enough
 * to be worth it, then exactly on the parsed body.
 */
import { countOverCap } from "../metrics/GatewayMetrics.js"
import type { ProviderName } from "../providers/Provider.js"
import type { GatewayResponse } from "./Inspector.js"
import { jsonResponse } from "./Inspector.js"
import { toolEntriesOf, toolEntriesOver } from "./ToolCount.js"

export interface ToolCaps {
  /** Entries of the tool lists a request may have. */
  readonly maxTools: number
  /** Characters (UTF-16 code units, as the policy matches them) of a tool name. */
  readonly maxNameLength: number
}

export const DEFAULT_TOOL_CAPS: ToolCaps = { maxTools: 512, maxNameLength: 128 }

/**
 * Bodies smaller than this are only parsed: a parse of 32 KiB costs well under a millisecond, and a
 * body that small cannot declare many more tools than the cap.
 */
const SCAN_FROM_BYTES = 32 * 1024

const tooMany = (count: number, caps: ToolCaps): GatewayResponse => {
  countOverCap("tools")
  return jsonResponse(413, {
    error: `the request declares ${count} tools; at most ${caps.maxTools} are accepted when a tool policy applies (GATEWAY_MAX_TOOLS)`
  })
}

/** The 413 of a body whose tool lists are over the cap, found without parsing it; `undefined` otherwise. */
export const toolsOverCapBeforeParse = (
  provider: ProviderName,
  body: Uint8Array,
  caps: ToolCaps
): GatewayResponse | undefined => {
  if (body.byteLength < SCAN_FROM_BYTES) return undefined
  const count = toolEntriesOver(provider, body, caps.maxTools)
  return typeof count === "number" ? tooMany(count, caps) : undefined
}

/**
 * The same on the first bytes of a body still arriving (GatewayServer.ts screens an upload as it
 * grows): the 413 as soon as those bytes already hold more tools than the cap, so the rest of a
 * flood is never read; `"within"` once every tool list has been counted (nothing more to screen);
 * `undefined` while the bytes do not tell yet.
 */
export const screenTools = (
  provider: ProviderName,
  partial: Uint8Array,
  caps: ToolCaps
): GatewayResponse | "within" | undefined => {
  const count = toolEntriesOver(provider, partial, caps.maxTools)
  return typeof count === "number" ? tooMany(count, caps) : count
}

/** The 413 of a parsed request over a cap (entries, then names), exactly; `undefined` when within them. */
export const toolsOverCap = (
  provider: ProviderName,
  body: unknown,
  tools: ReadonlyArray<{ readonly name: string }>,
  caps: ToolCaps
): GatewayResponse | undefined => {
  const count = Math.max(toolEntriesOf(provider, body), tools.length)
  if (count > caps.maxTools) return tooMany(count, caps)
  const long = tools.find((tool) => tool.name.length > caps.maxNameLength)
  if (long === undefined) return undefined
  countOverCap("tool_name")
  return jsonResponse(413, {
    error: `the request declares a tool name of ${long.name.length} characters (${JSON.stringify(long.name.slice(0, 40))}…); at most ${caps.maxNameLength} are accepted when a tool policy applies (GATEWAY_MAX_TOOL_NAME)`
  })
}
