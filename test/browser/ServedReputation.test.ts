/**
 * The page and the badges as Candor serves them (the real API on PGlite, a scored agent), in
 * Chromium: the score and grade read from the page's DOM match GET /v1/reputation/{id}, every badge
 * variant loads as an image with its <title>, and screenshots are kept in test-artifacts/served/.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { AGENT_BADGE_VARIANTS, BADGE_STYLES } from "../../core/Badge.js"
import { seed } from "../api/AgentData.js"
import { ApiHarness, layer as harness } from "../api/Support.js"
import { artifactPath, type Dom, launchBrowser, skipBrowser } from "../support/Browser.js"

const inBrowser = <A>(use: (browser: Awaited<ReturnType<typeof launchBrowser>>) => Promise<A>) =>
  Effect.acquireUseRelease(
    Effect.promise(() => launchBrowser()),
    (browser) => Effect.promise(() => use(browser)),
    (browser) => Effect.promise(() => browser.close())
  )

layer(harness(), { timeout: "120 seconds" })("served reputation in Chromium", (it) => {
  it.effect.skipIf(skipBrowser())("the page shows the API's score and grade; every badge variant renders", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const agentId = yield* api.claimAgent({ userId: api.fixtures.userA.userId })
      yield* Effect.orDie(seed(agentId, 60))
      const published = (yield* api.call("GET", `/v1/reputation/${agentId}`)).body
      expect(published.is_eligible).toBe(true)

      const seen = yield* inBrowser(async (browser) => {
        const page = await browser.page(1280, 800)
        const requests: Array<string> = []
        page.on("request", (request) => requests.push(request.url()))
        const response = await page.goto(`${api.url}/agents/${agentId}/reputation`, { waitUntil: "load" })
        const score = await page.getByTestId("score").first().innerText()
        const grade = await page.getByTestId("grade").first().innerText()
        await page.screenshot({ path: artifactPath("served", "page-1280.png"), fullPage: true })

        const badges = AGENT_BADGE_VARIANTS.flatMap((variant) =>
          BADGE_STYLES.map((style) => `${api.url}/v1/reputation/${agentId}/badge.svg?variant=${variant}&style=${style}`)
        )
        const gallery = await browser.page(900, 400)
        await gallery.setContent(badges.map((src) => `<p><img alt="" src="${src}"></p>`).join(""))
        await gallery.waitForFunction(() =>
          Array.from((globalThis as unknown as Dom).document.images as ArrayLike<{ complete: boolean }>).every(
            (img) => img.complete
          )
        )
        const widths = await gallery.evaluate(() =>
          Array.from((globalThis as unknown as Dom).document.images as ArrayLike<{ naturalWidth: number }>).map(
            (img) => img.naturalWidth
          )
        )
        await gallery.screenshot({ path: artifactPath("served", "badges.png"), fullPage: true })
        const titles: Array<string> = []
        for (const src of badges) {
          const svg = await (await fetch(src)).text()
          titles.push(svg.match(/<title>([^<]*)<\/title>/)?.[1] ?? "")
        }
        return { status: response?.status(), score, grade, widths, titles, requests }
      })

      expect(seen.status).toBe(200)
      expect(seen.score).toContain(String(published.score))
      expect(seen.grade).toContain(published.grade)
      expect(seen.widths.every((width) => width > 0)).toBe(true)
      for (const title of seen.titles) expect(title).toContain(String(published.score))
      // The page loads nothing but itself (no script, font or image from anywhere).
      expect(seen.requests.filter((url) => !url.startsWith("data:"))).toEqual([
        `${api.url}/agents/${agentId}/reputation`
      ])
    })
  )
})
