/**
 * Requests sent on to the MCP server and answers sent back: an undici `Agent` of the gateway's own,
 * through the webhooks' SSRF guard at connect time unless private addresses are allowed; the
 * gateway's header rules, answers asked for in `identity`; an answer streamed back byte for byte
 * and read on the side (SideReading.ts), or held until judged in `enforce` (HeldResults.ts).
 */
import * as Effect from "effect/Effect"
import type { IncomingMessage, ServerResponse } from "node:http"
import { Agent, type Dispatcher } from "undici"
import { requestHeadersForUpstream, responseHeadersForClient } from "../gateway/Headers.js"
import { guardedLookup } from "../webhooks/WebhookUrlGuard.js"
import type { HeldResults } from "./HeldResults.js"
import { blockedLiteral } from "./McpNetwork.js"
import { type Caller, errorKind, headerValue, plainError, type ProxyContext, type Watch } from "./ProxyContext.js"
import { relayWithCopy, type SideReading } from "./SideReading.js"

/** Upstream headers: the gateway's rules (no hop-by-hop, no `x-candor-*`, no transaction id), and answers in `identity`. */
const upstreamHeaders = (req: IncomingMessage): Array<string> => {
  const forwarded = requestHeadersForUpstream(req.rawHeaders, headerValue(req.headers.connection))
  const out: Array<string> = []
  for (let i = 0; i + 1 < forwarded.length; i += 2)
    if (forwarded[i]!.toLowerCase() !== "accept-encoding") out.push(forwarded[i]!, forwarded[i + 1]!)
  out.push("accept-encoding", "identity")
  return out
}

export type Forwarding = Effect.Effect.Success<ReturnType<typeof makeForwarding>>

export const makeForwarding = (
  { runFork, settings }: ProxyContext,
  { readerFor }: SideReading,
  { held }: HeldResults
) =>
  Effect.gen(function* () {
    const dispatcher = new Agent({
      headersTimeout: settings.headersTimeoutMs,
      bodyTimeout: 0,
      connect: settings.allowPrivate ? {} : { lookup: guardedLookup }
    })
    yield* Effect.addFinalizer(() => Effect.promise(() => dispatcher.close().catch(() => dispatcher.destroy())))

    /**
     * Sends the request to the server (aborted when the client leaves first): `onAnswer` gets the
     * answer, its `finish` to be called once the client has all of it; `onFailure` says why there is
     * none (an internal address refused, the server unreachable).
     */
    const dispatch = (
      req: IncomingMessage,
      res: ServerResponse,
      caller: Caller,
      body: Buffer | undefined,
      onAnswer: (answer: Dispatcher.ResponseData, finish: () => void) => void,
      onFailure: (message: string) => void
    ) => {
      const target = new URL(caller.server.url)
      if (blockedLiteral(target, settings.allowPrivate))
        return onFailure("the MCP server's address is internal: refused")
      const query = (req.url ?? "").indexOf("?")
      const path =
        target.pathname +
        (query < 0
          ? target.search
          : (target.search === "" ? "?" : target.search + "&") + (req.url ?? "").slice(query + 1))
      const abort = new AbortController()
      let finished = false
      const finish = () => {
        finished = true
      }
      res.once("close", () => {
        if (!finished) abort.abort()
      })
      dispatcher
        .request({
          origin: target.origin,
          path,
          method: (req.method ?? "GET") as Dispatcher.HttpMethod,
          headers: upstreamHeaders(req),
          body: body ?? null,
          signal: abort.signal
        })
        .then(
          (answer) => {
            if (res.destroyed) {
              answer.body.destroy()
              return
            }
            answer.body.once("error", () => {
              finish()
              res.destroy()
            })
            onAnswer(answer, finish)
          },
          (error: unknown) => {
            finish()
            if (abort.signal.aborted) return
            runFork(
              Effect.logWarning("MCP server unreachable").pipe(
                Effect.annotateLogs({ server_id: caller.serverId, error: errorKind(error) })
              )
            )
            onFailure("the MCP server could not be reached")
          }
        )
    }

    /** Sends the request on and the answer back byte for byte, reading it on the side when `watch` asks. */
    const forward = (
      req: IncomingMessage,
      res: ServerResponse,
      caller: Caller,
      body: Buffer | undefined,
      watch: Watch | undefined
    ) =>
      dispatch(
        req,
        res,
        caller,
        body,
        (answer, finish) => {
          if (watch?.kind === "call" && answer.statusCode === 200 && caller.settings.mode === "enforce")
            return held(caller, watch, answer, res, finish)
          const reader = watch === undefined ? undefined : readerFor(caller, watch, answer.statusCode, answer.headers)
          res.writeHead(answer.statusCode, responseHeadersForClient(answer.headers))
          // SSE: the client waits for the headers before the first event.
          res.flushHeaders()
          relayWithCopy(answer.body, res, reader, finish)
        },
        (message) => plainError(res, 502, message)
      )

    return { dispatch, forward }
  })
