/**
 * The MCP gateway's management shapes (docs/mcp.md, docs/api.md "MCP gateway"): an organization's
 * registered MCP servers, its agents' tokens (the token shown once), and an accepted tool definition.
 */
import * as Schema from "effect/Schema"
import { MAX_WEBHOOK_URL_LENGTH } from "./Webhook.js"

const Name = Schema.String.pipe(
  Schema.minLength(1, { message: () => "name must not be empty" }),
  Schema.maxLength(200, { message: () => "name must be at most 200 characters" })
)
const Url = Schema.String.pipe(
  Schema.maxLength(MAX_WEBHOOK_URL_LENGTH, { message: () => `at most ${MAX_WEBHOOK_URL_LENGTH} characters` })
).annotations({
  description:
    "The server's Streamable HTTP endpoint: https, its host not a private, loopback or link-local address (CANDOR_MCP_ALLOW_PRIVATE lifts this for development)"
})

export const CreateMcpServer = Schema.Struct({ name: Name, url: Url }).annotations({ identifier: "CreateMcpServer" })
export const UpdateMcpServer = Schema.Struct({
  name: Schema.optionalWith(Name, { exact: true }),
  url: Schema.optionalWith(Url, { exact: true })
}).annotations({ identifier: "UpdateMcpServer" })

export const McpServerView = Schema.Struct({
  server_id: Schema.String,
  name: Schema.String,
  url: Schema.String,
  mcp_url: Schema.String.annotations({
    description: "What agents connect to: {CANDOR_GATEWAY_PUBLIC_URL}/mcp/{server_id}, with an agent token"
  }),
  created_at: Schema.String
}).annotations({ identifier: "McpServer" })

export const McpServerList = Schema.Struct({ servers: Schema.Array(McpServerView) }).annotations({
  identifier: "McpServerList"
})

export const CreatedMcpToken = Schema.Struct({
  token_id: Schema.String,
  token: Schema.String.annotations({ description: "Shown only here: sent as x-candor-agent-token" }),
  created_at: Schema.String
}).annotations({ identifier: "CreatedMcpToken" })

export const McpTokenView = Schema.Struct({
  token_id: Schema.String,
  created_at: Schema.String,
  last_used_at: Schema.NullOr(Schema.String)
}).annotations({ identifier: "McpToken" })

export const McpTokenList = Schema.Struct({ tokens: Schema.Array(McpTokenView) }).annotations({
  identifier: "McpTokenList"
})

export const AcceptedMcpTool = Schema.Struct({
  server_id: Schema.String,
  tool_name: Schema.String,
  definition_hash: Schema.String.annotations({
    description: "sha256:<hex> of the JCS of name, description, input schema"
  })
}).annotations({ identifier: "AcceptedMcpTool" })
