/**
 * The seam between the pass-through proxy and the integrity pipeline. The gateway server calls it
 * at three points of every exchange; the default (`layerNoop`) forwards everything untouched.
 *
 * 1. `beforeRequest`: may rewrite the body (a pending nudge) or answer instead of forwarding
 *    (containment 403, policy 403). It also says whether the response must be held for a verdict,
 *    and which headers of its own (the policy verdict) the client's response carries.
 * 2. `onResponse` / `onFailure`: the side path. `onResponse` returns the observer that gets a copy of
 *    every body chunk and the outcome; `onFailure` hears of exchanges that never got response headers.
 * 3. `completeNonStreaming`: only for held responses (`enforce` mode, non-streaming): the server has
 *    buffered the body and waits for the verdict before answering.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from "node:http"
import { type ExchangeOutcome, noopObserver, type ResponseObserver } from "./ExchangeOutcome.js"
import type { ProviderName } from "../providers/Provider.js"
import type { BytesHolder } from "./InFlightBytes.js"

export interface InspectedRequest {
  readonly provider: ProviderName
  /** The upstream URL the request goes to (path and query as the client sent them). */
  readonly url: URL
  /** The client's headers, as Node parsed them (lowercase names); they carry keys: never log them. */
  readonly headers: IncomingHttpHeaders
  /**
   * The headers as received, `[name, value, …]`: Node's `headers` joins some repeated headers and
   * drops others (a second `Authorization`), and every repetition is forwarded, so a repeated
   * credential or Candor header is only seen here. The server always sets it; without it (tests
   * that build requests by hand) `headers` stands in.
   */
  readonly rawHeaders?: ReadonlyArray<string>
  /** The peer's socket address (`req.socket.remoteAddress`): with a trusted proxy's `X-Forwarded-For`, who the unknown-key limit counts against. */
  readonly client?: string | undefined
  /** Whose bytes these are, as `beforeBody` said before the body was read (its key hash is not computed again). */
  readonly holder?: BytesHolder | undefined
  readonly body: Uint8Array
  /** `process.hrtime.bigint()` when the body was complete (the overhead clock's start): a trace's request span starts there. */
  readonly startedAt?: bigint | undefined
}

/** An answer the gateway gives itself instead of (or in place of) the upstream's. */
export interface GatewayResponse {
  readonly status: number
  readonly headers: OutgoingHttpHeaders
  readonly body: Uint8Array
}

export type RequestDecision =
  | {
      /** The body to send upstream: the client's bytes, or a rewrite (nudge injected). */
      readonly forward: Uint8Array
      /** Opaque to the server; handed back on the later calls. */
      readonly context: unknown
      /** Buffer the response and call `completeNonStreaming` before answering (enforce, non-streaming). */
      readonly hold: boolean
      /** Headers added to whatever the client gets for this exchange (`X-Policy-Verdict`). */
      readonly headers?: Readonly<Record<string, string>> | undefined
    }
  | { readonly respond: GatewayResponse }

/** What the Inspector asks of a request's body while it arrives. */
export interface BodyWatch {
  /** Whose bytes these are (its credential's key hash, its agent's organization): the server counts them (InFlightBytes.ts). */
  readonly holder: BytesHolder
  /**
   * A check of the body received so far, when its first bytes can already refuse the request (a
   * flood of tools against an active policy: ToolCaps.ts `screenTools`): an answer to give now
   * without reading the rest, `"within"` when nothing more is to be learned, `undefined` to ask again
   * with more bytes.
   */
  readonly screen?: ((partial: Uint8Array) => GatewayResponse | "within" | undefined) | undefined
}

export interface ResponseHead {
  readonly status: number
  readonly headers: IncomingHttpHeaders
  /** True when the body streams (SSE or chunked without a length). */
  readonly stream: boolean
}

export type HeldVerdict = { readonly pass: true } | { readonly respond: GatewayResponse }

export class Inspector extends Context.Tag("candor/adapters/gateway/Inspector")<
  Inspector,
  {
    /**
     * What the head of a request tells before its body is read (optional: without it every request
     * shares one credential budget and nothing is screened).
     */
    readonly beforeBody?: (
      provider: ProviderName,
      url: URL,
      headers: IncomingHttpHeaders,
      rawHeaders: ReadonlyArray<string>
    ) => BodyWatch
    readonly beforeRequest: (request: InspectedRequest) => Effect.Effect<RequestDecision>
    /**
     * The same decision without an effect when it needs none (the usual request: a map lookup, no
     * nudge, nothing to announce), so the hot path runs no fiber and no promise; `undefined` when
     * this request needs `beforeRequest`. Optional: an Inspector without it is always asked `beforeRequest`.
     */
    readonly beforeRequestSync?: (request: InspectedRequest) => RequestDecision | undefined
    /** Synchronous and cheap: it runs between the upstream's headers and the client's. */
    readonly onResponse: (context: unknown, head: ResponseHead) => ResponseObserver
    /** The exchange ended before response headers: refused, timed out, or the client left. */
    readonly onFailure: (context: unknown, outcome: ExchangeOutcome) => void
    readonly completeNonStreaming: (
      context: unknown,
      response: { readonly status: number; readonly headers: IncomingHttpHeaders; readonly body: Uint8Array }
    ) => Effect.Effect<HeldVerdict>
  }
>() {
  /** Forwards every request unchanged and observes nothing. */
  static readonly layerNoop: Layer.Layer<Inspector> = Layer.succeed(Inspector, {
    beforeRequest: (request) => Effect.succeed({ forward: request.body, context: undefined, hold: false }),
    onResponse: () => noopObserver,
    onFailure: () => {},
    completeNonStreaming: () => Effect.succeed({ pass: true })
  })
}

/** The gateway's own JSON answers: `{"error": …}` plus any structured members. */
export const jsonResponse = (status: number, body: Record<string, unknown>): GatewayResponse => ({
  status,
  headers: { "content-type": "application/json" },
  body: Buffer.from(JSON.stringify(body))
})
