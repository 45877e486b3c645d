/**
 * The MCP gateway's management routes (docs/mcp.md, docs/api.md "MCP gateway"): an organization's
 * registered MCP servers, its agents' tokens (shown once), and the acceptance of a changed tool
 * definition. Owner and Admin only; the service-role key may do everything.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as Schema from "effect/Schema"
import { Authentication } from "../../../adapters/auth/Authentication.js"
import { BadRequest, Conflict, Forbidden, InternalError, NotFound } from "../../../adapters/http/ApiErrors.js"
import { MAX_WEBHOOK_URL_LENGTH } from "../../../adapters/webhooks/WebhookUrlGuard.js"
import { AgentId, Identifier } from "../../../core/schema/Ids.js"

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

const OrgPath = Schema.Struct({ org_id: Identifier })
const ServerPath = Schema.Struct({ org_id: Identifier, server_id: Identifier })
const AgentPath = Schema.Struct({ agent_id: AgentId })
const TokenPath = Schema.Struct({ agent_id: AgentId, token_id: Identifier })
const ToolPath = Schema.Struct({
  server_id: Identifier,
  tool_name: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(128))
})

export class McpServersApi extends HttpApiGroup.make("mcpServers")
  .add(HttpApiEndpoint.get("listMcpServers", "/orgs/:org_id/mcp-servers").setPath(OrgPath).addSuccess(McpServerList))
  .add(
    HttpApiEndpoint.post("createMcpServer", "/orgs/:org_id/mcp-servers")
      .setPath(OrgPath)
      .setPayload(CreateMcpServer)
      .addSuccess(McpServerView, { status: 201 })
  )
  .add(
    HttpApiEndpoint.get("getMcpServer", "/orgs/:org_id/mcp-servers/:server_id")
      .setPath(ServerPath)
      .addSuccess(McpServerView)
  )
  .add(
    HttpApiEndpoint.patch("updateMcpServer", "/orgs/:org_id/mcp-servers/:server_id")
      .setPath(ServerPath)
      .setPayload(UpdateMcpServer)
      .addSuccess(McpServerView)
  )
  .add(
    HttpApiEndpoint.del("deleteMcpServer", "/orgs/:org_id/mcp-servers/:server_id")
      .setPath(ServerPath)
      .addSuccess(HttpApiSchema.NoContent)
  )
  .add(
    HttpApiEndpoint.post("createMcpToken", "/agents/:agent_id/mcp-tokens")
      .setPath(AgentPath)
      .addSuccess(CreatedMcpToken, { status: 201 })
  )
  .add(HttpApiEndpoint.get("listMcpTokens", "/agents/:agent_id/mcp-tokens").setPath(AgentPath).addSuccess(McpTokenList))
  .add(
    HttpApiEndpoint.del("revokeMcpToken", "/agents/:agent_id/mcp-tokens/:token_id")
      .setPath(TokenPath)
      .addSuccess(HttpApiSchema.NoContent)
  )
  .add(
    HttpApiEndpoint.post("acceptMcpTool", "/mcp-servers/:server_id/tools/:tool_name/accept")
      .setPath(ToolPath)
      .addSuccess(AcceptedMcpTool)
  )
  .addError(BadRequest)
  .addError(Forbidden)
  .addError(NotFound)
  .addError(Conflict)
  .addError(InternalError)
  .middleware(Authentication) {}
