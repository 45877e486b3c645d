/**
 * The MCP gateway's records (migrations/0030_mcp_gateway.ts): an organization's registered servers
 * and its agents' tokens (their SHA-256 only). Written by services/McpServers.ts, read back at start
 * to restore the gateways' shared state (streams/AgentStateRestore.ts).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { type StoreError, storeError } from "./Store.js"

export interface McpServerRow {
  readonly server_id: string
  readonly org_id: string
  readonly name: string
  readonly url: string
  readonly created_at: string
  readonly updated_at: string
}

export interface McpTokenRow {
  readonly token_id: string
  readonly agent_id: string
  readonly org_id: string
  readonly token_hash: string
  readonly created_at: string
  readonly last_used_at: string | null
}

const iso = (value: unknown): string => (value instanceof Date ? value : new Date(String(value))).toISOString()
const isoOrNull = (value: unknown): string | null => (value === null || value === undefined ? null : iso(value))

const serverOf = (row: Record<string, unknown>): McpServerRow => ({
  server_id: String(row["server_id"]),
  org_id: String(row["org_id"]),
  name: String(row["name"]),
  url: String(row["url"]),
  created_at: iso(row["created_at"]),
  updated_at: iso(row["updated_at"])
})

const tokenOf = (row: Record<string, unknown>): McpTokenRow => ({
  token_id: String(row["token_id"]),
  agent_id: String(row["agent_id"]),
  org_id: String(row["org_id"]),
  token_hash: String(row["token_hash"]),
  created_at: iso(row["created_at"]),
  last_used_at: isoOrNull(row["last_used_at"])
})

export class McpRepo extends Context.Tag("candor/adapters/store/McpRepo")<
  McpRepo,
  {
    readonly countServers: (orgId: string) => Effect.Effect<number, StoreError>
    readonly insertServer: (
      server: Omit<McpServerRow, "created_at" | "updated_at">,
      at: Date
    ) => Effect.Effect<McpServerRow, StoreError>
    readonly listServers: (orgId: string) => Effect.Effect<ReadonlyArray<McpServerRow>, StoreError>
    /** The server, whichever organization holds it (callers check the organization). */
    readonly getServer: (serverId: string) => Effect.Effect<McpServerRow | undefined, StoreError>
    readonly updateServer: (
      serverId: string,
      patch: { readonly name?: string | undefined; readonly url?: string | undefined },
      at: Date
    ) => Effect.Effect<McpServerRow | undefined, StoreError>
    readonly deleteServer: (serverId: string) => Effect.Effect<boolean, StoreError>
    /** Every server, for the restore at start. */
    readonly allServers: Effect.Effect<ReadonlyArray<McpServerRow>, StoreError>
    readonly countTokens: (agentId: string) => Effect.Effect<number, StoreError>
    readonly insertToken: (
      token: Omit<McpTokenRow, "created_at" | "last_used_at">,
      at: Date
    ) => Effect.Effect<McpTokenRow, StoreError>
    readonly listTokens: (agentId: string) => Effect.Effect<ReadonlyArray<McpTokenRow>, StoreError>
    /** Removes the agent's token; the removed row (its hash, to tell the gateways), or undefined. */
    readonly deleteToken: (agentId: string, tokenId: string) => Effect.Effect<McpTokenRow | undefined, StoreError>
    /** Every token, for the restore at start. */
    readonly allTokens: Effect.Effect<ReadonlyArray<McpTokenRow>, StoreError>
  }
>() {}

export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  return McpRepo.of({
    countServers: (orgId) =>
      sql<{ n: unknown }>`select count(*) as n from mcp_servers where org_id = ${orgId}`.pipe(
        Effect.map(([row]) => Number(row?.n ?? 0)),
        storeError("countMcpServers")
      ),
    insertServer: (server, at) =>
      sql`
        insert into mcp_servers (server_id, org_id, name, url, created_at, updated_at)
        values (${server.server_id}, ${server.org_id}, ${server.name}, ${server.url}, ${at}, ${at})
        returning *`.pipe(
        Effect.map(([row]) => serverOf(row!)),
        storeError("insertMcpServer")
      ),
    listServers: (orgId) =>
      sql`select * from mcp_servers where org_id = ${orgId} order by created_at, server_id`.pipe(
        Effect.map((rows) => rows.map(serverOf)),
        storeError("listMcpServers")
      ),
    getServer: (serverId) =>
      sql`select * from mcp_servers where server_id = ${serverId}`.pipe(
        Effect.map(([row]) => (row === undefined ? undefined : serverOf(row))),
        storeError("getMcpServer")
      ),
    updateServer: (serverId, patch, at) =>
      sql`
        update mcp_servers set
          name = coalesce(${patch.name ?? null}, name),
          url = coalesce(${patch.url ?? null}, url),
          updated_at = ${at}
        where server_id = ${serverId}
        returning *`.pipe(
        Effect.map(([row]) => (row === undefined ? undefined : serverOf(row))),
        storeError("updateMcpServer")
      ),
    deleteServer: (serverId) =>
      sql`delete from mcp_servers where server_id = ${serverId} returning server_id`.pipe(
        Effect.map((rows) => rows.length > 0),
        storeError("deleteMcpServer")
      ),
    allServers: sql`select * from mcp_servers`.pipe(
      Effect.map((rows) => rows.map(serverOf)),
      storeError("allMcpServers")
    ),
    countTokens: (agentId) =>
      sql<{ n: unknown }>`select count(*) as n from mcp_tokens where agent_id = ${agentId}`.pipe(
        Effect.map(([row]) => Number(row?.n ?? 0)),
        storeError("countMcpTokens")
      ),
    insertToken: (token, at) =>
      sql`
        insert into mcp_tokens (token_id, agent_id, org_id, token_hash, created_at)
        values (${token.token_id}, ${token.agent_id}, ${token.org_id}, ${token.token_hash}, ${at})
        returning *`.pipe(
        Effect.map(([row]) => tokenOf(row!)),
        storeError("insertMcpToken")
      ),
    listTokens: (agentId) =>
      sql`select * from mcp_tokens where agent_id = ${agentId} order by created_at, token_id`.pipe(
        Effect.map((rows) => rows.map(tokenOf)),
        storeError("listMcpTokens")
      ),
    deleteToken: (agentId, tokenId) =>
      sql`delete from mcp_tokens where agent_id = ${agentId} and token_id = ${tokenId} returning *`.pipe(
        Effect.map(([row]) => (row === undefined ? undefined : tokenOf(row))),
        storeError("deleteMcpToken")
      ),
    allTokens: sql`select * from mcp_tokens`.pipe(
      Effect.map((rows) => rows.map(tokenOf)),
      storeError("allMcpTokens")
    )
  })
})

export const layer: Layer.Layer<McpRepo, never, SqlClient.SqlClient> = Layer.effect(McpRepo, make)
