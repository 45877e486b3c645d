/**
 * Which headers cross the gateway. RFC 9110 §7.6.1: hop-by-hop headers describe one connection and
 * must not be forwarded; neither may the headers a `Connection` header names. `x-candor-*` headers
 * are addressed to Candor itself (agent name, session) and are consumed here, as is
 * `x-transaction-id` (a scoped transaction, docs/transactions.md).
 */
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from "node:http"
import { acceptEncodingForUpstream } from "./ContentCoding.js"

const HOP_BY_HOP: ReadonlySet<string> = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authenticate",
  "proxy-authorization",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade"
])

/** Headers named by `Connection: a, b`, lowercased; `undefined` (the usual case) costs nothing. */
const connectionTokens = (value: string | undefined): ReadonlySet<string> | undefined => {
  if (value === undefined) return undefined
  const named = new Set<string>()
  for (const token of value.split(",")) {
    const name = token.trim().toLowerCase()
    if (name !== "" && name !== "close" && name !== "keep-alive") named.add(name)
  }
  return named.size === 0 ? undefined : named
}

const isHopByHop = (lower: string, named: ReadonlySet<string> | undefined): boolean =>
  HOP_BY_HOP.has(lower) || lower.startsWith("proxy-") || (named !== undefined && named.has(lower))

/**
 * The client's headers as undici's flat `[name, value, …]` list, original case and order kept.
 * Also dropped: `host` (undici sets the upstream's), `content-length` (undici sets it from the body,
 * which a nudge may have rewritten) and `expect` (Node already answered `100-continue`; undici
 * refuses the header). `Accept-Encoding` is rewritten to the codings the gateway decodes
 * (`ContentCoding.ts`), and added (`identity`) when the client sent none: the gateway reads every
 * answer, so the provider must answer in a coding it can read.
 */
export const requestHeadersForUpstream = (
  raw: ReadonlyArray<string>,
  connection: string | undefined
): Array<string> => {
  const named = connectionTokens(connection)
  const out: Array<string> = []
  let acceptEncoding = false
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!
    const lower = name.toLowerCase()
    if (lower === "accept-encoding") {
      acceptEncoding = true
      out.push(name, acceptEncodingForUpstream(raw[i + 1]!))
      continue
    }
    if (
      isHopByHop(lower, named) ||
      lower === "host" ||
      lower === "content-length" ||
      lower === "expect" ||
      lower === "x-transaction-id" ||
      lower.startsWith("x-candor-")
    )
      continue
    out.push(name, raw[i + 1]!)
  }
  if (!acceptEncoding) out.push("accept-encoding", acceptEncodingForUpstream(undefined))
  return out
}

/** The upstream's response headers (undici gives them lowercased, repeated ones as arrays), minus hop-by-hop. */
export const responseHeadersForClient = (headers: IncomingHttpHeaders): OutgoingHttpHeaders => {
  const connection = headers["connection"]
  const named = connectionTokens(typeof connection === "string" ? connection : undefined)
  const out: OutgoingHttpHeaders = {}
  for (const name in headers) {
    if (isHopByHop(name, named)) continue
    const value = headers[name]
    if (value !== undefined) out[name] = value
  }
  return out
}

/** Server-sent events: the client waits for the headers before the first event, so they go out at once. */
export const isEventStream = (headers: IncomingHttpHeaders): boolean => {
  const type = headers["content-type"]
  return typeof type === "string" && type.startsWith("text/event-stream")
}

/** A response streams when the upstream did not announce its length (chunked or SSE). */
export const isStreamingResponse = (headers: IncomingHttpHeaders): boolean =>
  headers["content-length"] === undefined || isEventStream(headers)
