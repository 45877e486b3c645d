/**
 * The MCP gateway's seam in the gateway server (adapters/gateway/GatewayServer.ts): requests under
 * `/mcp/` go to `handle` when the process provides one (McpProxy.ts), else 404. A tag of its own so
 * the server does not depend on the proxy's implementation.
 */
import * as Context from "effect/Context"
import type { IncomingMessage, ServerResponse } from "node:http"

export class McpGateway extends Context.Tag("candor/adapters/mcp/McpGateway")<
  McpGateway,
  { readonly handle: (req: IncomingMessage, res: ServerResponse) => void }
>() {}
