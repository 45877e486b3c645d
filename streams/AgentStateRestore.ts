/**
 * The gateways' agent state rebuilt from the store, for a state that does not outlive its process.
 *
 * On NATS the state lives in a durable KV bucket, but on the embedded default it is a map in memory
 * (AgentState.layerMemory behind the thread bridge), written by the API as each change is made. A
 * restart emptied it: a paused or killed agent, a contained key, an enforcing mode, a tool policy and
 * an open transaction were all forgotten, and the next request of a contained agent reached its
 * provider (issue 24). The store holds every one of them, so at start the backend writes the state of
 * every agent that has any, before the gateway takes its first request (src/Serve.ts waits for it).
 *
 * Each agent gets one whole-settings write computed as the API computes each part: the stored
 * settings row (mode, failure policy, containment, auto-containment threshold), the resolved tool
 * policy and organization, the active card, the resolved conscience values and the open transactions.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import { type AgentSettings, AgentState } from "../adapters/bus/AgentState.js"
import * as KeyContainmentRepo from "../adapters/store/KeyContainmentRepo.js"
import * as McpRepo from "../adapters/store/McpRepo.js"
import { resolvedConscienceOf } from "../adapters/store/OrgConscienceRepo.js"
import * as PolicyRepo from "../adapters/store/PolicyRepo.js"
import * as ScopedTransactionRepo from "../adapters/store/ScopedTransactionRepo.js"
import { Store, storeError } from "../adapters/store/Store.js"
import { resolvePolicy } from "../core/Policy.js"

/** Agents rebuilt at once: each is a handful of reads and one write to the gateway's copy. */
const RESTORE_CONCURRENCY = 8

/** Every agent the state may say something about: configured, claimed, carded, valued, governed by a policy of its own, or transacting. */
const agentsWithState = (sql: SqlClient.SqlClient, now: string) =>
  sql<{ agent_id: string }>`
    select agent_id from agents where settings is not null and settings::text <> '{}'
    union select agent_id from agent_claims
    union select agent_id from cards where active
    union select agent_id from conscience_values
    union select owner_id from policy_heads where scope = 'agent'
    union select agent_id from scoped_transactions where ended_at is null and expires_at > ${now}::timestamptz`.pipe(
    Effect.map((rows) => rows.map((row) => row.agent_id)),
    storeError("agentsWithState")
  )

/** Provider keys contained by scope `key`. */
const containedKeys = (sql: SqlClient.SqlClient) =>
  sql<{ key_hash: string }>`select key_hash from key_containment where containment is not null`.pipe(
    Effect.map((rows) => rows.map((row) => row.key_hash)),
    storeError("containedKeys")
  )

/** Writes the stored state of every agent and contained key into `AgentState`; the number of each. */
export const restoreAgentState = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const store = yield* Store
  const state = yield* AgentState
  const policies = yield* PolicyRepo.PolicyRepo
  const transactions = yield* ScopedTransactionRepo.ScopedTransactionRepo
  const keys = yield* KeyContainmentRepo.KeyContainmentRepo
  const now = Date.now()

  const settingsOf = (agentId: string) =>
    Effect.gen(function* () {
      const [stored, policy, card, conscience, open] = yield* Effect.all([
        store.agentSettings(agentId),
        policies.forAgent(agentId),
        store.activeCard(agentId),
        resolvedConscienceOf(store, agentId),
        transactions.list(agentId, "active", now)
      ])
      const settings: AgentSettings = {
        mode: stored.mode,
        failurePolicy: stored.failure_policy,
        containment: stored.containment ?? undefined,
        autoContainmentThreshold: stored.auto_containment_threshold ?? undefined,
        policy: resolvePolicy(policy.org?.policy, policy.agent?.policy),
        orgId: policy.orgId ?? undefined,
        card: card?.card,
        cardId: card?.card.card_id,
        conscienceValues: conscience.values,
        transactions: open.map((t) => ({
          transaction_id: t.transaction_id,
          tools: t.tools,
          ...(t.policy === null ? {} : { policy: t.policy }),
          expires_at: t.expires_at
        }))
      }
      return settings
    })

  const agents = yield* agentsWithState(sql, new Date(now).toISOString())
  yield* Effect.forEach(agents, (agentId) => Effect.flatMap(settingsOf(agentId), (s) => state.update(agentId, s)), {
    concurrency: RESTORE_CONCURRENCY,
    discard: true
  })
  const contained = yield* containedKeys(sql)
  yield* Effect.forEach(
    contained,
    (keyHash) => Effect.flatMap(keys.get(keyHash), (c) => state.updateKey(keyHash, { containment: c ?? undefined })),
    { concurrency: RESTORE_CONCURRENCY, discard: true }
  )
  // The MCP gateway's servers and tokens (docs/mcp.md); tool pins live only in the shared state.
  const mcp = yield* McpRepo.McpRepo
  const servers = yield* mcp.allServers
  const tokens = yield* mcp.allTokens
  yield* Effect.forEach(
    servers,
    (server) => state.updateKey(server.server_id, { mcpServer: { org_id: server.org_id, url: server.url } }),
    { concurrency: RESTORE_CONCURRENCY, discard: true }
  )
  yield* Effect.forEach(
    tokens,
    (token) =>
      state.updateKey(token.token_hash, {
        mcpToken: { token_id: token.token_id, agent_id: token.agent_id, org_id: token.org_id }
      }),
    { concurrency: RESTORE_CONCURRENCY, discard: true }
  )
  return { agents: agents.length, keys: contained.length, mcpServers: servers.length, mcpTokens: tokens.length }
})
