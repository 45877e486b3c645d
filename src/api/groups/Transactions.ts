/**
 * Scoped transactions (docs/transactions.md): open one for an agent (its tools, for 1 to 24 hours),
 * read it, close it, list an agent's. Who may write the agent's policy opens and closes; readers of
 * the agent read; an agent or a transaction the caller may not see is 404.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as Schema from "effect/Schema"
import { Authentication } from "../../../adapters/auth/Authentication.js"
import { BadRequest, Conflict, Forbidden, InternalError, NotFound } from "../../../adapters/http/ApiErrors.js"
import { AgentId, Identifier } from "../../../core/schema/Ids.js"
import {
  ScopedTransaction,
  TransactionList,
  TransactionRequest,
  TransactionStatus
} from "../../../core/schema/ScopedTransaction.js"
import { TransactionConflict, TransactionNotFound } from "../../../services/Transactions.js"

const IdPath = Schema.Struct({ transaction_id: Identifier })

export class TransactionsApi extends HttpApiGroup.make("transactions")
  .add(
    HttpApiEndpoint.post("openTransaction", "/transactions")
      .setPayload(TransactionRequest)
      .addSuccess(ScopedTransaction, { status: 201 })
  )
  .add(
    HttpApiEndpoint.get("getTransaction", "/transactions/:transaction_id").setPath(IdPath).addSuccess(ScopedTransaction)
  )
  .add(
    HttpApiEndpoint.del("closeTransaction", "/transactions/:transaction_id")
      .setPath(IdPath)
      .addSuccess(ScopedTransaction)
  )
  .add(
    HttpApiEndpoint.get("listAgentTransactions", "/agents/:agent_id/transactions")
      .setPath(Schema.Struct({ agent_id: AgentId }))
      .setUrlParams(Schema.Struct({ status: Schema.optional(TransactionStatus) }))
      .addSuccess(TransactionList)
  )
  .addError(BadRequest)
  .addError(Forbidden)
  .addError(NotFound)
  .addError(Conflict)
  .addError(InternalError)
  // The Transactions service's own errors (services/Transactions.ts), each with its status.
  .addError(TransactionNotFound)
  .addError(TransactionConflict)
  .middleware(Authentication) {}
