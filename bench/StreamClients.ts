/**
 * The clients of `npm run bench:stream` (bench/Stream.ts), in a worker thread so that their parsing
 * does not share the server's event loop: opens `clients` SSE streams, says `ready` once each has
 * its first heartbeat, and on `collect` (or once every client has `total` events) answers with the
 * sorted event-to-client latencies (received − created_at, ms).
 */
import { parentPort, workerData } from "node:worker_threads"
import { openStream } from "../test/api/StreamClient.js"

interface Input {
  readonly url: string
  readonly token: string
  readonly clients: number
  readonly total: number
}

const { clients: count, token, total, url } = workerData as Input

const main = async () => {
  const clients = await Promise.all(
    Array.from({ length: count }, async () => {
      const client = await openStream(url, { token })
      if (client.status !== 200) throw new Error(`stream refused: ${client.status} ${JSON.stringify(client.error)}`)
      await client.ready
      return client
    })
  )
  parentPort!.postMessage({ ready: true })
  const done = () => clients.every((c) => c.events.length >= total)
  await new Promise<void>((resolve) => {
    parentPort!.once("message", () => resolve())
    const poll = setInterval(() => {
      if (done()) {
        clearInterval(poll)
        resolve()
      }
    }, 50)
  })
  const latencies = new Float64Array(clients.reduce((n, c) => n + c.events.length, 0))
  let i = 0
  for (const client of clients) {
    for (const e of client.events) latencies[i++] = e.receivedAt - Date.parse(e.envelope.created_at)
    client.close()
  }
  latencies.sort()
  parentPort!.postMessage({ latencies }, [latencies.buffer])
}

main().catch((error) => {
  parentPort!.postMessage({ error: String(error) })
})
