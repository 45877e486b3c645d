/**
 * The console's agent page and its verify page in Chromium, against a real `candor serve` (embedded
 * default) fed by a fake Anthropic upstream on loopback, signed in as the agent's Owner:
 * - the agent page shows the charts (uPlot, loaded on demand), the timeline, reputation and the
 *   controls the Owner may use; the agent's name is the gateway's `x-candor-agent` label (through the
 *   worker) until the Owner renames it in the page, shown as text in the page and the fleet, its id a
 *   click away; pausing goes through an accessible confirmation dialog (focus
 *   trapped, Escape cancels), the status changes and the gateway refuses the next request (403);
 * - the policy editor (CodeMirror, on demand) shows the API's validation error on its line, then saves;
 * - a real certificate verifies in the page, every layer (the STARK verdict proof included), asking
 *   the server only for the public keys and the signed tree head, without credentials; a tampered
 *   one is refused with the failing layer named.
 * Screenshots go to test-artifacts/console-agent/.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { execFileSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { resolve } from "node:path"
import type { Page } from "playwright-core"
import { mintToken } from "../../adapters/auth/IdentityTokens.js"
import { PROTOCOL_DISCLAIMER } from "../../core/schema/Disclaimer.js"
import { startServe } from "../e2e/ServeProcess.js"
import {
  anthropicUpstream,
  fetchAs,
  fetchJson,
  INJECTED_THINKING,
  newAgent,
  poll,
  printLogsOnFailure,
  sendThroughGateway,
  SERVICE_ROLE_KEY
} from "../e2e/Support.js"
import { artifactPath, type Browser, type Dom, launchBrowser, skipBrowser } from "../support/Browser.js"

const JWT_SECRET = randomBytes(32).toString("base64url")
const ROOT = resolve(import.meta.dirname, "../..")
const shot = (page: Page, name: string) =>
  page.screenshot({ path: artifactPath("console-agent", name), fullPage: true })
const browserOf = Effect.acquireRelease(
  Effect.promise(() => launchBrowser()),
  (browser: Browser) => Effect.promise(() => browser.close())
)
const run = <A>(f: () => Promise<A>) => Effect.promise(f)

layer(Layer.empty, { timeout: "300 seconds", excludeTestServices: true })("console: agent page and verify", (it) => {
  it.scoped.skipIf(skipBrowser())(
    "an Owner watches, pauses and edits the policy; a certificate verifies in the page, a tampered one does not",
    () =>
      Effect.gen(function* () {
        // The console as the server will serve it: built from these sources.
        execFileSync(
          process.execPath,
          [resolve(ROOT, "node_modules/vite/bin/vite.js"), "build", "--config", "console/vite.config.ts"],
          {
            cwd: ROOT,
            stdio: "pipe"
          }
        )
        const upstream = yield* anthropicUpstream(INJECTED_THINKING)
        const serve = yield* startServe({
          env: { ANTHROPIC_BASE_URL: upstream.url, SERVICE_ROLE_KEY, AUTH_JWT_SECRET: JWT_SECRET }
        })
        const browser = yield* browserOf
        yield* Effect.gen(function* () {
          const token = yield* run(() =>
            mintToken(JWT_SECRET, { sub: "owner-console", email: "owner@example.test", ttlSeconds: 3600 })
          )
          const asOwner = fetchAs(token)
          const { providerKey } = newAgent()
          const agentName = "console-bot"
          const claim = yield* asOwner(`${serve.apiUrl}/v1/agents/claim`, {
            method: "POST",
            body: JSON.stringify({ provider_key: providerKey, agent_name: agentName })
          })
          expect(claim.status, JSON.stringify(claim.body)).toBe(200)
          const agentId: string = claim.body.agent_id
          for (let i = 0; i < 3; i++)
            expect((yield* sendThroughGateway(serve.gatewayUrl, providerKey, { agentName })).status).toBe(200)
          const listed = yield* poll(
            asOwner(`${serve.apiUrl}/v1/agents/${agentId}/checkpoints?limit=10`),
            (res) => res.status === 200 && res.body.checkpoints.length === 3,
            "checkpoints committed",
            30_000
          )
          // Boundary violations are always proved: wait for the newest one's proof, then its certificate carries it.
          const checkpointId: string = listed.body.checkpoints[0].checkpoint_id
          expect(listed.body.checkpoints[0].verdict).toBe("boundary_violation")
          yield* poll(
            fetchJson(`${serve.apiUrl}/v1/checkpoints/${checkpointId}/proof`),
            (res) => res.body?.status === "completed",
            "verdict proof completed",
            60_000
          )
          const certificate = (yield* fetchJson(`${serve.apiUrl}/v1/checkpoints/${checkpointId}/certificate`)).body
          expect(certificate.verdict_proof).not.toBeNull()

          const page = yield* run(() => browser.page(1280, 900))
          const errors: Array<string> = []
          page.on("pageerror", (error) => errors.push(error.message))
          page.on("console", (message) => {
            // The browser logs every 4xx answer (the policy's 404 before the first save, the 400 of an
            // invalid one); those are answers the page handles. Anything else is a failure.
            if (message.type() === "error" && !message.text().startsWith("Failed to load resource"))
              errors.push(message.text())
          })

          // ---- sign in, open the agent page ----
          yield* run(async () => {
            await page.goto(`${serve.apiUrl}/console/#/agents/${agentId}`)
            await page.locator("input[type=password]").fill(token)
            await page.getByRole("button", { name: "Sign in" }).click()
            await expect.poll(() => page.getByTestId("agent-status").innerText(), { timeout: 20_000 }).toBe("active")
            await expect.poll(() => page.getByTestId("timeline-item").count(), { timeout: 20_000 }).toBe(3)
            // Named by the gateway's label, committed by the worker with the agent's first checkpoint.
            expect(await page.getByTestId("agent-title").innerText()).toBe(agentName)
            expect(await page.getByTestId("agent-id").innerText()).toBe(agentId)
            // uPlot drew both charts (its canvas is there), from a chunk loaded on demand.
            await page.locator("[data-testid=verdict-chart] .uplot canvas").waitFor({ timeout: 15_000 })
            await page.locator("[data-testid=concern-chart] .uplot canvas").waitFor()
            expect(await page.getByTestId("verdict-chart").getAttribute("data-points")).not.toBe("0")
            // The checkpoints (one point: they are seconds apart) lie on the drawn axis, well inside it.
            const axis = page.locator("[data-testid=verdict-chart] [data-x-max]")
            await axis.waitFor()
            const at = Date.parse(listed.body.checkpoints[0].timestamp) / 1000
            const [xMin, xMax] = [
              Number(await axis.getAttribute("data-x-min")),
              Number(await axis.getAttribute("data-x-max"))
            ]
            expect(xMin).toBeLessThanOrEqual(at)
            expect(xMax).toBeGreaterThanOrEqual(at)
            // An hour around them, not uPlot's own range for one x value (1,000 days from it, the point on the edge).
            expect(xMax - xMin).toBeLessThanOrEqual(3600)
            await page.getByTestId("reputation").waitFor()
            const links = await page
              .getByTestId("verify-link")
              .evaluateAll((as) => as.map((a) => a.getAttribute("href")))
            expect(links).toContain(`#/verify/${checkpointId}`)
            // The Owner may do everything; what does not apply to an active agent is disabled.
            expect(await page.getByTestId("action-pause").isEnabled()).toBe(true)
            expect(await page.getByTestId("action-kill").isEnabled()).toBe(true)
            expect(await page.getByTestId("action-resume").isDisabled()).toBe(true)
            expect(await page.getByTestId("action-reactivate").isDisabled()).toBe(true)
            await shot(page, "agent-page")
          })

          // ---- renamed in the page: text, never markup (the fleet shows it too, at the end) ----
          const renamed = `<i>Ops</i> & "bot" ${randomBytes(3).toString("hex")}`
          yield* run(async () => {
            await page.getByTestId("agent-name-input").fill(renamed)
            await page.getByTestId("agent-name-save").click()
            await expect.poll(() => page.getByTestId("agent-title").innerText(), { timeout: 20_000 }).toBe(renamed)
            expect(await page.locator("[data-testid=agent-title] i").count()).toBe(0)
            expect(await page.getByTestId("agent-id").innerText()).toBe(agentId)
          })
          const published = yield* fetchJson(`${serve.apiUrl}/v1/reputation/${agentId}`)
          expect(published.status).toBe(200)
          expect(JSON.stringify(published.body)).not.toContain("Ops")
          expect(JSON.stringify(published.body)).not.toContain(agentName)

          // ---- pause through the dialog: keyboard first (Escape cancels, Tab stays inside) ----
          yield* run(async () => {
            await page.getByTestId("action-pause").click()
            const dialog = page.getByRole("dialog")
            await dialog.waitFor()
            expect(await page.evaluate(() => (globalThis as unknown as Dom).document.activeElement?.textContent)).toBe(
              "Cancel"
            )
            for (let i = 0; i < 6; i++) {
              await page.keyboard.press(i % 2 === 0 ? "Tab" : "Shift+Tab")
              await page.keyboard.press("Tab")
              expect(
                await page.evaluate(() => {
                  const { document } = globalThis as unknown as Dom
                  return document.querySelector("[role=dialog]").contains(document.activeElement)
                })
              ).toBe(true)
            }
            await page.keyboard.press("Escape")
            await dialog.waitFor({ state: "detached" })
            expect(await page.getByTestId("agent-status").innerText()).toBe("active")
            // Focus went back to the button that opened it.
            expect(
              await page.evaluate(() => (globalThis as unknown as Dom).document.activeElement?.dataset?.testid)
            ).toBe("action-pause")
            await page.getByTestId("action-pause").click()
            await dialog.getByRole("textbox").fill("console e2e")
            await shot(page, "pause-dialog")
            await page.getByTestId("confirm-button").click()
            await expect.poll(() => page.getByTestId("agent-status").innerText(), { timeout: 20_000 }).toBe("paused")
            expect(await page.getByTestId("action-resume").isEnabled()).toBe(true)
          })
          const refused = yield* sendThroughGateway(serve.gatewayUrl, providerKey, { agentName })
          expect(refused.status).toBe(403)
          expect(refused.body).toMatchObject({ type: "containment_error", reason: "agent_paused" })

          // ---- the policy: an invalid document is refused with its line marked, a valid one saved ----
          yield* run(async () => {
            await page.locator("[data-testid=policy-editor][data-ready=true] .cm-content").click()
            await page.keyboard.press("Control+A")
            await page.keyboard.press("Delete")
            await page.keyboard.insertText('forbidden:\n  - pattern: "shell_*\n    reason: no shells\n')
            await page.getByTestId("policy-save").click()
            await expect
              .poll(() => page.getByTestId("policy-message").innerText(), { timeout: 20_000 })
              .toMatch(/line \d+/)
            expect(await page.locator("[data-testid=policy-editor] [data-error-line]").count()).toBe(1)
            await shot(page, "policy-invalid")
            await page.locator("[data-testid=policy-editor] .cm-content").click()
            await page.keyboard.press("Control+A")
            await page.keyboard.press("Delete")
            await page.keyboard.insertText('forbidden:\n  - pattern: "shell_*"\n    reason: no shells\n')
            await page.getByTestId("policy-save").click()
            await expect
              .poll(() => page.getByTestId("policy-message").innerText(), { timeout: 20_000 })
              .toBe("Saved as version 1.")
            expect(await page.locator("[data-testid=policy-editor] [data-error-line]").count()).toBe(0)
          })
          const policy = yield* asOwner(`${serve.apiUrl}/v1/agents/${agentId}/policy`)
          expect(policy.body.policy.forbidden).toEqual([
            expect.objectContaining({ pattern: "shell_*", reason: "no shells" })
          ])

          // ---- verify in the browser: only public requests, no credential ----
          const verifyPasted = async (document: unknown) => {
            const requests: Array<{ readonly url: string; readonly auth: boolean; readonly method: string }> = []
            const record = (request: {
              url: () => string
              method: () => string
              headers: () => Record<string, string>
            }) => {
              if (new URL(request.url()).pathname.startsWith("/v1/")) {
                const headers = request.headers()
                requests.push({
                  url: request.url().slice(serve.apiUrl.length),
                  method: request.method(),
                  auth: headers["authorization"] !== undefined || headers["x-api-key"] !== undefined
                })
              }
            }
            page.on("request", record)
            await page.goto(`${serve.apiUrl}/console/#/verify`)
            await page.getByTestId("certificate-input").fill(JSON.stringify(document, null, 2))
            await page.getByTestId("verify-button").click()
            await page.getByTestId("verify-result").waitFor({ timeout: 60_000 })
            page.off("request", record)
            const layers = await page
              .locator("[data-testid^=layer-]")
              .evaluateAll((items) => Object.fromEntries(items.map((li) => [li.dataset.testid, li.dataset.status])))
            return {
              requests,
              layers,
              heading: await page.locator("#verify-result").innerText(),
              disclaimer: await page.getByTestId("disclaimer").innerText()
            }
          }
          const inclusion = `/v1/checkpoints/${checkpointId}/inclusion-proof?tree_size=${certificate.merkle.tree_size}`
          const valid = yield* run(() => verifyPasted(certificate))
          expect(valid.layers).toEqual({
            "layer-format": "pass",
            "layer-signature": "pass",
            "layer-chain": "pass",
            "layer-merkle": "pass",
            "layer-tree_head": "pass",
            "layer-verdict": "pass",
            "layer-verdict_proof": "pass"
          })
          expect(valid.heading).toContain("Valid")
          expect(valid.disclaimer).toBe(PROTOCOL_DISCLAIMER)
          expect(valid.requests).toEqual([
            { url: "/v1/keys", method: "GET", auth: false },
            { url: inclusion, method: "GET", auth: false }
          ])
          yield* run(() => shot(page, "verify-valid"))

          // A field under the signature changed: the signature layer fails, and only what depends on it.
          const edited = yield* run(() =>
            verifyPasted({ ...certificate, claims: { ...certificate.claims, reasoning_summary: "nothing to see" } })
          )
          expect(edited.layers["layer-signature"]).toBe("fail")
          expect(edited.layers["layer-chain"]).toBe("pass")
          expect(edited.heading).toContain("signature")
          yield* run(() => shot(page, "verify-tampered-field"))

          // The proof (outside the signature) changed: the verdict proof layer fails.
          const proof: string = certificate.verdict_proof.proof
          const flipped = (proof[100] === "A" ? "B" : "A") as string
          const badProof = yield* run(() =>
            verifyPasted({
              ...certificate,
              verdict_proof: { ...certificate.verdict_proof, proof: proof.slice(0, 100) + flipped + proof.slice(101) }
            })
          )
          expect(badProof.layers["layer-verdict_proof"]).toBe("fail")
          expect(badProof.layers["layer-signature"]).toBe("pass")
          expect(badProof.heading).toContain("verdict proof")

          // A Merkle path changed: the inclusion fails (and the signature, which covers it).
          const badPath = yield* run(() =>
            verifyPasted({
              ...certificate,
              merkle: { ...certificate.merkle, root: "00".repeat(32) }
            })
          )
          expect(badPath.layers["layer-merkle"]).toBe("fail")
          expect(badPath.layers["layer-tree_head"]).toBe("skipped")

          // Opened from the agent page by checkpoint id: the certificate is fetched, then checked.
          yield* run(async () => {
            await page.goto(`${serve.apiUrl}/console/#/verify/${checkpointId}`)
            await page.getByTestId("verify-result").waitFor({ timeout: 60_000 })
            expect(await page.getByTestId("verify-result").getAttribute("data-valid")).toBe("true")
          })

          // ---- the fleet names the agent, its organization beside it, the id a click away ----
          yield* run(async () => {
            await page.goto(`${serve.apiUrl}/console/#/fleet`)
            const link = page.locator(`tr[data-agent="${agentId}"] [data-testid=agent-link]`)
            await link.waitFor({ timeout: 20_000 })
            expect(await link.innerText()).toBe(renamed)
            expect(await link.getAttribute("title")).toBe(agentId)
            expect(await link.getAttribute("href")).toBe(`#/agents/${agentId}`)
            await shot(page, "fleet-named")
          })
          expect(errors).toEqual([])
        }).pipe(printLogsOnFailure(serve))
      }),
    300_000
  )
})
