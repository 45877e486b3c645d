/**
 * The live feed's connection: `GET /v1/stream?format=ndjson` read with fetch (EventSource cannot send
 * the credential header), reconnected with backoff after any loss from the last event id received,
 * so nothing is missed (docs/stream.md, "Resuming"). Before the first event, the position is the
 * server's time when the first connection opened (its Date header, a second early): a connection
 * lost before any event still resumes without a gap. The feed buffer drops what is replayed twice.
 */
import type { FeedEvent } from "./FeedBuffer.js"

export type ConnectionState =
  | { readonly _tag: "connecting"; readonly attempt: number }
  | { readonly _tag: "live" }
  | { readonly _tag: "waiting"; readonly retryInMs: number; readonly attempt: number; readonly reason: string }
  /** Not retried: the credential was refused (401), or the request was (400, 404). */
  | { readonly _tag: "stopped"; readonly reason: string }

export interface FeedPosition {
  /** The last event received: resume after it. */
  readonly lastId: string | undefined
  /** Before any event: resume from this RFC 3339 time. */
  readonly since: string | undefined
}

/** The request for a position: after the last id, else from the first connection's time, else now. */
export const streamPath = (position: FeedPosition): string => {
  const params = new URLSearchParams({ format: "ndjson" })
  const from = position.lastId ?? position.since
  if (from !== undefined) params.set("since", from)
  return `/v1/stream?${params.toString()}`
}

/** Half a second, doubling to 15 s, with ±20% jitter so many consoles do not reconnect in step. */
export const backoffMs = (attempt: number, random: () => number = Math.random): number => {
  const base = Math.min(15_000, 500 * 2 ** Math.max(0, attempt - 1))
  return Math.round(base * (0.8 + 0.4 * random()))
}

/** One second before the server's Date header (whole seconds), as RFC 3339; undefined without one. */
export const sinceOf = (dateHeader: string | null): string | undefined => {
  if (dateHeader === null) return undefined
  const time = Date.parse(dateHeader)
  return Number.isNaN(time) ? undefined : new Date(time - 1000).toISOString()
}

/** Splits a byte stream into lines across chunk boundaries. */
export class LineSplitter {
  private rest = ""
  private readonly decoder = new TextDecoder()
  push(chunk: Uint8Array): Array<string> {
    const text = this.rest + this.decoder.decode(chunk, { stream: true })
    const lines = text.split("\n")
    this.rest = lines.pop() ?? ""
    return lines
  }
}

export interface FeedStreamOptions {
  /** Opens the stream at `path` (Api.ts's rawRequest in the page; a fake in tests). Throws on a refusal. */
  readonly request: (path: string, signal: AbortSignal) => Promise<Response>
  readonly onEvent: (event: FeedEvent) => void
  readonly onState: (state: ConnectionState) => void
  /** Whether an error ends the feed (a refusal) rather than being retried; its message. */
  readonly refusal: (error: unknown) => string | undefined
  readonly sleep?: (ms: number, signal: AbortSignal) => Promise<void>
  readonly random?: () => number
}

const defaultSleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms)
    signal.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true })
  })

export interface FeedStream {
  /** Drops the connection (it reconnects at once from where it was); for a "reconnect" button. */
  readonly reconnect: () => void
  readonly stop: () => void
  readonly position: () => FeedPosition
}

export const openFeedStream = (options: FeedStreamOptions): FeedStream => {
  const sleep = options.sleep ?? defaultSleep
  const stopped = new AbortController()
  let current: AbortController | undefined
  let position: FeedPosition = { lastId: undefined, since: undefined }

  const readOnce = async (signal: AbortSignal, up: () => void): Promise<void> => {
    const response = await options.request(streamPath(position), signal)
    if (position.lastId === undefined && position.since === undefined)
      position = { ...position, since: sinceOf(response.headers.get("date")) }
    up()
    options.onState({ _tag: "live" })
    const reader = response.body?.getReader()
    if (reader === undefined) throw new Error("the stream has no body")
    const lines = new LineSplitter()
    for (;;) {
      const { done, value } = await reader.read()
      if (done) throw new Error("the stream ended")
      for (const line of lines.push(value)) {
        // Empty lines are heartbeats.
        if (line.trim() === "") continue
        const event = JSON.parse(line) as FeedEvent
        position = { ...position, lastId: event.id }
        options.onEvent(event)
      }
    }
  }

  const run = async () => {
    /** Failed connections in a row: a connection that came up starts the count over. */
    let failures = 0
    while (!stopped.signal.aborted) {
      options.onState({ _tag: "connecting", attempt: failures + 1 })
      const connection = new AbortController()
      current = connection
      const abort = () => connection.abort()
      stopped.signal.addEventListener("abort", abort, { once: true })
      let reason = "the stream ended"
      let up = false
      try {
        await readOnce(connection.signal, () => (up = true))
      } catch (error) {
        if (stopped.signal.aborted) return
        const refused = options.refusal(error)
        if (refused !== undefined) {
          options.onState({ _tag: "stopped", reason: refused })
          return
        }
        reason = connection.signal.aborted ? "reconnecting" : error instanceof Error ? error.message : String(error)
      } finally {
        stopped.signal.removeEventListener("abort", abort)
      }
      failures = up ? 1 : failures + 1
      // Asked to reconnect: at once.
      const retryInMs = connection.signal.aborted ? 0 : backoffMs(failures, options.random)
      options.onState({ _tag: "waiting", retryInMs, attempt: failures, reason })
      if (retryInMs > 0) await sleep(retryInMs, stopped.signal)
    }
  }
  void run()

  return {
    reconnect: () => current?.abort(),
    stop: () => stopped.abort(),
    position: () => position
  }
}
