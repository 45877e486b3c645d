/**
 * Scoped transactions (docs/transactions.md): opening, closing and reading them, for the API and any
 * other caller.
 *
 * Opening or closing one stores the row and its governance entry (`transaction.open` /
 * `transaction.close`, on the agent's log) and pushes the agent's open transactions to the gateways
 * (`AgentState`, member `transactions`), all in one SQL transaction: the governance entry holds the
 * agent's log head locked until the commit, so two changes on one agent cannot push their lists in
 * the wrong order, and a push that fails (a `BusError`: NATS unreachable) rolls the change back:
 * nothing is stored. Once it has succeeded, every gateway sees the change (a gateway whose copy has
 * not caught up asks the shared state once before refusing an id).
 *
 * Who may open, close or read is the caller's to check (`authorize`, asked with the transaction's
 * agent); the actor it names is the one recorded.
 */
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { randomUUID } from "node:crypto"
import { AgentState } from "../adapters/bus/AgentState.js"
import { GovernanceLog } from "../adapters/store/GovernanceLog.js"
import { PolicyRepo } from "../adapters/store/PolicyRepo.js"
import * as ScopedTransactionRepo from "../adapters/store/ScopedTransactionRepo.js"
import { StoreError } from "../adapters/store/Store.js"
import { transaction } from "../adapters/store/Transaction.js"
import { TrustEdgeRepo } from "../adapters/store/TrustEdgeRepo.js"
import { policyHash } from "../core/Commitments.js"
import { agentGovernanceLog } from "../core/Governance.js"
import { resolvePolicy } from "../core/Policy.js"
import { distinctTools, transactionPolicy } from "../core/ScopedTransaction.js"
import type { Policy } from "../core/schema/Policy.js"
import { TRANSACTION_ID_PREFIX, TRANSACTION_LIMITS } from "../core/schema/ScopedTransaction.js"

const body = { error: Schema.String }

/** No such transaction (or one of an agent the caller may not see), or no such agent. */
export class TransactionNotFound extends Schema.TaggedError<TransactionNotFound>()(
  "TransactionNotFound",
  body,
  HttpApiSchema.annotations({ status: 404 })
) {
  static of(transactionId: string) {
    return new TransactionNotFound({ error: `transaction ${transactionId} not found` })
  }
}

/** The change contradicts what is stored: too many open transactions, one already ended. */
export class TransactionConflict extends Schema.TaggedError<TransactionConflict>()(
  "TransactionConflict",
  body,
  HttpApiSchema.annotations({ status: 409 })
) {}

const HOUR_MS = 3_600_000

const sqlFailure = (operation: string) => (cause: unknown) => Effect.fail(new StoreError({ operation, cause }))

/** The agent's open transactions, as the gateways hold them. */
const gatewayList = (open: ReadonlyArray<ScopedTransactionRepo.StoredTransaction>) =>
  open.map((t) => ({
    transaction_id: t.transaction_id,
    tools: t.tools,
    ...(t.policy === null ? {} : { policy: t.policy }),
    expires_at: t.expires_at
  }))

export interface NewTransaction {
  readonly agent_id: string
  readonly action_type: string
  readonly tools: ReadonlyArray<string>
  readonly duration_hours: number
}

export const make = Effect.gen(function* () {
  const repo = yield* ScopedTransactionRepo.ScopedTransactionRepo
  const edges = yield* TrustEdgeRepo
  const policies = yield* PolicyRepo
  const governance = yield* GovernanceLog
  const state = yield* AgentState
  const sql = yield* SqlClient.SqlClient

  /**
   * The agent's open transactions at `now`, to the gateways (the whole list: a write converges
   * whatever was pushed before). Run inside the change's SQL transaction, after the change.
   */
  const pushOpen = (open: ReadonlyArray<ScopedTransactionRepo.StoredTransaction>, agentId: string) =>
    state.update(agentId, { transactions: gatewayList(open) })

  /** The service-role key may name any id: the agent must also exist. */
  const agentExists = (agentId: string) =>
    edges.agentExists(agentId).pipe(
      Effect.filterOrFail(
        (exists) => exists,
        () => new TransactionNotFound({ error: `agent ${agentId} not found` })
      ),
      Effect.asVoid
    )

  /** The stored transaction, if `authorize` lets the caller at its agent. */
  const visible = <E, R>(transactionId: string, authorize: (agentId: string) => Effect.Effect<void, E, R>) =>
    Effect.gen(function* () {
      const stored = yield* repo.get(transactionId)
      if (stored === undefined) return yield* TransactionNotFound.of(transactionId)
      yield* authorize(stored.agent_id)
      return stored
    })

  /** Opens a transaction of the agent (which exists), `extra` its own policy, decoded and bounded. */
  const open = (input: NewTransaction, extra: Policy | undefined, actor: string) =>
    Effect.gen(function* () {
      const agentId = input.agent_id
      const tools = distinctTools(input.tools)
      const { org, agent } = yield* policies.forAgent(agentId)
      const merged = transactionPolicy(resolvePolicy(org?.policy, agent?.policy), tools, extra)
      const now = yield* Clock.currentTimeMillis
      const stored: ScopedTransactionRepo.StoredTransaction = {
        transaction_id: `${TRANSACTION_ID_PREFIX}${randomUUID()}`,
        agent_id: agentId,
        action_type: input.action_type,
        tools,
        policy: extra ?? null,
        merged_policy: merged,
        created_at: new Date(now).toISOString(),
        expires_at: new Date(now + input.duration_hours * HOUR_MS).toISOString(),
        created_by: actor,
        ended_at: null,
        ended_by: null
      }
      yield* transaction(
        sql,
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
            return yield* new TransactionConflict({
              error: `agent ${agentId} has ${TRANSACTION_LIMITS.maxActivePerAgent} open transactions, the most it may have; close one first`
            })
          yield* pushOpen(open, agentId)
        })
      ).pipe(Effect.catchTag("SqlError", sqlFailure("open transaction")))
      return ScopedTransactionRepo.withStatus(stored, now)
    })

  const get = <E, R>(transactionId: string, authorize: (agentId: string) => Effect.Effect<void, E, R>) =>
    Effect.gen(function* () {
      const stored = yield* visible(transactionId, authorize)
      return ScopedTransactionRepo.withStatus(stored, yield* Clock.currentTimeMillis)
    })

  const close = <E, R>(
    transactionId: string,
    authorize: (agentId: string) => Effect.Effect<void, E, R>,
    actor: string
  ) =>
    Effect.gen(function* () {
      const stored = yield* visible(transactionId, authorize)
      const now = yield* Clock.currentTimeMillis
      const current = ScopedTransactionRepo.withStatus(stored, now)
      const ended = (status: string) =>
        new TransactionConflict({
          error: `transaction ${stored.transaction_id} is already ${status}${status === "expired" ? ` (at ${stored.expires_at})` : ""}`
        })
      if (current.status !== "active") return yield* ended(current.status)
      const at = new Date(now).toISOString()
      yield* transaction(
        sql,
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
    })

  const list = (agentId: string, status: Parameters<typeof repo.list>[1]) =>
    Effect.gen(function* () {
      yield* agentExists(agentId)
      const now = yield* Clock.currentTimeMillis
      const found = yield* repo.list(agentId, status, now)
      return { agent_id: agentId, transactions: found.map((stored) => ScopedTransactionRepo.withStatus(stored, now)) }
    })

  return { agentExists, open, get, close, list }
})

export class Transactions extends Context.Tag("candor/services/Transactions")<
  Transactions,
  Effect.Effect.Success<typeof make>
>() {}

export const layer = Layer.effect(Transactions, make)
