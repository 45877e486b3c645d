/**
 * Scoped transactions (docs/transactions.md; groups/Transactions.ts).
 *
 * Opening or closing one stores the row and its governance entry (`transaction.open` /
 * `transaction.close`, on the agent's log) and pushes the agent's open transactions to the gateways
 * (`AgentState`, member `transactions`), all in one SQL transaction: the governance entry holds the
 * agent's log head locked until the commit, so two changes on one agent cannot push their lists in
 * the wrong order, and a push that fails (NATS unreachable) rolls the change back: the answer is 503
 * and nothing is stored; send it again. Once the API has answered, every gateway sees the change
 * (a gateway whose copy has not caught up asks the shared state once before refusing an id).
 *
 * Access is the agent policy's: who may write the agent's policy (`writeAgent`) opens and closes;
 * readers of the agent read. A transaction of an agent the caller may not see is "not found".
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { randomUUID } from "node:crypto"
import { AgentState } from "../../../adapters/bus/AgentState.js"
import type { BusError } from "../../../adapters/bus/BusError.js"
import { actorOf, CurrentPrincipal } from "../../../adapters/auth/Principal.js"
import { BadRequest, Conflict, NotFound, ServiceUnavailable } from "../../../adapters/http/ApiErrors.js"
import { GovernanceLog } from "../../../adapters/store/GovernanceLog.js"
import { PolicyRepo } from "../../../adapters/store/PolicyRepo.js"
import * as ScopedTransactionRepo from "../../../adapters/store/ScopedTransactionRepo.js"
import { StoreError } from "../../../adapters/store/Store.js"
import { transaction } from "../../../adapters/store/Transaction.js"
import { TrustEdgeRepo } from "../../../adapters/store/TrustEdgeRepo.js"
import { tryCanonicalJson } from "../../../core/Canonical.js"
import { policyHash } from "../../../core/Commitments.js"
import { agentGovernanceLog } from "../../../core/Governance.js"
import { resolvePolicy } from "../../../core/Policy.js"
import { distinctTools, transactionPolicy, withUnsetDefaultsLoosest } from "../../../core/ScopedTransaction.js"
import type { Policy } from "../../../core/schema/Policy.js"
import { TRANSACTION_ID_PREFIX, TRANSACTION_LIMITS } from "../../../core/schema/ScopedTransaction.js"
import { CandorApi } from "../Api.js"
import { internal } from "./Access.js"
import { readAgent, writeAgent } from "./AgentAccess.js"
import { decodePolicyDocument } from "./PolicyBody.js"
import { withinPolicyLimits } from "./PolicyLimits.js"

const HOUR_MS = 3_600_000

/** A transaction's own policy travels to every gateway in the agent's settings: kept small. */
export const TRANSACTION_POLICY_MAX_BYTES = 64 * 1024

const sqlFailure = (operation: string) => (cause: unknown) => Effect.fail(new StoreError({ operation, cause }))

const notFound = (transactionId: string) => new NotFound({ error: `transaction ${transactionId} not found` })

/** The service-role key may name any id: the agent must also exist. */
const agentExists = (agentId: string) =>
  Effect.flatMap(TrustEdgeRepo, (repo) => repo.agentExists(agentId)).pipe(
    Effect.filterOrFail(
      (exists) => exists,
      () => new NotFound({ error: `agent ${agentId} not found` })
    )
  )

/** Rolled back: unlike a policy change, nothing is stored, so sending it again is the whole remedy. */
const gatewaysUnreachable = (error: BusError) =>
  Effect.zipRight(
    Effect.logWarning("scoped transaction not shared with the gateways; rolled back").pipe(
      Effect.annotateLogs({ error: error.message })
    ),
    Effect.fail(
      new ServiceUnavailable({
        error: "not saved: the gateways cannot be told right now (NATS unreachable); send it again shortly"
      })
    )
  )

/**
 * The transaction's own policy: decoded as the policy routes decode one, as an agent's, the
 * defaults it leaves out at their loosest (they leave the agent's in force), and bounded.
 */
const extraPolicy = (document: unknown) =>
  Effect.gen(function* () {
    if (document === undefined) return undefined
    const decoded = decodePolicyDocument(document, "agent", "policy")
    if (Either.isLeft(decoded)) return yield* new BadRequest({ error: decoded.left })
    const policy = withUnsetDefaultsLoosest(yield* withinPolicyLimits(decoded.right, "policy"), document)
    const size = Buffer.byteLength(tryCanonicalJson(policy) ?? "")
    if (size > TRANSACTION_POLICY_MAX_BYTES)
      return yield* new BadRequest({
        error: `policy: must be at most ${TRANSACTION_POLICY_MAX_BYTES} bytes as JSON (it travels to every gateway); got ${size}`
      })
    return policy
  })

/** The agent's open transactions, as the gateways hold them. */
const gatewayList = (open: ReadonlyArray<ScopedTransactionRepo.StoredTransaction>) =>
  open.map((t) => ({
    transaction_id: t.transaction_id,
    tools: t.tools,
    ...(t.policy === null ? {} : { policy: t.policy }),
    expires_at: t.expires_at
  }))

/**
 * The agent's open transactions at `now`, to the gateways (the whole list: a write converges
 * whatever was pushed before). Run inside the change's SQL transaction, after the change.
 */
const pushOpen = (open: ReadonlyArray<ScopedTransactionRepo.StoredTransaction>, agentId: string) =>
  Effect.flatMap(AgentState, (state) => state.update(agentId, { transactions: gatewayList(open) }))

/** The stored transaction, if the caller may read (or write) its agent; otherwise "not found". */
const visible = (transactionId: string, access: "read" | "write") =>
  Effect.gen(function* () {
    const repo = yield* ScopedTransactionRepo.make
    const stored = yield* repo.get(transactionId)
    if (stored === undefined) return yield* notFound(transactionId)
    yield* (access === "read" ? readAgent(stored.agent_id) : writeAgent(stored.agent_id)).pipe(
      Effect.catchTag("NotFound", () => Effect.fail(notFound(transactionId)))
    )
    return stored
  })

export const TransactionsLive = HttpApiBuilder.group(CandorApi, "transactions", (handlers) =>
  handlers
    .handle("openTransaction", ({ payload }) =>
      Effect.gen(function* () {
        const agentId = payload.agent_id
        yield* writeAgent(agentId)
        yield* agentExists(agentId)
        const extra: Policy | undefined = yield* extraPolicy(payload.policy)
        const tools = distinctTools(payload.tools)
        const { org, agent } = yield* (yield* PolicyRepo).forAgent(agentId)
        const merged = transactionPolicy(resolvePolicy(org?.policy, agent?.policy), tools, extra)
        const now = yield* Clock.currentTimeMillis
        const actor = actorOf(yield* CurrentPrincipal)
        const stored: ScopedTransactionRepo.StoredTransaction = {
          transaction_id: `${TRANSACTION_ID_PREFIX}${randomUUID()}`,
          agent_id: agentId,
          action_type: payload.action_type,
          tools,
          policy: extra ?? null,
          merged_policy: merged,
          created_at: new Date(now).toISOString(),
          expires_at: new Date(now + payload.duration_hours * HOUR_MS).toISOString(),
          created_by: actor,
          ended_at: null,
          ended_by: null
        }
        const repo = yield* ScopedTransactionRepo.make
        const governance = yield* GovernanceLog
        yield* transaction(
          yield* SqlClient.SqlClient,
          Effect.gen(function* () {
            // First: the entry locks the agent's log head, so the count below and the push are this change's alone.
            yield* governance.append(agentGovernanceLog(agentId), {
              action: "transaction.open",
              actor,
              previous_state: null,
              new_state: {
                transaction_id: stored.transaction_id,
                action_type: stored.action_type,
                tools,
                expires_at: stored.expires_at
              },
              hashes: { policy_hash: policyHash(merged) }
            })
            yield* repo.insert(stored)
            const open = yield* repo.list(agentId, "active", now)
            if (open.length > TRANSACTION_LIMITS.maxActivePerAgent)
              return yield* new Conflict({
                error: `agent ${agentId} has ${TRANSACTION_LIMITS.maxActivePerAgent} open transactions, the most it may have; close one first`
              })
            yield* pushOpen(open, agentId)
          })
        ).pipe(Effect.catchTag("SqlError", sqlFailure("open transaction")))
        return ScopedTransactionRepo.withStatus(stored, now)
      }).pipe(Effect.catchTag("StoreError", internal), Effect.catchTag("BusError", gatewaysUnreachable))
    )
    .handle("getTransaction", ({ path }) =>
      Effect.gen(function* () {
        const stored = yield* visible(path.transaction_id, "read")
        return ScopedTransactionRepo.withStatus(stored, yield* Clock.currentTimeMillis)
      }).pipe(Effect.catchTag("StoreError", internal))
    )
    .handle("closeTransaction", ({ path }) =>
      Effect.gen(function* () {
        const stored = yield* visible(path.transaction_id, "write")
        const now = yield* Clock.currentTimeMillis
        const current = ScopedTransactionRepo.withStatus(stored, now)
        const ended = (status: string) =>
          new Conflict({
            error: `transaction ${stored.transaction_id} is already ${status}${status === "expired" ? ` (at ${stored.expires_at})` : ""}`
          })
        if (current.status !== "active") return yield* ended(current.status)
        const actor = actorOf(yield* CurrentPrincipal)
        const at = new Date(now).toISOString()
        const repo = yield* ScopedTransactionRepo.make
        const governance = yield* GovernanceLog
        yield* transaction(
          yield* SqlClient.SqlClient,
          Effect.gen(function* () {
            yield* governance.append(agentGovernanceLog(stored.agent_id), {
              action: "transaction.close",
              actor,
              previous_state: { transaction_id: stored.transaction_id, status: "active" },
              new_state: { transaction_id: stored.transaction_id, status: "completed" }
            })
            // Another close won the race: its answer was the 200, this one is the 409.
            if (!(yield* repo.close(stored.transaction_id, at, actor))) return yield* ended("completed")
            yield* pushOpen(yield* repo.list(stored.agent_id, "active", now), stored.agent_id)
          })
        ).pipe(Effect.catchTag("SqlError", sqlFailure("close transaction")))
        return { ...current, status: "completed" as const, ended_at: at, ended_by: actor }
      }).pipe(Effect.catchTag("StoreError", internal), Effect.catchTag("BusError", gatewaysUnreachable))
    )
    .handle("listAgentTransactions", ({ path, urlParams }) =>
      Effect.gen(function* () {
        yield* readAgent(path.agent_id)
        yield* agentExists(path.agent_id)
        const now = yield* Clock.currentTimeMillis
        const found = yield* (yield* ScopedTransactionRepo.make).list(path.agent_id, urlParams.status, now)
        return {
          agent_id: path.agent_id,
          transactions: found.map((stored) => ScopedTransactionRepo.withStatus(stored, now))
        }
      }).pipe(Effect.catchTag("StoreError", internal))
    )
)
