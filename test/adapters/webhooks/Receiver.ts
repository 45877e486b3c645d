/**
 * A webhook receiver on a loopback port for tests: records every request (headers and raw body)
 * and answers with the status (and headers) its `respond` function gives for the n-th request (from
 * 1), or never answers (`"hang"`). Closed, hanging connections included, when the scope closes.
 */
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import { createServer, type IncomingHttpHeaders } from "node:http"
import type { AddressInfo } from "node:net"

export interface ReceivedRequest {
  readonly method: string
  readonly path: string
  readonly headers: IncomingHttpHeaders
  readonly body: string
}

export interface Receiver {
  readonly url: string
  /** Every request so far, in arrival order. */
  readonly received: ReadonlyArray<ReceivedRequest>
  /** The next request not yet taken, waiting for it if need be. */
  readonly take: Effect.Effect<ReceivedRequest>
}

/** A status, a status with headers (`Retry-After`), or no answer at all. */
export type Answer = number | { readonly status: number; readonly headers: Record<string, string> } | "hang"

export const makeReceiver = (respond: (n: number) => Answer): Effect.Effect<Receiver, never, Scope.Scope> =>
  Effect.gen(function* () {
    const received: Array<ReceivedRequest> = []
    const queue = yield* Queue.unbounded<ReceivedRequest>()
    const server = createServer((request, response) => {
      const chunks: Array<Buffer> = []
      request.on("data", (chunk: Buffer) => chunks.push(chunk))
      request.on("end", () => {
        const entry = {
          method: request.method ?? "",
          path: request.url ?? "",
          headers: request.headers,
          body: Buffer.concat(chunks).toString("utf8")
        }
        received.push(entry)
        Queue.unsafeOffer(queue, entry)
        const answer = respond(received.length)
        if (answer === "hang") return
        const { status, headers } = typeof answer === "number" ? { status: answer, headers: {} } : answer
        response.writeHead(status, { "content-type": "text/plain", ...headers }).end(`answer ${status}`)
      })
    })
    const port = yield* Effect.acquireRelease(
      Effect.async<number>((resume) => {
        server.listen(0, "127.0.0.1", () => resume(Effect.succeed((server.address() as AddressInfo).port)))
      }),
      () =>
        Effect.async<void>((resume) => {
          server.closeAllConnections()
          server.close(() => resume(Effect.void))
        })
    )
    return { url: `http://127.0.0.1:${port}/hooks`, received, take: Queue.take(queue) }
  })
