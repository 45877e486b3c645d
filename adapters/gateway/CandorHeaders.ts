/**
 * The request headers addressed to Candor (never forwarded, see `Headers.ts`), checked before the
 * provider is called: a value the gateway took and the worker then refused would be an answered
 * exchange with no checkpoint (its event dead-lettered), so what the gateway accepts is exactly what
 * the worker's schemas decode.
 *
 * - `x-candor-session`: `SessionId` (1 to 256 characters, no whitespace); absent or empty: derived.
 * - `x-candor-agent`: `AgentName` (1 to 128 printable ASCII characters, no edge spaces); absent or
 *   empty: the key's unnamed agent.
 * - `x-transaction-id`: `TransactionId` (`txn-` and a lowercase UUID); absent or empty: none.
 *
 * Each at most once: a repeated one is refused rather than one of its values picked. A refusal is
 * 400 `{error}` naming the header, never echoing its value. On the usual request none of them is
 * present and this costs three property reads; otherwise a regular expression test each (a quarter
 * of a Schema decode) and, only then, one pass over the raw headers to count repetitions.
 */
import type { IncomingHttpHeaders } from "node:http"
import { AGENT_NAME_PATTERN, IDENTIFIER_PATTERN } from "../../core/schema/Ids.js"
import { TRANSACTION_ID_PATTERN } from "../../core/schema/ScopedTransaction.js"
import { rawCount } from "./RawHeaders.js"

export const SESSION_HEADER = "x-candor-session"
export const AGENT_HEADER = "x-candor-agent"
/** A scoped transaction (docs/transactions.md): the request is evaluated against the agent's policy narrowed by it. */
export const TRANSACTION_HEADER = "x-transaction-id"

export interface CandorHeaders {
  readonly session: string | undefined
  readonly agent: string | undefined
  readonly transaction: string | undefined
}

export type CandorHeadersRead =
  { readonly ok: true; readonly headers: CandorHeaders } | { readonly ok: false; readonly error: string }

const NONE: CandorHeadersRead = { ok: true, headers: { session: undefined, agent: undefined, transaction: undefined } }

const CHECKS: ReadonlyArray<readonly [name: string, pattern: RegExp, rule: string]> = [
  [SESSION_HEADER, IDENTIFIER_PATTERN, "must be 1 to 256 characters without whitespace"],
  [
    AGENT_HEADER,
    AGENT_NAME_PATTERN,
    "must be 1 to 128 printable ASCII characters, not starting or ending with a space"
  ],
  [TRANSACTION_HEADER, TRANSACTION_ID_PATTERN, "must be txn- and a lowercase UUID"]
]

/** The value of `name` when sent exactly once, `undefined` when absent, `null` when repeated. */
const single = (
  headers: IncomingHttpHeaders,
  raw: ReadonlyArray<string> | undefined,
  name: string
): string | undefined | null => {
  const value = headers[name]
  if (value === undefined) return undefined
  if (typeof value !== "string") return value.length === 1 ? value[0]! : null
  // Node joins a repeated header's values with ", ": only the raw list tells one value from several.
  return raw === undefined || rawCount(raw, name) === 1 ? value : null
}

/** The Candor headers of a request, each checked; the first failing one names the refusal. */
export const readCandorHeaders = (
  headers: IncomingHttpHeaders,
  raw: ReadonlyArray<string> | undefined
): CandorHeadersRead => {
  if (headers[SESSION_HEADER] === undefined && headers[AGENT_HEADER] === undefined) {
    if (headers[TRANSACTION_HEADER] === undefined) return NONE
  }
  const values: Array<string | undefined> = []
  for (const [name, pattern, rule] of CHECKS) {
    const value = single(headers, raw, name)
    if (value === null) return { ok: false, error: `${name}: must be sent once` }
    if (value === undefined || value === "") values.push(undefined)
    else if (pattern.test(value)) values.push(value)
    else return { ok: false, error: `${name}: ${rule}` }
  }
  return { ok: true, headers: { session: values[0], agent: values[1], transaction: values[2] } }
}
