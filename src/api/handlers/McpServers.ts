/**
 * The MCP gateway's management routes (docs/mcp.md): decode, authorise, call `McpServers`
 * (services/McpServers.ts), encode. Who may act: Owner and Admin of the organization (of the
 * server, or of the agent the token is for), and the service-role key; others get 404 (an
 * organization they cannot see) or 403 (a member, a member-role key). Impersonation sessions may
 * not use these routes: a server decides where an organization's agents' tool calls go, and a
 * token is a credential.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { AccessControl } from "../../../adapters/auth/AccessControl.js"
import { actorOf, CurrentPrincipal } from "../../../adapters/auth/Principal.js"
import { Forbidden } from "../../../adapters/http/ApiErrors.js"
import { McpServers } from "../../../services/McpServers.js"
import { CandorApi } from "../Api.js"
import { requireOrgRole } from "./Access.js"

const noImpersonation = Effect.gen(function* () {
  const principal = yield* CurrentPrincipal
  if (principal.kind === "user" && principal.impersonation !== undefined)
    return yield* new Forbidden({ error: "impersonation sessions may not use the MCP gateway routes" })
})

/** Admin of the organization (writes: a principal that may write), then `run` with the acting principal's name. */
const asOrgAdmin = <A, E, R>(orgId: string, write: boolean, run: (actor: string) => Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    yield* Effect.zipRight(noImpersonation, requireOrgRole(orgId, "admin", write))
    return yield* run(actorOf(yield* CurrentPrincipal))
  })

/** Admin of the agent's organization: the agent readable by the caller, then its organization's role. */
const asAgentAdmin = <A, E, R>(
  agentId: string,
  write: boolean,
  run: (orgId: string, actor: string) => Effect.Effect<A, E, R>
) =>
  Effect.gen(function* () {
    yield* noImpersonation
    const principal = yield* CurrentPrincipal
    yield* (yield* AccessControl).agent(principal, agentId, "write")
    const orgId = yield* (yield* McpServers).agentOrganization(agentId)
    yield* requireOrgRole(orgId, "admin", write)
    return yield* run(orgId, actorOf(principal))
  })

export const McpServersLive = HttpApiBuilder.group(CandorApi, "mcpServers", (handlers) =>
  Effect.gen(function* () {
    const mcp = yield* McpServers
    return handlers
      .handle("listMcpServers", ({ path }) =>
        asOrgAdmin(path.org_id, false, () => Effect.map(mcp.listServers(path.org_id), (servers) => ({ servers })))
      )
      .handle("createMcpServer", ({ path, payload }) =>
        asOrgAdmin(path.org_id, true, (actor) => mcp.createServer(path.org_id, payload, actor))
      )
      .handle("getMcpServer", ({ path }) =>
        asOrgAdmin(path.org_id, false, () => mcp.getServer(path.org_id, path.server_id))
      )
      .handle("updateMcpServer", ({ path, payload }) =>
        asOrgAdmin(path.org_id, true, (actor) => mcp.updateServer(path.org_id, path.server_id, payload, actor))
      )
      .handle("deleteMcpServer", ({ path }) =>
        asOrgAdmin(path.org_id, true, (actor) => mcp.deleteServer(path.org_id, path.server_id, actor))
      )
      .handle("createMcpToken", ({ path }) =>
        asAgentAdmin(path.agent_id, true, (orgId, actor) => mcp.createToken(path.agent_id, orgId, actor))
      )
      .handle("listMcpTokens", ({ path }) =>
        asAgentAdmin(path.agent_id, false, () => Effect.map(mcp.listTokens(path.agent_id), (tokens) => ({ tokens })))
      )
      .handle("revokeMcpToken", ({ path }) =>
        asAgentAdmin(path.agent_id, true, (_orgId, actor) => mcp.revokeToken(path.agent_id, path.token_id, actor))
      )
      .handle("acceptMcpTool", ({ path }) =>
        Effect.gen(function* () {
          const orgId = yield* mcp.serverOrganization(path.server_id)
          return yield* asOrgAdmin(orgId, true, (actor) => mcp.acceptTool(path.server_id, path.tool_name, actor))
        })
      )
  })
)
