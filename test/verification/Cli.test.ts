/**
 * `candor verify` as a real child process (`node bin/candor.js`, no build step, no database): a
 * certificate the pipeline stored, with its verdict proof, verifies offline with a saved key
 * listing, with keys fetched once from the API, and against a signed tree head of its size; a
 * tampered file, a tree head of another size, or no keys at all exit non-zero. And `candor keys
 * rotate` / `list` on a real database: a certificate of the retired key verifies with the listing.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { randomUUID } from "node:crypto"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { KEY_FILE } from "../../adapters/keys/SigningKeys.js"
import { attest, emptyLogState } from "../../core/Attestation.js"
import { formatSigningKey, generateSigningKey, parseSigningKey } from "../../core/Signing.js"
import { ApiHarness } from "../api/Support.js"
import { throwawayDatabase } from "../support/Postgres.js"
import { runCandor as candor } from "../e2e/ServeProcess.js"
import { commitEvents, eventually, violation, world } from "./Support.js"
import { layerIntegration } from "../support/Integration.js"

layer(world(), { timeout: "180 seconds", excludeTestServices: true })("candor verify", (it) => {
  it.scoped(
    "verifies a stored certificate and its verdict proof offline; refuses a tampered one",
    () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const agentId = "agt-cli-verify"
        const [id] = yield* commitEvents(agentId, [[violation], []])
        yield* eventually(api.call("GET", `/v1/checkpoints/${id}/proof`), (res) => res.body.status === "completed")
        const certificate = (yield* api.call("GET", `/v1/checkpoints/${id}/certificate`)).body
        const keys = (yield* api.call("GET", "/v1/keys")).body
        const atIssue = (yield* api.call("GET", `/v1/checkpoints/${id}/inclusion-proof?tree_size=1`)).body
          .signed_tree_head
        const latest = (yield* api.call("GET", `/v1/agents/${agentId}/merkle-root`)).body.signed_tree_head

        const dir = yield* Effect.acquireRelease(
          Effect.sync(() => mkdtempSync(join(tmpdir(), "candor-verify-"))),
          (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
        )
        const file = (name: string, content: string) => {
          const path = join(dir, name)
          writeFileSync(path, content)
          return path
        }
        const cert = file("certificate.json", JSON.stringify(certificate, null, 2))
        const keysFile = file("keys.json", JSON.stringify(keys))
        const tampered = file(
          "tampered.json",
          JSON.stringify({ ...certificate, claims: { ...certificate.claims, verdict: "clear" } })
        )
        const headFile = file("head.txt", atIssue)
        const latestFile = file("latest.txt", latest)

        const [valid, fetched, withHead, bad, otherHead, noKeys] = yield* Effect.all(
          [
            candor(["verify", cert, "--keys", keysFile]),
            candor(["verify", cert, "--keys-url", `${api.url}/v1/keys`]),
            candor(["verify", cert, "--keys", keysFile, "--tree-head", headFile]),
            candor(["verify", tampered, "--keys", keysFile]),
            candor(["verify", cert, "--keys", keysFile, "--tree-head", latestFile]),
            candor(["verify", cert])
          ],
          { concurrency: 3 }
        )

        expect(valid.code).toBe(0)
        expect(valid.stdout).toContain("VALID")
        expect(valid.stdout).toMatch(/signature\s+ok/)
        expect(valid.stdout).toMatch(/verdict proof\s+ok\s+STARK/)
        expect(fetched.code).toBe(0)
        expect(withHead.code).toBe(0)
        expect(withHead.stdout).toContain("against the signed tree head given")

        expect(bad.code).toBe(1)
        expect(bad.stdout).toContain("INVALID")
        expect(bad.stdout).toMatch(/signature\s+FAILED/)
        expect(bad.stdout).toMatch(/verdict proof\s+FAILED/)
        expect(otherHead.code).toBe(1)
        expect(otherHead.stdout).toContain("another tree")
        expect(noKeys.code).toBe(2)
        expect(noKeys.stderr).toContain("--keys")
      }),
    { timeout: 150_000 }
  )
})

layerIntegration("postgres", Layer.empty, { timeout: "60 seconds", excludeTestServices: true })("candor keys", (it) => {
  it.scoped(
    "rotate and list: certificates of the retired key still verify with the listing",
    () =>
      Effect.gen(function* () {
        const databaseUrl = Redacted.value(yield* throwawayDatabase.pipe(Effect.orDie))
        const dir = yield* Effect.acquireRelease(
          Effect.sync(() => mkdtempSync(join(tmpdir(), "candor-keys-"))),
          (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
        )
        const env = { DATABASE_URL: databaseUrl, CANDOR_DATA_DIR: dir }

        const empty = yield* candor(["keys", "list"], env)
        expect(empty.code).toBe(0)
        expect(empty.stdout).toContain("No signing key registered yet")
        const first = yield* candor(["keys", "rotate"], env)
        expect(first.code).toBe(0)
        const oldKey = parseSigningKey(readFileSync(join(dir, KEY_FILE), "utf8"))!
        expect(first.stdout).toContain(`New signing key ${oldKey.keyId}`)
        // A certificate signed before the rotation.
        const certificate = attest(
          emptyLogState("agt-cli-keys"),
          {
            certificate_id: "cert-1",
            issued_at: new Date().toISOString(),
            subject: {
              checkpoint_id: `ic-${randomUUID()}`,
              agent_id: "agt-cli-keys",
              session_id: "s",
              card_id: "c",
              timestamp: new Date().toISOString()
            },
            claims: {
              concerns: [],
              boundary_values: [],
              reasoning_summary: "",
              analysis_model: "rules",
              extraction_confidence: null
            },
            input_commitments: {
              thinking_block_hash: "none",
              card_hash: "2".repeat(64),
              values_hash: "3".repeat(64),
              analysis_hash: "4".repeat(64),
              model: "m"
            }
          },
          oldKey
        ).certificate

        const second = yield* candor(["keys", "rotate"], env)
        expect(second.code).toBe(0)
        expect(second.stdout).toContain(`Retired ${oldKey.keyId}`)
        const listed = yield* candor(["keys", "list", "--json"], env)
        expect(listed.code).toBe(0)
        const keys = JSON.parse(listed.stdout).keys as Array<{ key_id: string; status: string }>
        expect(keys.map((key) => key.status)).toEqual(["retired", "active"])
        expect(keys[0]!.key_id).toBe(oldKey.keyId)

        writeFileSync(join(dir, "certificate.json"), JSON.stringify(certificate))
        writeFileSync(join(dir, "keys.json"), listed.stdout)
        const verified = yield* candor(["verify", join(dir, "certificate.json"), "--keys", join(dir, "keys.json")])
        expect(verified.code).toBe(0)

        // With SIGNING_KEY set, nothing is rotated: the command explains, and exits non-zero.
        const configured = yield* candor(["keys", "rotate"], {
          ...env,
          SIGNING_KEY: formatSigningKey(generateSigningKey())
        })
        expect(configured.code).toBe(1)
        expect(configured.stderr).toContain("set a new SIGNING_KEY")
        expect(configured.stderr).toContain("stays listed")
      }),
    { timeout: 120_000 }
  )
})
