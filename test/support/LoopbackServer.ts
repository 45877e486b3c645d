/**
 * A node:http server on 127.0.0.1 (a free port) answering fixed responses by path, for browser
 * tests: Chromium loads what the renderers produced exactly as a route would send it.
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"

export interface FixedResponse {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

export interface LoopbackServer {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string
  /** Paths requested so far, in order (query strings included). */
  readonly requested: ReadonlyArray<string>
  readonly close: () => Promise<void>
}

/** Serves `routes(origin)` (path → response); anything else is a plain 404. */
export const serveLoopback = async (
  routes: (origin: string) => ReadonlyMap<string, FixedResponse>
): Promise<LoopbackServer> => {
  const requested: Array<string> = []
  let table: ReadonlyMap<string, FixedResponse> = new Map()
  const server = createServer((request, response) => {
    const path = request.url ?? "/"
    requested.push(path)
    const found = table.get(path)
    if (found === undefined) {
      response.writeHead(404, { "content-type": "text/plain" }).end("not found")
      return
    }
    response.writeHead(found.status, found.headers).end(found.body)
  })
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => resolve())
  })
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  table = routes(origin)
  return {
    origin,
    requested,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections()
        server.close((error) => (error === undefined ? resolve() : reject(error)))
      })
  }
}
