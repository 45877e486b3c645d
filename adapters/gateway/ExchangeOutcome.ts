/**
 * How one proxied exchange ended, as the side path hears of it. Every exchange reports exactly one
 * outcome, so a disconnect or an upstream failure is recorded rather than lost.
 *
 * - `complete`: the upstream's body ended cleanly and was handed to the client in full.
 * - `partial`: the body ended cleanly but its content was cut short (an SSE stream without its
 *   terminal event). The proxy cannot know this; the Inspector, which parses, reports it.
 * - `upstream_error`: connection refused, DNS failure, reset, or the upstream died mid-body.
 * - `timeout`: connect, response-headers or idle-body timeout.
 * - `client_aborted`: the client went away first; the upstream request was aborted.
 *
 * The type is the published event's `outcome` (`core/schema/Event.ts`) with every member present:
 * `status` (the upstream status, when response headers arrived), `bytes` (body bytes received from
 * the upstream, before any decoding), `cause` (a short machine-readable cause, an errno or undici
 * code; never a header or body excerpt).
 */
import type { ExchangeOutcome as PublishedOutcome } from "../../core/schema/Event.js"

export type ExchangeOutcome = Required<typeof PublishedOutcome.Type>
export type OutcomeKind = ExchangeOutcome["kind"]

/**
 * The side observer of a response body. It runs on the event loop after each chunk has been handed to
 * the client, so it must be cheap; the proxy catches anything it throws so the main path never sees it.
 */
export interface ResponseObserver {
  readonly chunk: (bytes: Uint8Array) => void
  /**
   * `undecodable`: the body's content coding could not be decoded (`DecodingObserver.ts`), so the
   * chunks seen are not the answer's text; the exchange is recorded as unanalysed.
   */
  readonly end: (outcome: ExchangeOutcome, undecodable?: boolean) => void
}

export const noopObserver: ResponseObserver = { chunk: () => {}, end: () => {} }
