/**
 * The control of bench/TenantFlood.ts: a server that reads every request body to its end and answers
 * 413, so the same floods can be sent somewhere that is not Candor. What the victim loses beside
 * them then is what moving those bytes costs this (shared, 2-core) machine, not the gateway.
 * Prints its port on the first line.
 */
import { createServer } from "node:http"

const server = createServer((req, res) => {
  req.resume()
  req.on("end", () => {
    res.writeHead(413, { "content-type": "application/json" })
    res.end('{"error":"sink"}')
  })
})
server.keepAliveTimeout = 60_000
server.listen(0, "127.0.0.1", () => {
  const address = server.address()
  process.stdout.write(`${typeof address === "object" && address !== null ? address.port : 0}\n`)
})
process.on("SIGTERM", () => server.close(() => process.exit(0)))
