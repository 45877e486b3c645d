/**
 * Scoped transactions' routes (docs/transactions.md; groups/Transactions.ts), through the
 * Transactions service (services/Transactions.ts). Access is the agent policy's: who may write the
 * agent's policy (`writeAgent`) opens and closes; readers of the agent read. A transaction of an agent
 * the caller may not see is "not found". A transaction's own policy is decoded here, as the policy
 * routes decode one. If the gateways cannot be told the change is rolled back: the answer is 503 and
 * nothing is stored; send it again.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type { BusError } from "../../../adapters/bus/BusError.js"
import { actorOf, CurrentPrincipal } from "../../../adapters/auth/Principal.js"
import { BadRequest, ServiceUnavailable } from "../../../adapters/http/ApiErrors.js"
import { tryCanonicalJson } from "../../../core/Canonical.js"
import { withUnsetDefaultsLoosest } from "../../../core/ScopedTransaction.js"
import { TransactionNotFound, Transactions } from "../../../services/Transactions.js"
import { CandorApi } from "../Api.js"
import { readAgent, writeAgent } from "./AgentAccess.js"
import { decodePolicyDocument } from "./PolicyBody.js"
import { withinPolicyLimits } from "./PolicyLimits.js"

/** A transaction's own policy travels to every gateway in the agent's settings: kept small. */
export const TRANSACTION_POLICY_MAX_BYTES = 64 * 1024

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

/** An agent the caller may not read (or write) hides its transactions: "not found". */
const access = (check: typeof readAgent, transactionId: string) => (agentId: string) =>
  check(agentId).pipe(Effect.catchTag("NotFound", () => Effect.fail(TransactionNotFound.of(transactionId))))

export const TransactionsLive = HttpApiBuilder.group(CandorApi, "transactions", (handlers) =>
  Effect.map(Transactions, (transactions) =>
    handlers
      .handle("openTransaction", ({ payload }) =>
        Effect.gen(function* () {
          yield* writeAgent(payload.agent_id)
          yield* transactions.agentExists(payload.agent_id)
          const extra = yield* extraPolicy(payload.policy)
          const actor = actorOf(yield* CurrentPrincipal)
          return yield* transactions.open(payload, extra, actor)
        }).pipe(Effect.catchTag("BusError", gatewaysUnreachable))
      )
      .handle("getTransaction", ({ path }) =>
        transactions.get(path.transaction_id, access(readAgent, path.transaction_id))
      )
      .handle("closeTransaction", ({ path }) =>
        Effect.gen(function* () {
          const actor = actorOf(yield* CurrentPrincipal)
          return yield* transactions.close(path.transaction_id, access(writeAgent, path.transaction_id), actor)
        }).pipe(Effect.catchTag("BusError", gatewaysUnreachable))
      )
      .handle("listAgentTransactions", ({ path, urlParams }) =>
        Effect.zipRight(readAgent(path.agent_id), transactions.list(path.agent_id, urlParams.status))
      )
  )
)
