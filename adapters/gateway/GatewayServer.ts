/**
 * The LLM gateway on GATEWAY_PORT: `/anthropic/*`, `/openai/*`, `/gemini/*` forwarded to the
 * configured upstreams with path and query unchanged, `/health/live` for probes, and `/mcp/*` to
 * the MCP gateway when the process provides one (adapters/mcp/McpProxy.ts, docs/mcp.md).
 *
 * Raw `node:http` on purpose: this is the hot path, and a framework's request/response objects would
 * cost more than the gateway's whole budget (< 0.5 ms p50). Effect owns the lifecycle
 * (`GatewayServer.layer`: listen on acquire, drain and close on release) and the Inspector.
 *
 * The Inspector's own headers for an exchange (`X-Policy-Verdict`) go on whatever the client gets
 * for it: the upstream's response, a held one, or the gateway's error.
 *
 * `x-candor-overhead-ms` on every response is the time spent inside the gateway: from the request
 * body fully received to the upstream dispatch (routing, Inspector), plus from the upstream's
 * response headers to ours. Upstream time and the client's upload are excluded; in `enforce` mode a
 * held response includes the wait for its verdict.
 *
 * With `tls` set the same handler and HTTP/1.1 settings run on `node:https` (TLS 1.2 minimum), the
 * certificate reloaded on SIGHUP (adapters/http/Tls.ts).
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"
import { createServer, type IncomingMessage, type Server, type ServerOptions, type ServerResponse } from "node:http"
import { createServer as createHttpsServer } from "node:https"
import type { AddressInfo } from "node:net"
import type { Server as TlsServer } from "node:tls"
import {
  type BytesHolder,
  defaultInFlightLimits,
  InFlightBytes,
  type InFlightLimits,
  refusalOf,
  RETRY_AFTER_SECONDS
} from "./InFlightBytes.js"
import { type GatewayResponse, Inspector, type RequestDecision } from "./Inspector.js"
import type { ExchangeOutcome } from "./ExchangeOutcome.js"
import { Exchange, type ExchangeSink, jsonError, writeLocal } from "./Exchange.js"
import { requestHeadersForUpstream } from "./Headers.js"
import {
  closeUpstreams,
  defaultTimeouts,
  destroyUpstreams,
  makeUpstreams,
  type Upstream,
  type Upstreams,
  type UpstreamTimeouts
} from "./Upstreams.js"
import { ListenFailed, listenErrorCode } from "../http/ListenFailed.js"
import { loadTls, reloadOnSighup, reloadTls, serverTlsOptions, type TlsFileError, type TlsFiles } from "../http/Tls.js"
import type { ProviderName } from "../providers/Provider.js"
import { McpGateway } from "../mcp/McpGateway.js"

export interface GatewayTuning {
  /** Largest request body accepted (413 above): 32 MiB covers image-heavy prompts. */
  readonly maxRequestBytes: number
  /** Request bytes held at once per credential, organization and process (InFlightBytes.ts: 429 / 503 above). */
  readonly inFlight: InFlightLimits
  readonly timeouts: UpstreamTimeouts
  /** How long shutdown waits for in-flight streams before cutting them. */
  readonly shutdownGraceMs: number
}

export const defaultTuning: GatewayTuning = {
  maxRequestBytes: 32 * 1024 * 1024,
  inFlight: defaultInFlightLimits,
  timeouts: defaultTimeouts,
  shutdownGraceMs: 10_000
}

/** Where the gateway listens and forwards: plain values, so the gateway knows nothing of how they are configured. */
export interface GatewayOptions {
  /** 0 for an ephemeral port (tests); the bound one is in `GatewayServer.port`. */
  readonly port: number
  readonly host: string
  /** Base URL of each provider's upstream (origin plus an optional path prefix). */
  readonly upstreams: Readonly<Record<ProviderName, string>>
  readonly tuning?: Partial<GatewayTuning>
  /** Serve HTTPS with this certificate and key (reloaded on SIGHUP); unset: plain HTTP. */
  readonly tls?: TlsFiles
}

/** HTTP/1.1 settings of the gateway's server, the same over TLS: keep-alive outlasts the usual 60 s idle timeout of load balancers. */
const HTTP_OPTIONS: ServerOptions = { keepAliveTimeout: 65_000 }

type InspectorService = Inspector["Type"]

const LIVE = { status: 200, headers: { "content-type": "application/json" }, body: Buffer.from('{"status":"ok"}') }

/** The upstream for the first path segment, and where the rest of the URL starts. */
const route = (upstreams: Upstreams, url: string): { upstream: Upstream; rest: string } | undefined => {
  let end = 1
  while (end < url.length && url.charCodeAt(end) !== 47 /* / */ && url.charCodeAt(end) !== 63 /* ? */) end++
  const name = url.slice(1, end)
  const upstream = name === "anthropic" || name === "openai" || name === "gemini" ? upstreams[name] : undefined
  if (upstream === undefined) return undefined
  const rest = url.slice(end)
  return { upstream, rest: rest.charCodeAt(0) === 47 ? rest : "/" + rest }
}

const sinkFor = (
  inspector: InspectorService,
  run: <A>(effect: Effect.Effect<A>) => Promise<A>,
  context: unknown,
  hold: boolean
): ExchangeSink => ({
  hold,
  onHead: (status, headers, stream) => inspector.onResponse(context, { status, headers, stream }),
  onFailure: (outcome) => inspector.onFailure(context, outcome),
  onHeld: (status, headers, body) =>
    run(inspector.completeNonStreaming(context, { status, headers, body })).then((v) =>
      "pass" in v ? undefined : v.respond
    )
})

/** The request handler: exported on its own so tests and benchmarks can mount it on any server. */
export const makeGatewayHandler = (
  upstreams: Upstreams,
  inspector: InspectorService,
  runtime: Runtime.Runtime<never>,
  tuning: GatewayTuning = defaultTuning,
  /** The MCP gateway (adapters/mcp/McpProxy.ts) for `/mcp/*`; without it those paths are 404. */
  mcp?: McpGateway["Type"]
) => {
  const run = Runtime.runPromise(runtime)
  const limit = tuning.maxRequestBytes
  const inFlight = new InFlightBytes(tuning.inFlight)

  const forward = (
    req: IncomingMessage,
    res: ServerResponse,
    upstream: Upstream,
    rest: string,
    url: URL,
    holder: BytesHolder,
    body: Buffer,
    startedAt: bigint
  ) => {
    const request = {
      provider: upstream.provider,
      url,
      headers: req.headers,
      rawHeaders: req.rawHeaders,
      client: req.socket.remoteAddress,
      holder,
      body,
      startedAt
    }
    const proceed = (decision: RequestDecision): void => {
      if ("respond" in decision) return writeLocal(res, decision.respond, process.hrtime.bigint() - startedAt)
      if (res.destroyed) {
        const outcome: ExchangeOutcome = { kind: "client_aborted", status: undefined, bytes: 0, cause: undefined }
        return inspector.onFailure(decision.context, outcome)
      }
      const headers = requestHeadersForUpstream(req.rawHeaders, req.headers.connection)
      new Exchange(
        res,
        {
          upstream,
          method: req.method ?? "GET",
          path: upstream.basePath + rest,
          headers,
          body: decision.forward,
          startedAt,
          responseHeaders: decision.headers
        },
        sinkFor(inspector, run, decision.context, decision.hold)
      ).start()
    }
    const failed = () =>
      writeLocal(res, jsonError(500, "gateway inspection failed"), process.hrtime.bigint() - startedAt)
    // The usual request is decided synchronously (no fiber, no promise); the rest through the effect.
    let decision: RequestDecision | undefined
    try {
      decision = inspector.beforeRequestSync?.(request)
    } catch {
      return failed()
    }
    if (decision !== undefined) return proceed(decision)
    run(inspector.beforeRequest(request)).then(proceed, failed)
  }

  return (req: IncomingMessage, res: ServerResponse): void => {
    const url = req.url ?? "/"
    if (mcp !== undefined && url.startsWith("/mcp/")) return mcp.handle(req, res)
    const target = route(upstreams, url)
    if (target === undefined) {
      req.resume()
      if (url === "/health/live" && req.method === "GET") return writeLocal(res, LIVE, 0n)
      return writeLocal(res, jsonError(404, `unknown provider prefix: use /anthropic, /openai or /gemini`), 0n)
    }
    const declared = Number(req.headers["content-length"] ?? 0)
    if (declared > limit) return tooLarge(req, res)
    // Whose bytes these are, from the headers: the body is counted against them as it arrives.
    const upstreamUrl = new URL(target.upstream.origin + target.upstream.basePath + target.rest)
    const watch = inspector.beforeBody?.(target.upstream.provider, upstreamUrl, req.headers, req.rawHeaders)
    const holder = watch?.holder ?? NO_HOLDER
    const refused = inFlight.wouldPass(holder, declared)
    if (refused !== undefined) return overBudget(req, res, refusalOf(refused))
    let held = 0
    res.once("close", () => inFlight.release(holder, held))
    let chunks: Array<Buffer> = []
    let size = 0
    let screen = watch?.screen
    let screenAt = SCREEN_FROM_BYTES
    req.on("data", (chunk: Buffer) => {
      size += chunk.byteLength
      if (size > limit) return tooLarge(req, res)
      const passed = inFlight.take(holder, chunk.byteLength)
      if (passed !== undefined) return overBudget(req, res, refusalOf(passed))
      held += chunk.byteLength
      chunks.push(chunk)
      if (screen !== undefined && size >= screenAt) {
        // The body so far, at ×4 steps (copied ≤ 1.33 times in all): a flood is refused unread.
        chunks = [Buffer.concat(chunks, size)]
        screenAt = size * 4
        const verdict = screen(chunks[0]!)
        if (verdict === "within") screen = undefined
        else if (verdict !== undefined) return refuseUnread(req, res, verdict)
      }
    })
    req.on("end", () => {
      if (size > limit || res.headersSent) return
      const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size)
      forward(req, res, target.upstream, target.rest, upstreamUrl, holder, body, process.hrtime.bigint())
    })
  }
}

/** Nobody in particular: an Inspector that cannot tell counts every request against one credential budget (as requests without a key share one) and the process's. */
const NO_HOLDER: BytesHolder = { credential: undefined, org: undefined }

/** Bodies are screened (`BodyWatch.screen`) from this size on: smaller ones are read whole first. */
const SCREEN_FROM_BYTES = 64 * 1024

/** The Inspector's answer to a body it refused from its first bytes, then close: the rest is never read. */
const refuseUnread = (req: IncomingMessage, res: ServerResponse, answer: GatewayResponse) => {
  if (res.headersSent) return
  res.setHeader("connection", "close")
  writeLocal(res, answer, 0n)
  req.removeAllListeners("data")
  req.resume()
}

/** 429 or 503 with Retry-After, then close: over a bytes-in-flight cap, nothing more of the upload is read. */
const overBudget = (req: IncomingMessage, res: ServerResponse, refusal: { status: number; error: string }) => {
  if (res.headersSent) return
  res.setHeader("connection", "close")
  res.setHeader("retry-after", String(RETRY_AFTER_SECONDS))
  writeLocal(res, jsonError(refusal.status, refusal.error), 0n)
  req.removeAllListeners("data")
  req.resume()
}

/** 413, then close: the rest of the upload is not worth reading. */
const tooLarge = (req: IncomingMessage, res: ServerResponse) => {
  if (res.headersSent) return
  res.setHeader("connection", "close")
  writeLocal(res, jsonError(413, "request body too large"), 0n)
  req.removeAllListeners("data")
  req.resume()
}

/** The bound gateway: its URL is what SDKs use as base URL (plus the provider prefix). */
export class GatewayServer extends Context.Tag("candor/adapters/gateway/GatewayServer")<
  GatewayServer,
  {
    readonly server: Server
    readonly port: number
    /** `http://…` or, with TLS, `https://…`. */
    readonly url: string
    /** Re-reads the certificate and key now (what SIGHUP does); without TLS, nothing. */
    readonly reloadTls: Effect.Effect<void, TlsFileError>
  }
>() {}

/** Listens on host:port for the life of the scope; on release stops accepting, waits for in-flight exchanges up to the grace period, then cuts them. */
export const layer = (options: GatewayOptions): Layer.Layer<GatewayServer, ListenFailed | TlsFileError, Inspector> =>
  Layer.scoped(
    GatewayServer,
    Effect.gen(function* () {
      const inspector = yield* Inspector
      const mcp = Option.getOrUndefined(yield* Effect.serviceOption(McpGateway))
      const runtime = yield* Effect.runtime<never>()
      const settings = { ...defaultTuning, ...options.tuning }
      // Read before anything is bound: a bad file stops startup with its path.
      const tls = options.tls === undefined ? undefined : { files: options.tls, material: yield* loadTls(options.tls) }
      const upstreams = makeUpstreams(options.upstreams, settings.timeouts)
      const bound = yield* Effect.acquireRelease(
        Effect.async<{ server: Server; port: number; url: string }, ListenFailed>((resume) => {
          const handler = makeGatewayHandler(upstreams, inspector, runtime, settings, mcp)
          const server: Server =
            tls === undefined
              ? createServer(HTTP_OPTIONS, handler)
              : createHttpsServer({ ...HTTP_OPTIONS, ...serverTlsOptions(tls.material) }, handler)
          // Only binding errors: once listening, the server reports nothing through this listener.
          const failed = (error: Error) => {
            void closeUpstreams(upstreams).catch(() => destroyUpstreams(upstreams))
            resume(
              Effect.fail(
                new ListenFailed({
                  variable: "GATEWAY_PORT",
                  host: options.host,
                  port: options.port,
                  code: listenErrorCode(error)
                })
              )
            )
          }
          server.once("error", failed)
          server.listen(options.port, options.host, () => {
            server.off("error", failed)
            const { port } = server.address() as AddressInfo
            const host = options.host.includes(":") ? `[${options.host}]` : options.host
            const scheme = tls === undefined ? "http" : "https"
            resume(Effect.succeed({ server, port, url: `${scheme}://${host}:${port}` }))
          })
        }),
        ({ server }) => Effect.promise(() => shutdown(server, upstreams, settings.shutdownGraceMs))
      )
      if (tls === undefined) return { ...bound, reloadTls: Effect.void }
      const secure = bound.server as unknown as TlsServer // created by createHttpsServer above
      yield* reloadOnSighup(secure, tls.files, "gateway")
      return { ...bound, reloadTls: reloadTls(secure, tls.files) }
    })
  )

const shutdown = (server: Server, upstreams: Upstreams, graceMs: number): Promise<void> =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(() => server.closeAllConnections(), graceMs)
    timer.unref()
    server.close(() => {
      clearTimeout(timer)
      resolve()
    })
    server.closeIdleConnections()
  }).then(() => closeUpstreams(upstreams).catch(() => destroyUpstreams(upstreams)))
