/**
 * `candor reputation verify` as a real child process (`node bin/candor.js`) against a loopback HTTP
 * server that serves what the API serves: a reputation published over a log of real signed
 * certificates, the key listing, and the certificate pages (100 at a time here, so the CLI must follow
 * `next`). The honest record exits 0; a changed certificate or a bumped score exits 1 naming what
 * differs; an unknown agent or no --url exits 2.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { AgentReputation } from "../../core/schema/Reputation.js"
import { generateSigningKey } from "../../core/Signing.js"
import { runCandor as candor } from "../e2e/ServeProcess.js"
import {
  publishedReputation,
  signedLog,
  type SignedLog,
  WORKED_EXAMPLE_AT,
  WORKED_EXAMPLE_COHERENCE,
  workedExampleEntries
} from "../support/ReputationLog.js"

const SERVER_PAGE = 100

interface Served {
  readonly reputation: AgentReputation
  readonly certificates: ReadonlyArray<unknown>
}

const key = generateSigningKey()
const good = signedLog("agt-good", workedExampleEntries(), key)
const entries = workedExampleEntries()
/** The score was computed over 239 certificates; the log has grown by one since. */
const grownPrefix = signedLog("agt-grown", entries.slice(0, 239), key)
const grown = signedLog("agt-grown", entries, key)
const empty = signedLog("agt-empty", [], key)
const tampered = signedLog("agt-tampered", workedExampleEntries(), key)
const bumped = signedLog("agt-bumped", workedExampleEntries(), key)

const publish = (log: SignedLog) => publishedReputation(log, WORKED_EXAMPLE_AT, WORKED_EXAMPLE_COHERENCE)

const agents = new Map<string, Served>([
  ["agt-good", { reputation: publish(good), certificates: good.certificates }],
  ["agt-grown", { reputation: publish(grownPrefix), certificates: grown.certificates }],
  ["agt-empty", { reputation: publish(empty), certificates: [] }],
  [
    "agt-tampered",
    {
      reputation: publish(tampered),
      certificates: tampered.certificates.map((certificate, i) =>
        i === 0 ? { ...certificate, claims: { ...certificate.claims, verdict: "clear" } } : certificate
      )
    }
  ],
  [
    // Its own honest log, under a score and a component five points higher than they are.
    "agt-bumped",
    {
      reputation: {
        ...publish(bumped),
        score: publish(bumped).score + 5,
        components: publish(bumped).components.map((c) => (c.key === "compliance" ? { ...c, score: c.score + 5 } : c))
      },
      certificates: bumped.certificates
    }
  ]
])

const json = (status: number, body: unknown) => ({ status, body: JSON.stringify(body) })

const answer = (url: URL): { status: number; body: string } => {
  if (url.pathname === "/v1/keys") return json(200, good.keys)
  const reputation = /^\/v1\/reputation\/([^/]+)$/.exec(url.pathname)
  if (reputation !== null) {
    const served = agents.get(decodeURIComponent(reputation[1]!))
    return served === undefined ? json(404, { error: "agent not found" }) : json(200, served.reputation)
  }
  const page = /^\/v1\/agents\/([^/]+)\/certificates$/.exec(url.pathname)
  if (page !== null) {
    const agentId = decodeURIComponent(page[1]!)
    const served = agents.get(agentId)
    if (served === undefined || served.certificates.length === 0) return json(404, { error: "agent not found" })
    const from = Number(url.searchParams.get("from") ?? 0)
    const limit = Math.min(SERVER_PAGE, Number(url.searchParams.get("limit") ?? 100))
    const size = served.certificates.length
    const certificates = served.certificates.slice(from, from + limit)
    const next = from + certificates.length < size ? from + certificates.length : null
    return json(200, { agent_id: agentId, from, limit, tree_size: size, certificates, next })
  }
  return json(404, { error: "not found" })
}

const loopback = Effect.acquireRelease(
  Effect.async<Server>((resume) => {
    const server = createServer((request, response) => {
      const { status, body } = answer(new URL(request.url ?? "/", "http://127.0.0.1"))
      response.writeHead(status, { "content-type": "application/json" }).end(body)
    })
    server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
  }),
  (server) => Effect.async<void>((resume) => void server.close(() => resume(Effect.void)))
)

const tempDir = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "candor-reputation-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

describe("candor reputation verify", () => {
  it.scoped(
    "recomputes a published score from its certificates; a changed certificate or number fails, a bad call is usage",
    () =>
      Effect.gen(function* () {
        const server = yield* loopback
        const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
        const dir = yield* tempDir
        const otherKeys = join(dir, "other-keys.json")
        writeFileSync(otherKeys, JSON.stringify(signedLog("agt-x", [], generateSigningKey()).keys))
        const pinned = join(dir, "keys.json")
        writeFileSync(pinned, JSON.stringify(good.keys))
        const verify = (...args: Array<string>) => candor(["reputation", "verify", ...args])

        const [valid, withV1, grew, none, changed, bumped, wrongKeys, unknown, noUrl] = yield* Effect.all(
          [
            verify("agt-good", "--url", url, "--keys", pinned),
            verify("agt-good", "--url", `${url}/v1/`),
            verify("agt-grown", "--url", url),
            verify("agt-empty", "--url", url),
            verify("agt-tampered", "--url", url),
            verify("agt-bumped", "--url", url),
            verify("agt-good", "--url", url, "--keys", otherKeys),
            verify("agt-nobody", "--url", url),
            verify("agt-good")
          ],
          { concurrency: 3 }
        )

        expect(valid.code, valid.stderr).toBe(0)
        expect(valid.stdout).toContain("VALID")
        expect(valid.stdout).toContain("computed 2026-03-20T12:00:00.000Z over 240 certificates")
        for (const check of ["prefix", "certificates", "chain", "merkle", "tree head", "scores"])
          expect(valid.stdout).toMatch(new RegExp(`${check}\\s+ok`))
        expect(valid.stdout).toMatch(/score\s+805\s+805\n/)
        expect(valid.stdout).toMatch(/compliance\s+282\s+282\n/)
        expect(valid.stdout).toMatch(/grade\s+AA\s+AA\n/)
        expect(valid.stdout).toContain("220 analysed (209 clear), 30 long sessions (29 stable)")
        expect(withV1.code, withV1.stderr).toBe(0)
        expect(grew.code, grew.stdout).toBe(0)
        expect(grew.stdout).toContain("over 239 certificates")
        expect(none.code, none.stdout + none.stderr).toBe(0)
        expect(none.stdout).toMatch(/grade\s+NR\s+NR\n/)

        expect(changed.code).toBe(1)
        expect(changed.stdout).toContain("INVALID")
        expect(changed.stdout).toMatch(/certificates\s+FAILED/)
        expect(changed.stdout).toMatch(/chain\s+FAILED/)
        expect(changed.stdout).toContain("certificate 0 (ic-00000000-0000-4000-8000-000000000000): signature")

        expect(bumped.code).toBe(1)
        expect(bumped.stdout).toMatch(/scores\s+FAILED/)
        expect(bumped.stdout).toMatch(/score\s+810\s+805\s+≠/)
        expect(bumped.stdout).toContain("scores: score: published 810, recomputed 805")
        expect(bumped.stdout).toContain("scores: components.compliance.score: published 287, recomputed 282")
        expect(bumped.stdout).toMatch(/certificates\s+ok/)

        expect(wrongKeys.code).toBe(1)
        expect(wrongKeys.stdout).toContain("unknown key_id")
        expect(wrongKeys.stdout).toMatch(/tree head\s+FAILED/)

        expect(unknown.code).toBe(2)
        expect(unknown.stderr).toContain("HTTP 404: agent not found")
        expect(noUrl.code).toBe(2)
        expect(noUrl.stderr).toContain("--url")
      }),
    { timeout: 120_000 }
  )
})
