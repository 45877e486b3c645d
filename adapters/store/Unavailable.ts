/**
 * Whether a store failure means the database cannot be reached right now (an outage, a restart, a
 * pool that cannot connect) rather than a fault in the request or the code: callers answer 503 and
 * retry instead of 500. Read from the driver's error codes: Node's socket errors, PostgreSQL's
 * SQLSTATE class 08 (connection exception) and 57P0x (shutting down, cannot connect now), and the
 * messages pg gives a connection that ended or a pool that timed out.
 */
import type { StoreError } from "./Store.js"

const SOCKET_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN"
])
const MESSAGES =
  /connection terminated|timeout exceeded when trying to connect|connection (is )?closed|cannot connect now/i

export const isUnavailable = (error: StoreError): boolean => {
  let cause: unknown = error.cause
  // StoreError → SqlError → the driver's error (and, for some, its own cause).
  for (let depth = 0; depth < 4 && typeof cause === "object" && cause !== null; depth++) {
    const { code, message } = cause as { readonly code?: unknown; readonly message?: unknown }
    if (typeof code === "string" && (SOCKET_CODES.has(code) || code.startsWith("08") || /^57P0[1-3]$/.test(code)))
      return true
    if (typeof message === "string" && MESSAGES.test(message)) return true
    cause = (cause as { readonly cause?: unknown }).cause
  }
  return false
}
