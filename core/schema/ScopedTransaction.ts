/**
 * Scoped transactions (docs/transactions.md): a bounded window in which an agent may use only the
 * tools it named, under its own policy narrowed to them. What the API takes and answers, and what
 * the gateways hold of an open one in the agent's settings (adapters/bus/AgentState.ts).
 */
import { Schema } from "effect"
import { AgentId, DateTimeString } from "./Ids.js"
import { literalUnion } from "./Literals.js"
import { Policy } from "./Policy.js"

export const TRANSACTION_ID_PREFIX = "txn-"

/** `txn-` and a lowercase UUID, as the API makes them; the gateway checks `X-Transaction-Id` with it. */
export const TRANSACTION_ID_PATTERN = /^txn-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

export const TransactionId = Schema.String.pipe(
  Schema.pattern(TRANSACTION_ID_PATTERN, { message: () => "must be txn- and a lowercase UUID" })
).annotations({ identifier: "TransactionId", description: "`txn-<uuid>`" })

/** Bounds of a transaction: its tools, its duration, how many one agent has open at once. */
export const TRANSACTION_LIMITS = {
  maxTools: 64,
  minHours: 1,
  maxHours: 24,
  maxActionTypeLength: 128,
  /** Open transactions travel in the agent's settings on every gateway: a handful, not a history. */
  maxActivePerAgent: 16
} as const

/**
 * A tool name as providers allow them (Anthropic and OpenAI `[A-Za-z0-9_-]`, Gemini also `.` and
 * `:`), up to 128 characters: a name, never a glob, so "only these tools" means exactly these.
 */
export const TRANSACTION_TOOL_NAME = /^[A-Za-z0-9_.:-]{1,128}$/

export const TransactionToolName = Schema.String.pipe(
  Schema.pattern(TRANSACTION_TOOL_NAME, {
    message: () => "must be a tool name of 1 to 128 letters, digits, _ . : or - (a name, not a pattern)"
  })
).annotations({ identifier: "TransactionToolName" })

export const TRANSACTION_STATUSES = ["active", "completed", "expired"] as const
export const TransactionStatus = literalUnion(TRANSACTION_STATUSES, {
  identifier: "TransactionStatus",
  description: "active until closed (completed) or until expires_at has passed (expired)"
})
export type TransactionStatus = typeof TransactionStatus.Type

export const TransactionRequest = Schema.Struct({
  agent_id: AgentId,
  action_type: Schema.String.pipe(
    Schema.filter((s) => s.trim().length > 0 && s.length <= TRANSACTION_LIMITS.maxActionTypeLength, {
      message: () => `must be 1 to ${TRANSACTION_LIMITS.maxActionTypeLength} characters, not only spaces`
    })
  ).annotations({
    description: "What the transaction is for (a label, e.g. refund or data_export)",
    arbitrary: () => (fc) => fc.stringMatching(/^[a-z_]{1,32}$/)
  }),
  tools: Schema.Array(TransactionToolName).pipe(
    Schema.minItems(1, { message: () => `must list 1 to ${TRANSACTION_LIMITS.maxTools} tool names` }),
    Schema.maxItems(TRANSACTION_LIMITS.maxTools, {
      message: () => `must list 1 to ${TRANSACTION_LIMITS.maxTools} tool names`
    })
  ),
  duration_hours: Schema.Number.pipe(
    Schema.filter((n) => Number.isInteger(n) && n >= TRANSACTION_LIMITS.minHours && n <= TRANSACTION_LIMITS.maxHours, {
      message: () =>
        `must be a whole number of hours from ${TRANSACTION_LIMITS.minHours} to ${TRANSACTION_LIMITS.maxHours}`
    })
  ).annotations({
    // Built, not filtered: a random number is almost never a whole number in range.
    arbitrary: () => (fc) => fc.integer({ min: TRANSACTION_LIMITS.minHours, max: TRANSACTION_LIMITS.maxHours })
  }),
  /** Decoded by the handler with the policy API's own decoder (unknown members are errors, paths named). */
  policy: Schema.optional(Schema.Unknown).annotations({
    description: "A tool policy (CLPI 1.0) to add to the agent's for the transaction; it can only make it stricter"
  })
}).annotations({ identifier: "TransactionRequest" })

export const ScopedTransaction = Schema.Struct({
  transaction_id: TransactionId,
  agent_id: AgentId,
  action_type: Schema.String,
  tools: Schema.Array(Schema.String).annotations({ description: "The tools allowed, distinct, in the order given" }),
  status: TransactionStatus,
  policy: Schema.NullOr(Policy).annotations({
    description: "The policy the request added, normalised; null without one"
  }),
  merged_policy: Policy.annotations({
    description:
      "The agent's policy in force at creation narrowed to `tools` and merged with `policy` (docs/transactions.md); the gateway applies the same rule to the agent's policy in force at each request"
  }),
  created_at: DateTimeString,
  expires_at: DateTimeString,
  created_by: Schema.String.annotations({ description: "The user who opened it, or `service`" }),
  ended_at: Schema.NullOr(DateTimeString).annotations({ description: "When it was closed; null otherwise" }),
  ended_by: Schema.NullOr(Schema.String).annotations({ description: "Who closed it; null otherwise" })
}).annotations({ identifier: "ScopedTransaction" })
export type ScopedTransaction = typeof ScopedTransaction.Type

export const TransactionList = Schema.Struct({
  agent_id: AgentId,
  transactions: Schema.Array(ScopedTransaction).annotations({ description: "Newest first" })
}).annotations({ identifier: "TransactionList" })

/**
 * An open transaction as the gateways hold it in the agent's settings: enough to evaluate a
 * request against it without asking anyone (the policy it narrows is the settings' own `policy`).
 */
export const GatewayTransaction = Schema.Struct({
  transaction_id: Schema.String,
  tools: Schema.Array(Schema.String),
  policy: Schema.optional(Policy),
  expires_at: DateTimeString
}).annotations({ identifier: "GatewayTransaction" })
export type GatewayTransaction = typeof GatewayTransaction.Type
