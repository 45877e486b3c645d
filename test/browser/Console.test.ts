/**
 * The console end to end, in Chromium, against a real `candor serve` on the embedded default (a fake
 * Anthropic upstream on loopback, the browser talking to the API through a TCP proxy the test can
 * cut):
 * - the one-time link printed by `candor serve` signs the local operator in (and is gone from the
 *   address bar); a second use is refused; a token signs a user in;
 * - an agent appears in the fleet after a gateway request; paused through the API, its containment
 *   event arrives in the live feed and the gateway refuses its next request;
 * - the feed survives cut connections without a gap: every containment event made while the proxy
 *   drops the stream is shown exactly once;
 * - the service-role key is refused at sign-in (the page says why, sessionStorage keeps nothing);
 * - keyboard navigation (skip link, visible focus, nav by keyboard), a 390 px window without
 *   horizontal scrolling, webhooks (a secret shown once), both themes. Screenshots go to
 *   test-artifacts/console/.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { existsSync } from "node:fs"
import { createConnection, createServer, type Socket } from "node:net"
import { fileURLToPath } from "node:url"
import type { Page } from "playwright-core"
import { build } from "vite"
import { runCandor, startServe } from "../e2e/ServeProcess.js"
import {
  SERVICE_ROLE_KEY,
  anthropicUpstream,
  asOperator,
  newAgent,
  poll,
  printLogsOnFailure,
  sendThroughGateway
} from "../e2e/Support.js"
import { artifactPath, type Dom, launchBrowser, skipBrowser } from "../support/Browser.js"

const shot = (page: Page, name: string) => page.screenshot({ path: artifactPath("console", name) })

/** The console's build, made once if this tree has none (CI's `npm ci` makes it). */
const ensureBuilt = Effect.promise(async () => {
  const config = fileURLToPath(new URL("../../console/vite.config.ts", import.meta.url))
  if (!existsSync(fileURLToPath(new URL("../../console/dist/index.html", import.meta.url))))
    await build({ configFile: config, logLevel: "silent" })
})

/** A TCP proxy to `port` on loopback whose open connections the test can cut. */
const cuttableProxy = (port: number) =>
  Effect.acquireRelease(
    Effect.promise(
      () =>
        new Promise<{ url: string; cut: () => number; connections: () => number; close: () => void }>((resolve) => {
          const open = new Set<Socket>()
          let accepted = 0
          const server = createServer((client) => {
            accepted++
            const upstream = createConnection(port)
            open.add(client)
            client.pipe(upstream).pipe(client)
            // Either side gone: both are (the server must see a cut client leave, or its stream stays open).
            const end = () => {
              open.delete(client)
              client.destroy()
              upstream.destroy()
            }
            for (const socket of [client, upstream]) socket.on("error", end).on("close", end)
          })
          server.listen(0, "127.0.0.1", () => {
            const address = server.address()
            const bound = typeof address === "object" && address !== null ? address.port : 0
            resolve({
              url: `http://127.0.0.1:${bound}`,
              cut: () => {
                const n = open.size
                for (const socket of open) socket.destroy()
                return n
              },
              connections: () => accepted,
              close: () => {
                for (const socket of open) socket.destroy()
                server.close()
              }
            })
          })
        })
    ),
    (proxy) => Effect.sync(proxy.close)
  )

const inBrowser = <A>(use: (browser: Awaited<ReturnType<typeof launchBrowser>>) => Promise<A>) =>
  Effect.acquireUseRelease(
    Effect.promise(() => launchBrowser()),
    // A failure is printed at once: what follows (stopping the server) takes a while.
    (browser) =>
      Effect.promise(() =>
        use(browser).catch((error: unknown) => {
          console.error("browser steps failed:", error)
          throw error
        })
      ),
    (browser) => Effect.promise(() => browser.close())
  )

layer(Layer.empty, { timeout: "240 seconds", excludeTestServices: true })("the console in Chromium", (it) => {
  it.scoped.skipIf(skipBrowser())(
    "operator link, fleet, live feed with containment and reconnection, webhooks, keyboard, narrow window",
    () =>
      Effect.gen(function* () {
        yield* ensureBuilt
        const upstream = yield* anthropicUpstream()
        const serve = yield* startServe({
          env: { ANTHROPIC_BASE_URL: upstream.url, SERVICE_ROLE_KEY, CANDOR_WEBHOOK_ALLOW_PRIVATE: "true" }
        })
        const proxy = yield* cuttableProxy(serve.port)
        const link = yield* poll(
          Effect.sync(
            () =>
              serve
                .output()
                .join("\n")
                .match(/open (http:\/\/\S+\/console\/#\/sign-in\/[\w-]+)/)?.[1]
          ),
          (found) => found !== undefined,
          "the printed sign-in link",
          10_000
        )
        const code = link!.split("/").at(-1)!
        const viaProxy = link!.replace(`127.0.0.1:${serve.port}`, proxy.url.replace("http://", ""))
        const { agentId, providerKey } = newAgent()
        const send = sendThroughGateway(serve.gatewayUrl, providerKey)
        const contain = (action: "pause" | "resume") =>
          asOperator(`${serve.apiUrl}/v1/agents/${agentId}/${action}`, { method: "POST", body: "{}" })
        const userToken = (yield* runCandor(["token", "--sub", "console-user", "--email", "user@example.test"], {
          CANDOR_DATA_DIR: serve.dataDir
        })).stdout.trim()

        yield* Effect.gen(function* () {
          yield* inBrowser(async (browser) => {
            browser.context.setDefaultTimeout(20_000)
            const page = await browser.page(1280, 800)
            const requests: Array<string> = []
            page.on("request", (request) => requests.push(request.url()))

            // Signed in by the link; the code leaves the address bar.
            await page.goto(viaProxy)
            await page.getByRole("heading", { name: "Fleet" }).waitFor()
            expect(await page.getByTestId("caller").innerText()).toBe("Local operator")
            expect(page.url()).not.toContain(code)

            // An agent appears after its first request through the gateway.
            expect((await Effect.runPromise(send)).status).toBe(200)
            const row = page.locator(`tr[data-agent="${agentId}"]`)
            await row.waitFor({ timeout: 20_000 })
            expect(await row.innerText()).toContain("active")
            await shot(page, "fleet-light")

            // The live feed: a pause through the API arrives as agent.paused; the gateway refuses the agent.
            await page.getByRole("link", { name: "Live feed" }).click()
            await page.getByTestId("feed-state").filter({ hasText: "Live" }).waitFor()
            expect((await Effect.runPromise(contain("pause"))).status).toBe(200)
            await page.locator(`[data-type="agent.paused"]`).first().waitFor()
            const refused = await Effect.runPromise(send)
            expect(refused.status).toBe(403)
            expect(refused.body.containment_error.reason).toBe("agent_paused")

            // The refused request is in the feed too.
            await page.locator(`[data-type="enforcement.blocked"]`).first().waitFor()

            // Cut the stream twice while containment changes; every containment event is shown once.
            await page.getByPlaceholder("agent id").fill(agentId)
            for (const kind of ["Verdicts", "Drift", "Blocked requests", "Policy violations", "Other"])
              await page.getByLabel(kind).uncheck()
            const streamsBefore = proxy.connections()
            let changes = 1
            for (let round = 0; round < 2; round++) {
              expect(proxy.cut()).toBeGreaterThan(0)
              for (const action of ["resume", "pause"] as const) {
                expect((await Effect.runPromise(contain(action))).status).toBe(200)
                changes++
              }
              await page.getByTestId("feed-state").filter({ hasText: "Live" }).waitFor()
            }
            await page.waitForFunction(
              (n) =>
                (globalThis as unknown as Dom).document.querySelector('[data-testid="feed-shown"]')?.textContent ===
                String(n),
              changes,
              { timeout: 20_000, polling: 100 }
            )
            expect(proxy.connections()).toBeGreaterThan(streamsBefore)
            const ids = await page
              .locator(".feed-row")
              .evaluateAll((rows) => rows.map((r) => r.getAttribute("data-event-id")))
            expect(new Set(ids).size).toBe(changes)
            await shot(page, "feed-light")
            await page.getByRole("button", { name: "Switch to the dark theme" }).click()
            await shot(page, "feed-dark")
            await page.getByRole("link", { name: "Fleet" }).click()
            await row.waitFor()
            expect(await row.innerText()).toContain("paused")
            await shot(page, "fleet-dark")
            await page.getByRole("button", { name: "Switch to the light theme" }).click()

            // Webhooks of the agent: created, its secret shown once.
            await page.getByRole("link", { name: "Webhooks" }).click()
            await page.getByPlaceholder("agent id").fill(agentId)
            await page.getByRole("button", { name: "Show" }).click()
            await page.getByLabel("URL (https, public address)").fill("http://127.0.0.1:9/hook")
            await page.getByRole("button", { name: "Create endpoint" }).click()
            expect(await page.getByTestId("secret-value").innerText()).toMatch(/^whsec_/)
            await page.locator("[data-endpoint]").first().waitFor()
            await shot(page, "webhooks")
            await page.getByRole("button", { name: "I have stored it" }).click()
            expect(await page.getByTestId("secret-value").count()).toBe(0)

            // Nothing but the console's own origin was asked for.
            expect(requests.filter((url) => !url.startsWith(proxy.url))).toEqual([])

            // The link works once.
            const again = await browser.page(1280, 800)
            await again.goto(viaProxy)
            await again.getByRole("alert").filter({ hasText: "already used or has expired" }).waitFor()

            // A token signs a user in (a user sees only claimed agents: none here).
            await again.getByLabel("Token or API key").fill(userToken)
            await again.getByRole("button", { name: "Sign in" }).click()
            expect(await again.getByTestId("caller").innerText()).toBe("user@example.test")
            await again.getByText("No agents yet").waitFor()

            // Keyboard: the skip link comes first and is visible when focused; the nav works by keyboard.
            await again.reload()
            await again.getByRole("heading", { name: "Fleet" }).waitFor()
            await again.keyboard.press("Tab")
            const skip = await again.evaluate(() => {
              const page = globalThis as unknown as Dom
              const active = page.document.activeElement
              return {
                text: active?.textContent,
                outline: page.getComputedStyle(active).outlineStyle,
                left: active?.getBoundingClientRect().left
              }
            })
            expect(skip).toMatchObject({ text: "Skip to content", outline: "solid" })
            expect(skip.left).toBeGreaterThanOrEqual(0)
            await again.keyboard.press("Enter")
            expect(await again.evaluate(() => (globalThis as unknown as Dom).document.activeElement?.id)).toBe("main")
            await again.locator("nav a", { hasText: "Fleet" }).focus()
            await again.keyboard.press("Tab")
            await again.keyboard.press("Enter")
            await again.getByRole("heading", { name: "Live feed" }).waitFor()

            // The service-role key is refused, the page says why, and the tab keeps nothing (it must never
            // reach a browser).
            const narrow = await browser.page(390, 844)
            await narrow.goto(viaProxy.replace(/#.*/, "#/fleet"))
            await narrow.getByLabel("Token or API key").fill(SERVICE_ROLE_KEY)
            await narrow.getByRole("button", { name: "Sign in" }).click()
            const why = await narrow.getByRole("alert").innerText()
            expect(why).toContain("service-role key")
            expect(why).toContain("must never reach")
            const kept = () => narrow.evaluate(() => (globalThis as any).sessionStorage.getItem("candor.credential"))
            expect(await kept()).toBeNull()
            expect(await narrow.getByText("The service-role key is not accepted").count()).toBe(1)

            // A narrow window: no horizontal scrolling of the page (signed in with the operator's session).
            const operatorSession = await page.evaluate(() =>
              (globalThis as any).sessionStorage.getItem("candor.credential")
            )
            expect(operatorSession).toMatch(/^cos_/)
            await narrow.getByLabel("Token or API key").fill(operatorSession!)
            await narrow.getByRole("button", { name: "Sign in" }).click()
            // Sign-in checks the credential with the API before keeping it: the fleet shows once it has.
            await narrow.locator(`tr[data-agent="${agentId}"]`).waitFor()
            expect(await kept()).toBe(operatorSession)
            expect(
              await narrow.evaluate(() => (globalThis as unknown as Dom).document.documentElement.scrollWidth)
            ).toBeLessThanOrEqual(390)
            await shot(narrow, "fleet-390")
            await narrow.getByRole("link", { name: "Live feed" }).click()
            await narrow.getByTestId("feed-state").filter({ hasText: "Live" }).waitFor()
            expect(
              await narrow.evaluate(() => (globalThis as unknown as Dom).document.documentElement.scrollWidth)
            ).toBeLessThanOrEqual(390)
            await shot(narrow, "feed-390")
          })
        }).pipe(printLogsOnFailure(serve))
      }),
    { timeout: 240_000 }
  )
})
