/**
 * The public reputation page in Chromium: served as the route would send it (status, headers with
 * the CSP) from a loopback server, read back from the DOM, checked for requests to other origins,
 * CSP violations and colour contrast, and photographed at 1280×800 and 375×800 in light and dark.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import type { Page } from "playwright-core"
import { type HtmlResponse, reputationPageResponse } from "../../adapters/http/ReputationPage.js"
import { PROTOCOL_DISCLAIMER } from "../../core/schema/Disclaimer.js"
import { artifactPath, type Browser, type Dom, launchBrowser, skipBrowser } from "../support/Browser.js"
import { contrast, parseColor } from "../support/Contrast.js"
import { type FixedResponse, type LoopbackServer, serveLoopback } from "../support/LoopbackServer.js"
import { buildingAgent, pageInputs, ratedAgent, TAMPERED_ID, tamperedAgent } from "../support/ReputationFixtures.js"

const asFixed = (response: HtmlResponse): FixedResponse => response

describe.skipIf(skipBrowser())("reputation page in Chromium", () => {
  let browser: Browser
  let server: LoopbackServer

  beforeAll(async () => {
    server = await serveLoopback((origin) => {
      const inputs = pageInputs(origin)
      return new Map([
        ["/page/rated", asFixed(reputationPageResponse(ratedAgent.agent_id, inputs.rated))],
        ["/page/building", asFixed(reputationPageResponse(buildingAgent.agent_id, inputs.building))],
        ["/page/tampered", asFixed(reputationPageResponse(TAMPERED_ID, inputs.tampered))],
        ["/page/unknown", asFixed(reputationPageResponse(TAMPERED_ID, null))]
      ])
    })
    browser = await launchBrowser()
  }, 30_000)

  afterAll(async () => {
    await browser?.close()
    await server?.close()
  })

  /** Opens `path`, recording every request and every console error (CSP violations are reported there). */
  const open = async (path: string, width = 1280, height = 800, colorScheme: "light" | "dark" = "light") => {
    const page = await browser.page(width, height)
    const requests: Array<string> = []
    const errors: Array<string> = []
    page.on("request", (request) => requests.push(request.url()))
    page.on("console", (message) => {
      if (message.type() === "error") errors.push(message.text())
    })
    page.on("pageerror", (error) => errors.push(error.message))
    await page.emulateMedia({ colorScheme })
    const response = await page.goto(`${server.origin}${path}`, { waitUntil: "load" })
    return { page, status: response?.status(), requests, errors }
  }

  const foreign = (requests: ReadonlyArray<string>) =>
    requests.filter((url) => !url.startsWith(`${server.origin}/`) && !url.startsWith("data:"))

  const text = (page: Page, testId: string) => page.getByTestId(testId).first().innerText()

  it("shows the score, grade, chart and components from the DOM, and loads nothing from elsewhere", async () => {
    const { page, status, requests, errors } = await open("/page/rated")
    try {
      expect(status).toBe(200)
      expect(await text(page, "score")).toBe(String(ratedAgent.score))
      expect(await text(page, "grade")).toBe(ratedAgent.grade)
      expect(await text(page, "tier")).toBe(ratedAgent.tier)
      expect(await page.getByTestId("trend-chart").getAttribute("data-points")).toBe("90")
      expect(await page.locator("[data-testid=trend-chart] polyline").count()).toBe(1)
      expect(await page.getByRole("img", { name: "Score over the last 90 days" }).count()).toBe(1)
      expect(await page.getByTestId("component").count()).toBe(5)
      expect(await text(page, "verification-status")).toContain("Verified")
      expect(await text(page, "disclaimer")).toBe(PROTOCOL_DISCLAIMER)
      // the badge is a data: image that decoded
      expect(await page.getByTestId("badge").evaluate((img: any) => img.naturalWidth)).toBeGreaterThan(0)
      // the hashed stylesheet applied (a CSP refusal would leave the browser's 16px default)
      expect(
        await page.getByTestId("score").evaluate((el) => (globalThis as unknown as Dom).getComputedStyle(el).fontSize)
      ).toBe("56px")
      expect(await page.evaluate(() => (globalThis as unknown as Dom).document.scripts.length)).toBe(0)
      expect(foreign(requests)).toEqual([])
      expect(requests).toEqual([`${server.origin}/page/rated`])
      expect(errors).toEqual([])
    } finally {
      await page.close()
    }
  })

  it("keeps the score and grade in the first screen at 1280×800 and fits 375 wide without scrolling sideways", async () => {
    for (const [width, path] of [
      [1280, "/page/rated"],
      [375, "/page/rated"],
      [375, "/page/tampered"]
    ] as const) {
      const { page } = await open(path, width, 800)
      try {
        for (const id of ["score", "grade"]) {
          const box = await page.getByTestId(id).boundingBox()
          expect(box, `${id} at ${width}`).not.toBeNull()
          expect(box!.y + box!.height, `${id} at ${width}`).toBeLessThanOrEqual(800)
          expect(box!.x + box!.width, `${id} at ${width}`).toBeLessThanOrEqual(width)
        }
        expect(
          await page.evaluate(() => (globalThis as unknown as Dom).document.documentElement.scrollWidth),
          `${path} at ${width}`
        ).toBeLessThanOrEqual(width)
      } finally {
        await page.close()
      }
    }
  })

  it("follows prefers-color-scheme, with text contrast of 4.5:1 or more in both", async () => {
    const backgrounds: Array<string> = []
    for (const scheme of ["light", "dark"] as const) {
      const { page } = await open("/page/rated", 1280, 800, scheme)
      try {
        const colours = await page.evaluate(() => {
          const { document, getComputedStyle } = globalThis as unknown as Dom
          const style = (selector: string) => getComputedStyle(document.querySelector(selector)!)
          return {
            bodyFg: style("body").color,
            bodyBg: style("body").backgroundColor,
            muted: style(".muted, dl.facts dt").color,
            gradeFg: style("[data-testid=grade]").color,
            gradeBg: style("[data-testid=grade]").backgroundColor,
            preBg: style("pre").backgroundColor,
            status: style("[data-testid=verification-status]").color
          }
        })
        backgrounds.push(colours.bodyBg)
        const c = (fg: string, bg: string) => contrast(parseColor(fg), parseColor(bg))
        expect(c(colours.bodyFg, colours.bodyBg), scheme).toBeGreaterThanOrEqual(4.5)
        expect(c(colours.muted, colours.bodyBg), scheme).toBeGreaterThanOrEqual(4.5)
        expect(c(colours.bodyFg, colours.preBg), scheme).toBeGreaterThanOrEqual(4.5)
        expect(c(colours.gradeFg, colours.gradeBg), scheme).toBeGreaterThanOrEqual(4.5)
        expect(c(colours.status, colours.bodyBg), scheme).toBeGreaterThanOrEqual(4.5)
      } finally {
        await page.close()
      }
    }
    expect(backgrounds[0]).not.toBe(backgrounds[1])
  })

  it("renders a tampered agent's markup as text: no script runs, no element is injected", async () => {
    const { page, requests, errors } = await open("/page/tampered")
    try {
      const dialogs: Array<string> = []
      page.on("dialog", (dialog) => {
        dialogs.push(dialog.message())
        void dialog.dismiss()
      })
      expect(await text(page, "agent-id")).toBe(TAMPERED_ID)
      expect(await text(page, "tier")).toBe(tamperedAgent.tier)
      expect(await page.getByTestId("signed-tree-head").textContent()).toBe(tamperedAgent.computed_over.checkpoint)
      expect(
        await page.evaluate(
          () =>
            (globalThis as unknown as Dom).document.querySelectorAll("script, b, main img:not([data-testid=badge])")
              .length
        )
      ).toBe(0)
      expect(await text(page, "verification-status")).toContain("Verification failed")
      expect(dialogs).toEqual([])
      expect(foreign(requests)).toEqual([])
      expect(errors).toEqual([])
    } finally {
      await page.close()
    }
  })

  it("answers unknown ids with the 404 page, the id escaped", async () => {
    const { page, status } = await open("/page/unknown")
    try {
      expect(status).toBe(404)
      expect(await text(page, "agent-id")).toBe(TAMPERED_ID)
      expect(await page.evaluate(() => (globalThis as unknown as Dom).document.scripts.length)).toBe(0)
    } finally {
      await page.close()
    }
  })

  it("takes screenshots at 1280×800 and 375×800, light and dark (test-artifacts/reputation-page)", async () => {
    for (const name of ["rated", "building", "tampered", "unknown"]) {
      for (const [width, height] of [
        [1280, 800],
        [375, 800]
      ] as const) {
        for (const scheme of ["light", "dark"] as const) {
          const { page } = await open(`/page/${name}`, width, height, scheme)
          try {
            const path = artifactPath("reputation-page", `${name}-${width}x${height}-${scheme}`)
            const png = await page.screenshot({ path, fullPage: true })
            expect(png.subarray(1, 4).toString("latin1")).toBe("PNG")
          } finally {
            await page.close()
          }
        }
      }
    }
  }, 60_000)
})
