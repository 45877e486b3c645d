/**
 * Where the MCP gateway may connect (docs/mcp.md): a registered server's URL passes the webhooks'
 * SSRF guard (adapters/webhooks/WebhookUrlGuard.ts) when it is stored, and again at each connection
 * (`guardedLookup`, and IP literals checked before dispatch), so a name that later resolves to a
 * private address is still refused. `CANDOR_MCP_ALLOW_PRIVATE=true` lifts it (http and private
 * addresses) for development and tests with servers on loopback.
 *
 * Also the gateway's public URL (`CANDOR_GATEWAY_PUBLIC_URL`) the API names in each server's `mcp_url`.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import {
  checkWebhookUrl,
  type InvalidWebhookUrl,
  isBlockedAddress,
  WebhookNetwork
} from "../webhooks/WebhookUrlGuard.js"
import { isIP } from "node:net"

export class McpNetwork extends Context.Reference<McpNetwork>()("candor/adapters/mcp/McpNetwork", {
  defaultValue: (): { readonly allowPrivate: boolean } => ({ allowPrivate: false })
}) {}

/**
 * The gateway's URL as agents reach it (no trailing slash); `candor serve` provides it from
 * `CANDOR_GATEWAY_PUBLIC_URL`, else the local gateway's address.
 */
export class McpGatewayUrl extends Context.Reference<McpGatewayUrl>()("candor/adapters/mcp/McpGatewayUrl", {
  defaultValue: (): string => "http://127.0.0.1:8081"
}) {}

/** `{gateway_url}/mcp/{server_id}`. */
export const mcpUrlOf = (gatewayUrl: string, serverId: string): string =>
  `${gatewayUrl.replace(/\/+$/, "")}/mcp/${serverId}`

/** A server URL checked as the module comment says (the API's 400 text on refusal). */
export const checkMcpServerUrl = (url: string): Effect.Effect<URL, InvalidWebhookUrl> =>
  Effect.flatMap(McpNetwork, ({ allowPrivate }) =>
    Effect.provideService(checkWebhookUrl(url), WebhookNetwork, { allowPrivate })
  )

/** Whether a connection to this URL's host must be refused now (an IP literal never goes through a lookup). */
export const blockedLiteral = (url: URL, allowPrivate: boolean): boolean => {
  if (allowPrivate) return false
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1")
  return isIP(host) !== 0 && isBlockedAddress(host)
}
