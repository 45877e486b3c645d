/**
 * Which real servers the integration tests may use, decided once from the environment:
 * PostgreSQL at TEST_DATABASE_URL and NATS with JetStream at TEST_NATS_URL (the `nats-server`
 * binary too, for the tests that run a private one). Outside CI a server that is not configured
 * skips the tests that need it, so a bare clone passes `npm test`; with `CI=true` nothing skips.
 *
 * Also vitest's globalSetup (the default export): it fails the run, before any test, when CI lacks
 * a server's URL or when a configured server does not answer, so a missing server is a failure
 * with one clear message rather than a timeout in every test that needs it.
 */
import { connect } from "node:net"

export type Server = "postgres" | "nats"

export const serverEnv: Readonly<Record<Server, string>> = { postgres: "TEST_DATABASE_URL", nats: "TEST_NATS_URL" }

const serverName: Readonly<Record<Server, string>> = { postgres: "PostgreSQL", nats: "NATS" }

const SERVERS: ReadonlyArray<Server> = ["postgres", "nats"]

export const inCi = (): boolean => {
  const ci = process.env.CI
  return ci !== undefined && ci !== "" && ci !== "0" && ci !== "false"
}

const configured = (server: Server): string | undefined => {
  const url = process.env[serverEnv[server]]
  return url === undefined || url === "" ? undefined : url
}

/** The servers whose tests are skipped in this run: none in CI, else those not configured. */
export const skippedServers = (): ReadonlyArray<Server> =>
  inCi() ? [] : SERVERS.filter((s) => configured(s) === undefined)

/** Whether tests needing all of `servers` are skipped in this run. */
export const skips = (servers: ReadonlyArray<Server>): boolean => servers.some((s) => skippedServers().includes(s))

/** The run's one line about skipped integration tests, or undefined when none are skipped. */
export const skipNotice = (): string | undefined => {
  const missing = skippedServers()
  if (missing.length === 0) return undefined
  return (
    `integration tests skipped: no ${missing.map((s) => serverEnv[s]).join(" / ")}; run them with ` +
    "`CI=true TEST_DATABASE_URL=postgres://… TEST_NATS_URL=nats://… npm test` or `bash .ci/run`"
  )
}

const DEFAULT_PORT: Readonly<Record<Server, number>> = { postgres: 5432, nats: 4222 }

/** Resolves when a TCP connection to the URL's host and port opens, rejects otherwise (3 s). */
const reachable = (server: Server, url: string): Promise<void> =>
  new Promise((resolve, reject) => {
    const parsed = new URL(url)
    const host = parsed.hostname === "" ? "127.0.0.1" : parsed.hostname.replace(/^\[|\]$/g, "")
    const port = parsed.port === "" ? DEFAULT_PORT[server] : Number(parsed.port)
    const socket = connect({ host, port, timeout: 3_000 })
    const fail = (why: string) => {
      socket.destroy()
      reject(new Error(`${serverName[server]} at ${host}:${port} (${serverEnv[server]}) is not reachable: ${why}`))
    }
    socket.once("connect", () => {
      socket.end()
      resolve()
    })
    socket.once("timeout", () => fail("timed out"))
    socket.once("error", (error) => fail(error.message))
  })

export default async function setup(): Promise<void> {
  const problems: Array<string> = []
  for (const server of SERVERS) {
    const url = configured(server)
    if (url === undefined) {
      if (inCi()) problems.push(`CI is set but ${serverEnv[server]} is not: ${serverName[server]} tests must run in CI`)
      continue
    }
    try {
      await reachable(server, url)
    } catch (error) {
      problems.push(error instanceof Error ? error.message : String(error))
    }
  }
  if (problems.length > 0) throw new Error(`integration servers missing:\n  ${problems.join("\n  ")}`)
}
