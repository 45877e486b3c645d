/**
 * A client of `GET /v1/stream` over real HTTP for tests and the bench: it reads the body as it
 * arrives, parses Server-Sent Events (or NDJSON lines) and keeps what it received, with the time
 * each event arrived. `ready` resolves on the stream's first heartbeat (the server writes it once
 * the position is fixed), so a test may publish right after it.
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { WebhookEnvelope } from "../../core/schema/WebhookEvents.js"

export interface ReceivedEvent {
  readonly id: string
  readonly type: string
  readonly envelope: WebhookEnvelope
  /** `Date.now()` when the frame was parsed. */
  readonly receivedAt: number
}

export interface StreamClient {
  readonly status: number
  readonly headers: Headers
  /** A refused stream's JSON body. */
  readonly error: unknown
  readonly events: Array<ReceivedEvent>
  readonly heartbeats: () => number
  /** The last `id:` received (what a browser sends back as Last-Event-ID). */
  readonly lastEventId: () => string | undefined
  /** Resolves on the first heartbeat; rejects when the stream ends before it. */
  readonly ready: Promise<void>
  /** Set once the server ended the stream (or it failed). */
  readonly ended: () => boolean
  readonly close: () => void
}

export interface StreamClientOptions {
  readonly token?: string | undefined
  readonly apiKey?: string | undefined
  readonly headers?: Record<string, string> | undefined
}

export const openStream = async (url: string, options: StreamClientOptions = {}): Promise<StreamClient> => {
  const headers: Record<string, string> = { ...options.headers }
  if (options.token !== undefined) headers["authorization"] = `Bearer ${options.token}`
  if (options.apiKey !== undefined) headers["x-api-key"] = options.apiKey
  const abort = new AbortController()
  const response = await fetch(url, { headers, signal: abort.signal })
  const events: Array<ReceivedEvent> = []
  let heartbeats = 0
  let lastEventId: string | undefined
  let ended = false
  let markReady: () => void = () => undefined
  let failReady: (error: Error) => void = () => undefined
  const ready = new Promise<void>((resolve, reject) => {
    markReady = resolve
    failReady = reject
  })
  ready.catch(() => undefined)
  const base = {
    status: response.status,
    headers: response.headers,
    events,
    heartbeats: () => heartbeats,
    lastEventId: () => lastEventId,
    ready,
    ended: () => ended,
    close: () => abort.abort()
  }
  if (!response.ok || response.body === null) {
    ended = true
    const text = await response.text()
    failReady(new Error(`stream refused: ${response.status}`))
    return { ...base, error: text === "" ? undefined : JSON.parse(text) }
  }
  const ndjson = (response.headers.get("content-type") ?? "").startsWith("application/x-ndjson")
  const heartbeat = () => {
    heartbeats++
    markReady()
  }
  const onEvent = (envelope: WebhookEnvelope, id: string, type: string) => {
    lastEventId = id
    events.push({ id, type, envelope, receivedAt: Date.now() })
  }
  const sseFrame = (frame: string) => {
    let id: string | undefined
    let type = "message"
    let data: string | undefined
    let comment = false
    for (const line of frame.split("\n")) {
      if (line.startsWith(":")) comment = true
      else if (line.startsWith("id: ")) id = line.slice(4)
      else if (line.startsWith("event: ")) type = line.slice(7)
      else if (line.startsWith("data: ")) data = (data === undefined ? "" : `${data}\n`) + line.slice(6)
    }
    if (data !== undefined) onEvent(JSON.parse(data) as WebhookEnvelope, id ?? "", type)
    else if (comment) heartbeat()
  }
  const reader = response.body.getReader()
  const decoder = new TextDecoder()
  void (async () => {
    let buffer = ""
    try {
      for (;;) {
        const { done, value } = await reader.read()
        if (done) break
        buffer += decoder.decode(value, { stream: true })
        const separator = ndjson ? "\n" : "\n\n"
        let at: number
        while ((at = buffer.indexOf(separator)) >= 0) {
          const frame = buffer.slice(0, at)
          buffer = buffer.slice(at + separator.length)
          if (!ndjson) sseFrame(frame)
          else if (frame === "") heartbeat()
          else {
            const envelope = JSON.parse(frame) as WebhookEnvelope
            onEvent(envelope, envelope.id, envelope.type)
          }
        }
      }
    } catch {
      // aborted by close(), or the connection was cut
    }
    ended = true
    failReady(new Error("stream ended before its first heartbeat"))
  })()
  return { ...base, error: undefined }
}

/** `openStream` in a scope: closed with it; waits for the first heartbeat when the stream opened. */
export const connectStream = (
  url: string,
  options: StreamClientOptions = {}
): Effect.Effect<StreamClient, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const client = await openStream(url, options)
      if (client.status === 200) await client.ready
      return client
    }),
    (client) => Effect.sync(client.close)
  )
