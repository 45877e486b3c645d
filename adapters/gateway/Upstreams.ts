/**
 * The upstream origins and one pooled undici connection `Pool` per origin: keep-alive, pipelining
 * off (one request in flight per connection, so a slow stream never stalls the next request), and
 * timeouts sized for LLM calls, whose non-streaming answers can take minutes to start.
 */
import { Pool } from "undici"
import type { ProviderName } from "../providers/Provider.js"

export interface UpstreamTimeouts {
  /** TCP + TLS connect. */
  readonly connectMs: number
  /** From request sent to response headers: a long non-streaming generation sits here. */
  readonly headersMs: number
  /** Idle time between two body chunks. */
  readonly bodyMs: number
}

export const defaultTimeouts: UpstreamTimeouts = { connectMs: 10_000, headersMs: 600_000, bodyMs: 300_000 }

export interface Upstream {
  readonly provider: ProviderName
  readonly pool: Pool
  /** `http(s)://host:port`, for building the URL the Inspector sees. */
  readonly origin: string
  /** The base URL's path without its trailing slash (usually empty), prefixed to every forwarded path. */
  readonly basePath: string
}

export type Upstreams = Readonly<Record<ProviderName, Upstream>>

export const makeUpstream = (provider: ProviderName, baseUrl: string, timeouts: UpstreamTimeouts): Upstream => {
  const url = new URL(baseUrl)
  return {
    provider,
    origin: url.origin,
    basePath: url.pathname.replace(/\/+$/, ""),
    pool: new Pool(url.origin, {
      pipelining: 1,
      keepAliveTimeout: 30_000,
      keepAliveMaxTimeout: 600_000,
      connectTimeout: timeouts.connectMs,
      headersTimeout: timeouts.headersMs,
      bodyTimeout: timeouts.bodyMs
    })
  }
}

export const makeUpstreams = (
  baseUrls: Readonly<Record<ProviderName, string>>,
  timeouts: UpstreamTimeouts = defaultTimeouts
): Upstreams => ({
  anthropic: makeUpstream("anthropic", baseUrls.anthropic, timeouts),
  openai: makeUpstream("openai", baseUrls.openai, timeouts),
  gemini: makeUpstream("gemini", baseUrls.gemini, timeouts)
})

/** Closes every pool: in-flight requests finish, idle sockets close. */
export const closeUpstreams = (upstreams: Upstreams): Promise<void> =>
  Promise.all(Object.values(upstreams).map((u) => u.pool.close())).then(() => undefined)

/** Destroys every pool at once: for shutdown after a grace period. */
export const destroyUpstreams = (upstreams: Upstreams): Promise<void> =>
  Promise.all(Object.values(upstreams).map((u) => u.pool.destroy())).then(() => undefined)
