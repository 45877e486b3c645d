/**
 * The MCP gateway's write paths (issue 28, docs/mcp.md): an organization's registered MCP servers,
 * its agents' tokens, and the acceptance of a changed tool definition. Each change is stored with
 * its governance entry in one transaction, then told to the gateways through the shared agent state
 * (adapters/bus/AgentState.ts, `KeySettings`: a token's grant under its SHA-256, a server's entry and
 * pins under its id). A change the gateways could not be told is stored and answered 503: sending it
 * again is harmless (every push is idempotent).
 *
 * Handlers (src/api/handlers/McpServers.ts) authorise; this service trusts its caller on who may act.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { randomUUID } from "node:crypto"
import { generateSecret, hashSecret } from "../adapters/auth/Secrets.js"
import { AgentState, type McpToolPins } from "../adapters/bus/AgentState.js"
import type { BusError } from "../adapters/bus/BusError.js"
import { BadRequest, Conflict, NotFound, ServiceUnavailable } from "../adapters/http/ApiErrors.js"
import { storeFailure } from "../adapters/http/StoreFailure.js"
import { checkMcpServerUrl, McpGatewayUrl, McpNetwork, mcpUrlOf } from "../adapters/mcp/McpNetwork.js"
import { IdentityRepo } from "../adapters/store/identity/IdentityRepo.js"
import { GovernanceLog } from "../adapters/store/GovernanceLog.js"
import { McpRepo, type McpServerRow } from "../adapters/store/McpRepo.js"
import * as McpRepoStore from "../adapters/store/McpRepo.js"
import { StoreError } from "../adapters/store/Store.js"
import { transaction } from "../adapters/store/Transaction.js"
import { agentGovernanceLog, orgGovernanceLog } from "../core/Governance.js"

/** Servers one organization may register. */
export const MAX_SERVERS_PER_ORG = 100
/** Live tokens one agent may hold (revoke one to make another). */
export const MAX_TOKENS_PER_AGENT = 20
/** The prefix of an agent token: says what it is in a leaked log or a secret scanner. */
export const MCP_TOKEN_PREFIX = "cmcp"

export interface McpServerView {
  readonly server_id: string
  readonly name: string
  readonly url: string
  readonly mcp_url: string
  readonly created_at: string
}

export interface McpTokenView {
  readonly token_id: string
  readonly created_at: string
  readonly last_used_at: string | null
}

const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

const unreachable = (error: BusError) =>
  Effect.zipRight(
    Effect.logWarning("MCP state not shared with the gateways").pipe(Effect.annotateLogs({ error: error.message })),
    Effect.fail(
      new ServiceUnavailable({
        error: "saved, but the gateways cannot be told right now (NATS unreachable): send it again shortly"
      })
    )
  )

const sqlFailure = (operation: string) => (cause: unknown) => Effect.fail(new StoreError({ operation, cause }))

/** What a governance entry keeps of a server: its id, name and the URL's origin (a path or query may hold a secret). */
const serverState = (server: McpServerRow) => ({
  server_id: server.server_id,
  name: server.name,
  url_origin: URL.canParse(server.url) ? new URL(server.url).origin : null
})

const failed = storeFailure("MCP gateway store failure", { logCause: true })

const noPins: McpToolPins = { pinned: {}, changed: {} }

export const make = Effect.gen(function* () {
  const repo = yield* McpRepo
  const identity = yield* IdentityRepo
  const governance = yield* GovernanceLog
  const sql = yield* SqlClient.SqlClient
  const state = yield* AgentState
  // Read once, where the layer is built: what the process configured (src/Serve.ts), or the test.
  const gatewayUrl = yield* McpGatewayUrl
  const network = yield* McpNetwork

  const view = (server: McpServerRow): Effect.Effect<McpServerView> =>
    Effect.succeed({
      server_id: server.server_id,
      name: server.name,
      url: server.url,
      mcp_url: mcpUrlOf(gatewayUrl, server.server_id),
      created_at: server.created_at
    })

  const checkUrl = (url: string) =>
    checkMcpServerUrl(url).pipe(
      Effect.provideService(McpNetwork, network),
      Effect.mapError((error) => new BadRequest({ error: error.message }))
    )

  /** The server, when `orgId` holds it; 404 otherwise (another organization's server is unknown here). */
  const serverOf = (orgId: string, serverId: string) =>
    Effect.flatMap(repo.getServer(serverId), (server) =>
      server === undefined || server.org_id !== orgId
        ? Effect.fail(new NotFound({ error: `MCP server ${serverId} not found` }))
        : Effect.succeed(server)
    )

  const pushServer = (server: McpServerRow) =>
    state
      .updateKey(server.server_id, { mcpServer: { org_id: server.org_id, url: server.url } })
      .pipe(Effect.catchAll(unreachable))

  const logged = <A, E, R>(change: Effect.Effect<A, E, R>, operation: string) =>
    transaction(sql, change).pipe(Effect.catchTag("SqlError", sqlFailure(operation)))

  return {
    /** The agent's organization (its claim), or 400 for an agent outside any: tokens open an organization's servers. */
    agentOrganization: (agentId: string) =>
      Effect.flatMap(identity.claimOf(agentId), (claim) =>
        claim?.org_id === undefined || claim.org_id === null
          ? Effect.fail(
              new BadRequest({
                error: `agent ${agentId} belongs to no organization: MCP tokens open an organization's servers`
              })
            )
          : Effect.succeed(claim.org_id)
      ).pipe(Effect.catchTag("StoreError", failed)),
    createServer: (orgId: string, input: { readonly name: string; readonly url: string }, actor: string) =>
      Effect.gen(function* () {
        const url = (yield* checkUrl(input.url)).href
        const at = yield* now
        const server = yield* logged(
          Effect.gen(function* () {
            if ((yield* repo.countServers(orgId)) >= MAX_SERVERS_PER_ORG)
              return yield* new Conflict({
                error: `the organization has ${MAX_SERVERS_PER_ORG} MCP servers, the most it may register: delete one first`
              })
            const created = yield* repo.insertServer(
              { server_id: `mcp_${randomUUID()}`, org_id: orgId, name: input.name, url },
              at
            )
            yield* governance.append(orgGovernanceLog(orgId), {
              action: "mcp_server.create",
              actor,
              previous_state: null,
              new_state: serverState(created)
            })
            return created
          }),
          "createMcpServer"
        )
        yield* pushServer(server)
        return yield* view(server)
      }).pipe(Effect.catchTag("StoreError", failed)),
    listServers: (orgId: string) =>
      Effect.flatMap(repo.listServers(orgId), (servers) => Effect.forEach(servers, view)).pipe(
        Effect.catchTag("StoreError", failed)
      ),
    getServer: (orgId: string, serverId: string) =>
      Effect.flatMap(serverOf(orgId, serverId), view).pipe(Effect.catchTag("StoreError", failed)),
    /** The server's organization, whoever asks (the accept route authorises on it); 404 when unknown. */
    serverOrganization: (serverId: string) =>
      Effect.flatMap(repo.getServer(serverId), (server) =>
        server === undefined
          ? Effect.fail(new NotFound({ error: `MCP server ${serverId} not found` }))
          : Effect.succeed(server.org_id)
      ).pipe(Effect.catchTag("StoreError", failed)),
    updateServer: (
      orgId: string,
      serverId: string,
      patch: { readonly name?: string | undefined; readonly url?: string | undefined },
      actor: string
    ) =>
      Effect.gen(function* () {
        const url = patch.url === undefined ? undefined : (yield* checkUrl(patch.url)).href
        const at = yield* now
        const server = yield* logged(
          Effect.gen(function* () {
            const before = yield* serverOf(orgId, serverId)
            const after = yield* repo.updateServer(serverId, { name: patch.name, url }, at)
            if (after === undefined) return yield* new NotFound({ error: `MCP server ${serverId} not found` })
            yield* governance.append(orgGovernanceLog(orgId), {
              action: "mcp_server.update",
              actor,
              previous_state: serverState(before),
              new_state: serverState(after)
            })
            return after
          }),
          "updateMcpServer"
        )
        yield* pushServer(server)
        return yield* view(server)
      }).pipe(Effect.catchTag("StoreError", failed)),
    deleteServer: (orgId: string, serverId: string, actor: string) =>
      Effect.gen(function* () {
        yield* logged(
          Effect.gen(function* () {
            const before = yield* serverOf(orgId, serverId)
            yield* repo.deleteServer(serverId)
            yield* governance.append(orgGovernanceLog(orgId), {
              action: "mcp_server.delete",
              actor,
              previous_state: serverState(before),
              new_state: null
            })
          }),
          "deleteMcpServer"
        )
        // Its pins go with it: a server registered again at the same URL is a new server.
        yield* state
          .updateKey(serverId, { mcpServer: undefined, mcpPins: undefined })
          .pipe(Effect.catchAll(unreachable))
      }).pipe(Effect.catchTag("StoreError", failed)),
    createToken: (agentId: string, orgId: string, actor: string) =>
      Effect.gen(function* () {
        const token = generateSecret(MCP_TOKEN_PREFIX)
        const tokenHash = hashSecret(token)
        const at = yield* now
        const row = yield* logged(
          Effect.gen(function* () {
            if ((yield* repo.countTokens(agentId)) >= MAX_TOKENS_PER_AGENT)
              return yield* new Conflict({
                error: `agent ${agentId} has ${MAX_TOKENS_PER_AGENT} MCP tokens, the most it may hold: revoke one first`
              })
            const created = yield* repo.insertToken(
              { token_id: `mtk_${randomUUID()}`, agent_id: agentId, org_id: orgId, token_hash: tokenHash },
              at
            )
            yield* governance.append(agentGovernanceLog(agentId), {
              action: "mcp_token.create",
              actor,
              previous_state: null,
              new_state: { token_id: created.token_id, org_id: orgId }
            })
            return created
          }),
          "createMcpToken"
        )
        yield* state
          .updateKey(tokenHash, { mcpToken: { token_id: row.token_id, agent_id: agentId, org_id: orgId } })
          .pipe(Effect.catchAll(unreachable))
        return { token_id: row.token_id, token, created_at: row.created_at }
      }).pipe(Effect.catchTag("StoreError", failed)),
    listTokens: (agentId: string) =>
      Effect.map(repo.listTokens(agentId), (rows) =>
        rows.map((row): McpTokenView => ({
          token_id: row.token_id,
          created_at: row.created_at,
          // The gateways report use to the shared state, not the store (they have none): its copy here says.
          last_used_at: state.peekKey(row.token_id).mcpTokenUsedAt ?? row.last_used_at
        }))
      ).pipe(Effect.catchTag("StoreError", failed)),
    revokeToken: (agentId: string, tokenId: string, actor: string) =>
      Effect.gen(function* () {
        const removed = yield* logged(
          Effect.gen(function* () {
            const row = yield* repo.deleteToken(agentId, tokenId)
            if (row === undefined) return yield* new NotFound({ error: `MCP token ${tokenId} not found` })
            yield* governance.append(agentGovernanceLog(agentId), {
              action: "mcp_token.revoke",
              actor,
              previous_state: { token_id: tokenId },
              new_state: null
            })
            return row
          }),
          "revokeMcpToken"
        )
        yield* state.updateKey(removed.token_hash, { mcpToken: undefined }).pipe(Effect.catchAll(unreachable))
      }).pipe(Effect.catchTag("StoreError", failed)),
    /**
     * Accepts the changed definition the gateways reported for `toolName`: it becomes the pin, and
     * calls to the tool go through again. 404 when no change of that tool is waiting.
     */
    acceptTool: (serverId: string, toolName: string, actor: string) =>
      Effect.gen(function* () {
        const server = yield* repo.getServer(serverId)
        if (server === undefined) return yield* new NotFound({ error: `MCP server ${serverId} not found` })
        const pins = state.peekKey(serverId).mcpPins ?? noPins
        const hash = Object.prototype.hasOwnProperty.call(pins.changed, toolName) ? pins.changed[toolName] : undefined
        if (hash === undefined)
          return yield* new NotFound({ error: `no changed definition of tool ${toolName} waits for acceptance` })
        const previous = Object.prototype.hasOwnProperty.call(pins.pinned, toolName) ? pins.pinned[toolName] : null
        yield* logged(
          governance.append(orgGovernanceLog(server.org_id), {
            action: "mcp_tool.accept",
            actor,
            previous_state: { server_id: serverId, tool_name: toolName, definition_hash: previous ?? null },
            new_state: { server_id: serverId, tool_name: toolName, definition_hash: hash }
          }),
          "acceptMcpTool"
        )
        const { [toolName]: _accepted, ...changed } = pins.changed
        yield* state
          .updateKey(serverId, { mcpPins: { pinned: { ...pins.pinned, [toolName]: hash }, changed } })
          .pipe(Effect.catchAll(unreachable))
        return { server_id: serverId, tool_name: toolName, definition_hash: hash }
      }).pipe(Effect.catchTag("StoreError", failed))
  }
})

export class McpServers extends Context.Tag("candor/services/McpServers")<
  McpServers,
  Effect.Effect.Success<typeof make>
>() {}

/** On the process's store, governance log and agent state. */
export const layer = Layer.effect(McpServers, make).pipe(Layer.provide(McpRepoStore.layer))
