/**
 * Every badge variant, agent and team, light and dark, in Chromium: parsed as XML by the browser's
 * DOMParser, loaded as an <img> from a loopback server (as README renderers embed them) and inlined
 * as SVG, then photographed (test-artifacts/badges).
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import {
  AGENT_BADGE_VARIANTS,
  agentBadge,
  agentBadgeText,
  BADGE_CACHE_CONTROL,
  BADGE_CONTENT_TYPE,
  BADGE_STYLES,
  type BadgeState,
  type BadgeStyle,
  TEAM_BADGE_VARIANTS,
  teamBadge,
  teamBadgeText
} from "../../core/Badge.js"
import { escapeHtml } from "../../adapters/http/ReputationPage.js"
import { artifactPath, type Browser, type Dom, launchBrowser, skipBrowser } from "../support/Browser.js"
import { type FixedResponse, type LoopbackServer, serveLoopback } from "../support/LoopbackServer.js"

const AGENT_STATES: ReadonlyArray<readonly [string, BadgeState]> = [
  ["rated", { kind: "rated", score: 782, grade: "A", tier: "Reliable", trend_30d: 14 }],
  ["falling", { kind: "rated", score: 356, grade: "CCC", tier: "Critical", trend_30d: -42 }],
  ["building", { kind: "building", analysed: 23, needed: 50 }],
  ["not_rated", { kind: "not_rated" }]
]
const TEAM_STATES: ReadonlyArray<readonly [string, BadgeState]> = [
  ["rated", { kind: "rated", score: 812, grade: "AA", tier: "Established", trend_30d: 3 }],
  ["exemplary", { kind: "rated", score: 951, grade: "AAA", tier: "Exemplary", trend_30d: 10 }],
  ["building", { kind: "building", analysed: 4, needed: 10 }],
  ["not_rated", { kind: "not_rated" }]
]

interface Drawn {
  readonly id: string
  readonly svg: string
  readonly title: string
  readonly style: BadgeStyle
}

const drawAll = (): ReadonlyArray<Drawn> =>
  BADGE_STYLES.flatMap((style) => [
    ...AGENT_STATES.flatMap(([name, state]) =>
      AGENT_BADGE_VARIANTS.map((variant) => {
        const id = `agent-${name}-${variant}-${style}`
        return {
          id,
          style,
          svg: agentBadge(state, variant, style, { idSuffix: id.replace(/[^A-Za-z0-9]/g, "") }),
          title: agentBadgeText(state, variant).accessible
        }
      })
    ),
    ...TEAM_STATES.flatMap(([name, state]) =>
      TEAM_BADGE_VARIANTS.map((variant) => {
        const id = `team-${name}-${variant}-${style}`
        return {
          id,
          style,
          svg: teamBadge(state, variant, style, { idSuffix: id.replace(/[^A-Za-z0-9]/g, "") }),
          title: teamBadgeText(state, variant).accessible
        }
      })
    )
  ])

const gallery = (badges: ReadonlyArray<Drawn>, style: BadgeStyle): string =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>badges ${style}</title><style>` +
  `body{margin:16px;font:13px sans-serif;background:${style === "dark" ? "#0d1117;color:#e6edf3" : "#fff;color:#1f2328"}}` +
  `table{border-collapse:collapse}td{padding:4px 10px}</style></head><body><table>` +
  badges
    .filter((b) => b.style === style)
    .map(
      (b) =>
        `<tr><td>${escapeHtml(b.id)}</td><td><img data-id="${b.id}" src="/badge/${b.id}.svg" alt="${escapeHtml(b.title)}"></td>` +
        `<td data-inline="${b.id}">${b.svg}</td></tr>`
    )
    .join("") +
  `</table></body></html>`

describe.skipIf(skipBrowser())("badges in Chromium", () => {
  const badges = drawAll()
  let browser: Browser
  let server: LoopbackServer

  beforeAll(async () => {
    server = await serveLoopback(() => {
      const routes = new Map<string, FixedResponse>()
      for (const b of badges) {
        routes.set(`/badge/${b.id}.svg`, {
          status: 200,
          headers: { "content-type": BADGE_CONTENT_TYPE, "cache-control": BADGE_CACHE_CONTROL },
          body: b.svg
        })
      }
      for (const style of BADGE_STYLES) {
        routes.set(`/gallery/${style}`, {
          status: 200,
          headers: { "content-type": "text/html; charset=utf-8" },
          body: gallery(badges, style)
        })
      }
      return routes
    })
    browser = await launchBrowser()
  }, 30_000)

  afterAll(async () => {
    await browser?.close()
    await server?.close()
  })

  it("draws every variant of both badges in both styles", () => {
    expect(badges).toHaveLength(2 * (4 * AGENT_BADGE_VARIANTS.length + 4 * TEAM_BADGE_VARIANTS.length))
  })

  it("every SVG is well-formed XML for the browser's parser, an <svg> with its <title> and aria-label", async () => {
    const page = await browser.page(800, 600)
    try {
      const parsed = await page.evaluate(
        (svgs) =>
          svgs.map((svg) => {
            const doc = new (globalThis as unknown as Dom).DOMParser().parseFromString(svg, "image/svg+xml")
            return {
              error: doc.querySelector("parsererror")?.textContent ?? null,
              root: doc.documentElement.localName,
              namespace: doc.documentElement.namespaceURI,
              title: doc.documentElement.querySelector(":scope > title")?.textContent ?? null,
              aria: doc.documentElement.getAttribute("aria-label"),
              role: doc.documentElement.getAttribute("role")
            }
          }),
        badges.map((b) => b.svg)
      )
      parsed.forEach((result, i) => {
        const badge = badges[i]!
        expect(result, badge.id).toEqual({
          error: null,
          root: "svg",
          namespace: "http://www.w3.org/2000/svg",
          title: badge.title,
          aria: badge.title,
          role: "img"
        })
      })
      // the parser does report broken XML (so the check above can fail)
      const broken = await page.evaluate(
        (svg) =>
          new (globalThis as unknown as Dom).DOMParser()
            .parseFromString(svg, "image/svg+xml")
            .querySelector("parsererror") !== null,
        badges[0]!.svg.replace("</title>", "")
      )
      expect(broken).toBe(true)
    } finally {
      await page.close()
    }
  })

  for (const style of BADGE_STYLES) {
    it(`loads every ${style} badge as an <img> and inline, with its title, and screenshots them`, async () => {
      const page = await browser.page(1280, 800)
      const requests: Array<string> = []
      page.on("request", (request) => requests.push(request.url()))
      try {
        await page.emulateMedia({ colorScheme: style })
        await page.goto(`${server.origin}/gallery/${style}`, { waitUntil: "load" })
        const images = await page.evaluate(() =>
          [...(globalThis as unknown as Dom).document.images].map((img: any) => ({
            id: img.dataset.id,
            complete: img.complete,
            width: img.naturalWidth
          }))
        )
        const mine = badges.filter((b) => b.style === style)
        expect(images.map((i) => i.id)).toEqual(mine.map((b) => b.id))
        for (const image of images) {
          expect(image.complete, image.id).toBe(true)
          expect(image.width, image.id).toBeGreaterThan(0)
        }
        const inline = await page.evaluate(() =>
          [...(globalThis as unknown as Dom).document.querySelectorAll("td[data-inline] > svg")].map((svg: any) => ({
            id: svg.parentElement.dataset.inline,
            title: svg.querySelector(":scope > title")?.textContent ?? null,
            width: svg.getBoundingClientRect().width
          }))
        )
        expect(inline).toHaveLength(mine.length)
        inline.forEach((drawn, i) => {
          expect(drawn.title, drawn.id).toBe(mine[i]!.title)
          expect(drawn.width, drawn.id).toBeGreaterThan(0)
        })
        expect(requests.every((url) => url.startsWith(`${server.origin}/`))).toBe(true)
        const png = await page.screenshot({ path: artifactPath("badges", `gallery-${style}`), fullPage: true })
        expect(png.subarray(1, 4).toString("latin1")).toBe("PNG")
      } finally {
        await page.close()
      }
    })
  }
})
