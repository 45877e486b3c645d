/**
 * A TCP proxy between a worker and PostgreSQL that the test can take down: `down` resets every
 * open connection and refuses new ones (the server gone, as during a restart), `up` lets them
 * through again. Only the worker goes through it; the test's own connections do not.
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { createServer, type Socket, connect } from "node:net"

export interface TcpProxy {
  readonly port: number
  /** Resets every open connection and refuses new ones until `up`. */
  readonly down: Effect.Effect<void>
  readonly up: Effect.Effect<void>
  /** Connections let through so far (to see the client reconnect). */
  readonly accepted: () => number
  /** Connections refused while down (to see the client keep trying). */
  readonly refused: () => number
}

export const tcpProxy = (target: {
  readonly host: string
  readonly port: number
}): Effect.Effect<TcpProxy, Error, Scope.Scope> =>
  Effect.gen(function* () {
    const open = new Set<Socket>()
    let refusing = false
    let accepted = 0
    let refused = 0
    const server = createServer((client) => {
      if (refusing) {
        refused++
        return void client.resetAndDestroy()
      }
      accepted++
      const upstream = connect(target.port, target.host)
      for (const socket of [client, upstream]) {
        open.add(socket)
        socket.on("error", () => undefined)
        socket.on("close", () => {
          open.delete(socket)
          client.destroy()
          upstream.destroy()
        })
      }
      client.pipe(upstream)
      upstream.pipe(client)
    })
    const port = yield* Effect.acquireRelease(
      Effect.async<number, Error>((resume) => {
        server.once("error", (error) => resume(Effect.fail(error)))
        server.listen(0, "127.0.0.1", () => {
          const address = server.address()
          resume(
            typeof address === "object" && address !== null
              ? Effect.succeed(address.port)
              : Effect.fail(new Error("no port"))
          )
        })
      }),
      () =>
        Effect.async<void>((resume) => {
          for (const socket of open) socket.destroy()
          server.close(() => resume(Effect.void))
        })
    )
    return {
      port,
      down: Effect.sync(() => {
        refusing = true
        for (const socket of open) socket.resetAndDestroy()
      }),
      up: Effect.sync(() => {
        refusing = false
      }),
      accepted: () => accepted,
      refused: () => refused
    }
  })
