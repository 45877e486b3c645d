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
import { AgentId, Identifier } from "../../../core/schema/Ids.js"
import {
  AcceptedMcpTool,
  CreatedMcpToken,
  CreateMcpServer,
  McpServerList,
  McpServerView,
  McpTokenList,
  UpdateMcpServer
} from "../../../core/schema/McpServer.js"

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
