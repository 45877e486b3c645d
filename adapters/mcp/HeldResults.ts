/**
 * A `tools/call` answer in `enforce` (docs/mcp.md "Tool results"): the message answering the call
 * held until its result is judged (ResultJudging.ts) and replaced by a JSON-RPC error when
 * withheld; a JSON body held whole, an SSE stream's events passed as they come but that one.
 */
import * as Effect from "effect/Effect"
import type { ServerResponse } from "node:http"
import type { Dispatcher } from "undici"
import { responseHeadersForClient } from "../gateway/Headers.js"
import { serverAnswerOf } from "./JsonRpc.js"
import { sseReader } from "./MessageReader.js"
import { type Caller, type CallWatch, headerValue, type ProxyContext } from "./ProxyContext.js"
import type { ResultJudging } from "./ResultJudging.js"
import { messageEvent, sseEventSplitter } from "./SseEvents.js"

export type HeldResults = ReturnType<typeof makeHeldResults>

export const makeHeldResults = (
  { runFork, settings }: ProxyContext,
  { settleMessage, unreadableMessage }: ResultJudging
) => {
  /**
   * An SSE answer to a `tools/call` in `enforce`, its headers already sent: events pass as they come
   * but the one answering the call, which is held until judged and replaced when withheld; the
   * stream is paused meanwhile.
   */
  const relayEvents = (
    caller: Caller,
    watch: CallWatch,
    upstream: Dispatcher.ResponseData["body"],
    res: ServerResponse,
    done: () => void
  ) => {
    const splitter = sseEventSplitter(settings.maxMessageBytes)
    /** Events not yet settled, in order: the stream is paused while one is judged. */
    const queue: Array<Buffer | undefined> = []
    let answered = false
    let ended = false
    let busy = false
    const write = (bytes: Buffer) => {
      if (!res.write(bytes)) upstream.pause()
    }
    const drain = (): void => {
      while (!busy && queue.length > 0) {
        const event = queue.shift()
        if (answered) {
          // The call is answered: what follows passes unread (an event over the bound included).
          if (event !== undefined) write(event)
          continue
        }
        if (event === undefined) {
          // An event too large to read may be the answer: withheld, never passed unjudged.
          answered = true
          write(messageEvent(unreadableMessage(caller, watch, "too_large")))
          continue
        }
        let message: unknown = undefined
        let readable = true
        const reader = sseReader(settings.maxMessageBytes, {
          onMessage: (value) => {
            message = value
          },
          onUnreadable: () => {
            readable = false
          }
        })
        reader.push(event)
        reader.end()
        if (!readable) {
          write(event)
          continue
        }
        if (message === undefined || serverAnswerOf(message)?.id !== watch.id) {
          write(event)
          continue
        }
        busy = true
        upstream.pause()
        runFork(
          settleMessage(caller, watch, message).pipe(
            Effect.map(({ replacement }) => {
              busy = false
              answered = true
              if (res.destroyed) return
              write(replacement === undefined ? event : messageEvent(replacement))
              upstream.resume()
              drain()
            })
          )
        )
      }
      if (!busy && ended && !res.writableEnded) {
        done()
        res.end()
      }
    }
    upstream.on("data", (chunk: Buffer) => {
      queue.push(...splitter.push(chunk))
      drain()
    })
    res.on("drain", () => {
      if (!busy) upstream.resume()
    })
    upstream.once("end", () => {
      const rest = splitter.end()
      if (rest !== undefined) queue.push(rest)
      ended = true
      drain()
    })
  }

  /**
   * A `tools/call` answer in `enforce` (docs/mcp.md "Tool results"): the message answering the call
   * is held until its result is judged, and replaced by a JSON-RPC error when withheld. A JSON body
   * is that one message, held whole (up to `maxMessageBytes`); an SSE stream passes its events as
   * they come except the one answering the call. A message Candor cannot read (over the bound, not
   * JSON, another coding) is withheld too: never passed unjudged.
   */
  const held = (
    caller: Caller,
    watch: CallWatch,
    answer: Dispatcher.ResponseData,
    res: ServerResponse,
    done: () => void
  ) => {
    const upstream = answer.body
    const type = headerValue(answer.headers["content-type"]) ?? ""
    const coding = headerValue(answer.headers["content-encoding"])
    const headers = responseHeadersForClient(answer.headers)
    const unreadable = (reason: "too_large" | "not_json") => unreadableMessage(caller, watch, reason)
    const replaceWith = (body: Buffer) => {
      if (res.headersSent) return
      delete headers["content-encoding"]
      res.writeHead(200, { ...headers, "content-type": "application/json", "content-length": String(body.length) })
      res.end(body)
    }
    const sse = type.startsWith("text/event-stream")
    if ((coding !== undefined && coding !== "identity") || (!sse && !type.startsWith("application/json"))) {
      upstream.destroy()
      done()
      return replaceWith(unreadable("not_json"))
    }
    upstream.once("error", () => {
      done()
      res.destroy()
    })
    if (!sse) {
      const chunks: Array<Buffer> = []
      let size = 0
      upstream.on("data", (chunk: Buffer) => {
        if (size > settings.maxMessageBytes) return
        size += chunk.byteLength
        if (size > settings.maxMessageBytes) {
          chunks.length = 0
          upstream.destroy()
          done()
          return replaceWith(unreadable("too_large"))
        }
        chunks.push(chunk)
      })
      upstream.once("end", () => {
        if (size > settings.maxMessageBytes) return
        const body = Buffer.concat(chunks, size)
        let message: unknown
        try {
          message = JSON.parse(body.toString("utf8").replace(/^\uFEFF/, ""))
        } catch {
          done()
          return replaceWith(unreadable("not_json"))
        }
        runFork(
          settleMessage(caller, watch, message).pipe(
            Effect.map(({ replacement }) => {
              done()
              if (res.destroyed) return
              if (replacement !== undefined) return replaceWith(replacement)
              res.writeHead(200, headers)
              res.end(body)
            })
          )
        )
      })
      return
    }
    // The held event may be replaced by one of another length: the stream goes out chunked.
    delete headers["content-length"]
    res.writeHead(200, headers)
    // SSE: the client waits for the headers before the first event.
    res.flushHeaders()
    relayEvents(caller, watch, upstream, res, done)
  }

  return { held, relayEvents }
}
