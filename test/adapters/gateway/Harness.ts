/**
 * Loopback fixtures for the proxy tests: a fake upstream that records exactly what reached it, a
 * gateway mounted on its own `node:http` server, and an Inspector that records what the side path saw.
 */
import * as Effect from "effect/Effect"
import * as Runtime from "effect/Runtime"
import { createServer, type IncomingMessage, request, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import type { BusMessage } from "../../../adapters/bus/Bus.js"
import type { Inspector } from "../../../adapters/gateway/Inspector.js"
import type { ExchangeOutcome } from "../../../adapters/gateway/ExchangeOutcome.js"
import {
  closeUpstreams,
  destroyUpstreams,
  makeUpstreams,
  type UpstreamTimeouts
} from "../../../adapters/gateway/Upstreams.js"
import { defaultTuning, makeGatewayHandler } from "../../../adapters/gateway/GatewayServer.js"
import type { InFlightLimits } from "../../../adapters/gateway/InFlightBytes.js"

export interface Recorded {
  readonly method: string
  readonly url: string
  readonly rawHeaders: ReadonlyArray<string>
  readonly body: Buffer
  readonly req: IncomingMessage
}

export type UpstreamHandler = (recorded: Recorded, res: ServerResponse) => void

export interface FakeUpstream {
  readonly url: string
  readonly server: Server
  readonly requests: Array<Recorded>
  handle: UpstreamHandler
  close(): Promise<void>
}

const listen = (server: Server) =>
  new Promise<number>((resolve) => server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)))

const closeServer = (server: Server) =>
  new Promise<void>((resolve) => {
    server.closeAllConnections()
    server.close(() => resolve())
  })

export const startUpstream = async (handle: UpstreamHandler = (_r, res) => res.end("{}")): Promise<FakeUpstream> => {
  const requests: Array<Recorded> = []
  const fake: FakeUpstream = {
    url: "",
    server: undefined as unknown as Server,
    requests,
    handle,
    close: () => closeServer(server)
  }
  const server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const recorded = {
        method: req.method!,
        url: req.url!,
        rawHeaders: req.rawHeaders,
        body: Buffer.concat(chunks),
        req
      }
      requests.push(recorded)
      fake.handle(recorded, res)
    })
  })
  const port = await listen(server)
  return Object.assign(fake, { url: `http://127.0.0.1:${port}`, server })
}

/** Records side-path observations per exchange. */
export class RecordingInspector {
  readonly chunks: Array<Array<Buffer>> = []
  readonly outcomes: Array<ExchangeOutcome> = []
  private waiters: Array<() => void> = []
  readonly service: Inspector["Type"] = {
    beforeRequest: (request) => Effect.succeed({ forward: request.body, context: undefined, hold: false }),
    onResponse: () => {
      const mine: Array<Buffer> = []
      this.chunks.push(mine)
      return { chunk: (bytes) => mine.push(Buffer.from(bytes)), end: (o) => this.record(o) }
    },
    onFailure: (_c, o) => this.record(o),
    completeNonStreaming: () => Effect.succeed({ pass: true })
  }
  private record(outcome: ExchangeOutcome) {
    this.outcomes.push(outcome)
    for (const w of this.waiters.splice(0)) w()
  }
  /** Resolves once `n` outcomes have been reported. */
  async outcomeCount(n: number): Promise<ReadonlyArray<ExchangeOutcome>> {
    while (this.outcomes.length < n) await new Promise<void>((r) => this.waiters.push(r))
    return this.outcomes
  }
}

export interface TestGateway {
  readonly url: string
  readonly server: Server
  close(): Promise<void>
}

export const startGateway = async (
  upstreamUrl: string,
  inspector: Inspector["Type"],
  options: { timeouts?: Partial<UpstreamTimeouts>; maxRequestBytes?: number; inFlight?: InFlightLimits } = {}
): Promise<TestGateway> => {
  const timeouts = { ...defaultTuning.timeouts, ...options.timeouts }
  const upstreams = makeUpstreams({ anthropic: upstreamUrl, openai: upstreamUrl, gemini: upstreamUrl }, timeouts)
  const server = createServer(
    makeGatewayHandler(upstreams, inspector, Runtime.defaultRuntime, {
      ...defaultTuning,
      timeouts,
      maxRequestBytes: options.maxRequestBytes ?? defaultTuning.maxRequestBytes,
      inFlight: options.inFlight ?? defaultTuning.inFlight
    })
  )
  const port = await listen(server)
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    close: async () => {
      await closeServer(server)
      await closeUpstreams(upstreams).catch(() => destroyUpstreams(upstreams))
    }
  }
}

export interface RawResponse {
  readonly status: number
  readonly headers: IncomingMessage["headers"]
  readonly rawHeaders: ReadonlyArray<string>
  readonly body: Buffer
  readonly chunks: ReadonlyArray<Buffer>
}

/** A raw HTTP call (no fetch decoding): the bytes exactly as the gateway sent them. */
export const call = (
  url: string,
  init: { method?: string; headers?: Record<string, string | Array<string>>; body?: Buffer | string } = {}
) =>
  new Promise<RawResponse>((resolve, reject) => {
    const req = request(url, { method: init.method ?? "GET", headers: init.headers ?? {}, agent: false }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("end", () =>
        resolve({
          status: res.statusCode!,
          headers: res.headers,
          rawHeaders: res.rawHeaders,
          body: Buffer.concat(chunks),
          chunks
        })
      )
      res.on("error", reject)
    })
    req.on("error", reject)
    req.end(init.body)
  })

/**
 * The provider key in the header each provider's SDK puts it in, by the gateway path's prefix: one
 * carrier only, as the gateway requires (adapters/gateway/Credentials.ts).
 */
export const keyHeader = (path: string, key: string): Record<string, string> =>
  path.startsWith("/openai")
    ? { authorization: `Bearer ${key}` }
    : path.startsWith("/gemini")
      ? { "x-goog-api-key": key }
      : { "x-api-key": key }

/** A promise with its resolver outside: tests coordinate the two servers with these, never with timers. */
export const deferred = <A = void>() => {
  let resolve!: (a: A) => void
  const promise = new Promise<A>((r) => (resolve = r))
  return { promise, resolve }
}

/**
 * The payload of the next gateway response event `take` gives: the gateway's enforcement records (a
 * 403, a nudge injected) travel on the same subjects and are skipped (EnforcementRecords.test.ts).
 */
export const nextResponsePayload = async <E>(take: Effect.Effect<BusMessage, E>): Promise<unknown> => {
  for (;;) {
    const { payload } = await Effect.runPromise(take)
    if ((payload as { readonly type?: unknown }).type !== "gateway.enforcement") return payload
  }
}
