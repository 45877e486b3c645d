/**
 * One proxied request/response, as an undici dispatch handler. Chunks go to the client as they
 * arrive (one `write` per upstream chunk: never re-chunked, never buffered beyond Node's socket
 * buffer); when the client's socket is full the upstream read is paused until `drain` (backpressure).
 * A copy of each chunk goes to the side observer after the client's write.
 *
 * The handler is a class so a request costs one object plus two bound listeners, not a closure tree.
 */
import type { IncomingHttpHeaders, OutgoingHttpHeaders, ServerResponse } from "node:http"
import type { Dispatcher } from "undici"
import { decodingObserver } from "./DecodingObserver.js"
import type { ExchangeOutcome, OutcomeKind, ResponseObserver } from "./ExchangeOutcome.js"
import { isEventStream, isStreamingResponse, responseHeadersForClient } from "./Headers.js"
import type { Upstream } from "./Upstreams.js"

/** Header carrying the gateway's own time: see `overheadMs`. */
export const OVERHEAD_HEADER = "x-candor-overhead-ms"

/** A response the gateway writes itself (errors, blocks). */
export interface LocalResponse {
  readonly status: number
  readonly headers: OutgoingHttpHeaders
  readonly body: Uint8Array
}

/** What the exchange reports to, and asks of, the layer above (the gateway server + Inspector). */
export interface ExchangeSink {
  /** Buffer a non-streaming response and ask `onHeld` before answering. */
  readonly hold: boolean
  readonly onHead: (status: number, headers: IncomingHttpHeaders, stream: boolean) => ResponseObserver
  readonly onFailure: (outcome: ExchangeOutcome) => void
  /** Resolves `undefined` to pass the upstream's bytes, or the response to send instead. */
  readonly onHeld: (
    status: number,
    headers: IncomingHttpHeaders,
    body: Uint8Array
  ) => Promise<LocalResponse | undefined>
}

export interface ForwardRequest {
  readonly upstream: Upstream
  readonly method: string
  /** Base path + the client's path and query, unchanged. */
  readonly path: string
  readonly headers: Array<string>
  readonly body: Uint8Array
  /** `process.hrtime.bigint()` when the gateway began its own work on this request. */
  readonly startedAt: bigint
  /** The gateway's own headers for every response of this exchange (upstream's, held, or error). */
  readonly responseHeaders?: Readonly<Record<string, string>> | undefined
}

class ClientAborted extends Error {
  override readonly name = "ClientAborted"
}

const TIMEOUT_CODES: ReadonlySet<string> = new Set([
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
  "ETIMEDOUT"
])

const errorCode = (error: unknown): string => {
  const e = error as { code?: unknown; cause?: { code?: unknown } } | undefined
  const code = e?.code ?? e?.cause?.code
  return typeof code === "string" ? code : "UNKNOWN"
}

/** Milliseconds with microsecond precision, as the overhead header shows them. */
export const formatMs = (ns: bigint): string => (Number(ns) / 1e6).toFixed(3)

/** Writes a complete gateway-made response (JSON errors, blocks), with the overhead header. */
export const writeLocal = (res: ServerResponse, response: LocalResponse, overheadNs: bigint): void => {
  if (res.headersSent || res.destroyed) return
  res.writeHead(response.status, {
    ...response.headers,
    "content-length": response.body.byteLength,
    [OVERHEAD_HEADER]: formatMs(overheadNs)
  })
  res.end(response.body)
}

export const jsonError = (status: number, message: string): LocalResponse => ({
  status,
  headers: { "content-type": "application/json" },
  body: Buffer.from(JSON.stringify({ error: message }))
})

export class Exchange implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | undefined
  private observer: ResponseObserver | undefined
  private status: number | undefined
  private statusMessage: string | undefined
  private upstreamHeaders: IncomingHttpHeaders | undefined
  private held: Array<Buffer> | undefined
  private bytes = 0
  private done = false
  private dispatchedAt = 0n
  private upstreamAt = 0n

  constructor(
    private readonly res: ServerResponse,
    private readonly request: ForwardRequest,
    private readonly sink: ExchangeSink
  ) {}

  /** Sends the request upstream; the client's `close` and `drain` drive abort and backpressure. */
  start(): void {
    this.res.on("close", this.onClientClose)
    this.res.on("drain", this.onDrain)
    const { body, headers, method, path, upstream } = this.request
    this.dispatchedAt = process.hrtime.bigint()
    upstream.pool.dispatch({ path, method, headers, body: body.byteLength === 0 ? null : body }, this)
  }

  /** Gateway time so far: before dispatch, plus since the upstream's headers arrived. */
  private overheadNs(): bigint {
    return this.dispatchedAt - this.request.startedAt + (process.hrtime.bigint() - this.upstreamAt)
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller
    if (this.done) controller.abort(new ClientAborted("client went away"))
  }

  onResponseStart(
    _controller: Dispatcher.DispatchController,
    status: number,
    headers: IncomingHttpHeaders,
    statusMessage?: string
  ): void {
    if (status < 200 || this.done) return // 1xx interim responses are Node's and undici's business
    this.upstreamAt = process.hrtime.bigint()
    this.status = status
    this.statusMessage = statusMessage
    const stream = isStreamingResponse(headers)
    if (this.sink.hold && !stream) {
      this.held = []
      this.upstreamHeaders = headers
      return
    }
    const out = responseHeadersForClient(headers)
    if (stream) out["x-accel-buffering"] = "no" // nginx and friends must not buffer a stream either
    if (this.request.responseHeaders !== undefined) Object.assign(out, this.request.responseHeaders)
    this.observer = this.safeHead(status, headers, stream)
    out[OVERHEAD_HEADER] = formatMs(this.overheadNs())
    if (statusMessage !== undefined && statusMessage !== "") this.res.writeHead(status, statusMessage, out)
    else this.res.writeHead(status, out)
    // An event stream's headers go out now: SSE clients wait for them before the first event. Other
    // responses' headers leave with the first chunk, in the same write (one system call less).
    if (stream && isEventStream(headers)) this.res.flushHeaders()
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.done) return
    this.bytes += chunk.byteLength
    if (this.held !== undefined) {
      this.held.push(chunk)
      return
    }
    if (!this.res.write(chunk)) controller.pause()
    const observer = this.observer
    if (observer !== undefined) {
      try {
        observer.chunk(chunk)
      } catch {
        this.observer = undefined // a broken observer loses its side copy, never the client's bytes
      }
    }
  }

  onResponseEnd(): void {
    if (this.done) return
    if (this.held !== undefined) return this.releaseHeld(Buffer.concat(this.held, this.bytes))
    this.done = true
    this.res.end()
    this.report("complete", undefined)
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    if (this.done) return // our own abort after the client left: already reported
    this.done = true
    const code = errorCode(error)
    const kind: OutcomeKind = TIMEOUT_CODES.has(code) ? "timeout" : "upstream_error"
    if (this.res.headersSent) {
      // Mid-body: the client must see a broken stream, not a clean (and wrong) end.
      this.res.destroy()
    } else {
      if (this.upstreamAt === 0n) this.upstreamAt = process.hrtime.bigint()
      writeLocal(
        this.res,
        this.withOwnHeaders(
          kind === "timeout"
            ? jsonError(504, `upstream timed out (${code})`)
            : jsonError(502, `upstream unreachable or failed (${code})`)
        ),
        this.overheadNs()
      )
    }
    this.report(kind, code)
  }

  private readonly onDrain = (): void => {
    const controller = this.controller
    if (controller !== undefined && controller.paused) controller.resume()
  }

  private readonly onClientClose = (): void => {
    if (this.done) return
    this.done = true
    // Frees the pool slot now rather than when the upstream finishes a generation nobody reads.
    this.controller?.abort(new ClientAborted("client went away"))
    this.report("client_aborted", undefined)
  }

  private releaseHeld(body: Buffer): void {
    const status = this.status!
    const headers = this.upstreamHeaders!
    this.held = undefined
    this.sink.onHeld(status, headers, body).then(
      (replacement) => this.answerHeld(replacement, status, headers, body),
      () => this.answerHeld(jsonError(500, "integrity check failed"), status, headers, body)
    )
  }

  private answerHeld(
    replacement: LocalResponse | undefined,
    status: number,
    headers: IncomingHttpHeaders,
    body: Buffer
  ) {
    if (this.done) return
    this.done = true
    if (replacement !== undefined) writeLocal(this.res, this.withOwnHeaders(replacement), this.overheadNs())
    else {
      const out = responseHeadersForClient(headers)
      if (this.request.responseHeaders !== undefined) Object.assign(out, this.request.responseHeaders)
      out[OVERHEAD_HEADER] = formatMs(this.overheadNs())
      if (this.statusMessage !== undefined && this.statusMessage !== "")
        this.res.writeHead(status, this.statusMessage, out)
      else this.res.writeHead(status, out)
      this.res.end(body)
    }
    // The held path's report is `completeNonStreaming` itself; nothing else to tell.
  }

  private withOwnHeaders(response: LocalResponse): LocalResponse {
    const own = this.request.responseHeaders
    return own === undefined ? response : { ...response, headers: { ...response.headers, ...own } }
  }

  private safeHead(status: number, headers: IncomingHttpHeaders, stream: boolean): ResponseObserver | undefined {
    try {
      const encoding = headers["content-encoding"]
      return decodingObserver(
        Array.isArray(encoding) ? encoding.join(",") : encoding,
        this.sink.onHead(status, headers, stream)
      )
    } catch {
      return undefined
    }
  }

  private report(kind: OutcomeKind, cause: string | undefined): void {
    const outcome: ExchangeOutcome = { kind, status: this.status, bytes: this.bytes, cause }
    try {
      if (this.observer !== undefined) this.observer.end(outcome)
      else if (this.status === undefined || this.held !== undefined) this.sink.onFailure(outcome)
    } catch {
      // the side path's failure is its own
    }
  }
}
