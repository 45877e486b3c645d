import { describe, expect, it } from "@effect/vitest"
import { createHash } from "node:crypto"
import {
  dailyHistory,
  renderNotFoundPage,
  renderReputationPage,
  REPUTATION_PAGE_CSP,
  reputationPageResponse,
  shellQuote
} from "../../../adapters/http/ReputationPage.js"
import { PROTOCOL_DISCLAIMER } from "../../../core/schema/Disclaimer.js"
import type { ReputationHistoryItem } from "../../../core/schema/Reputation.js"
import { COMPUTED_AT, pageInputs, ratedAgent, TAMPERED_ID } from "../../support/ReputationFixtures.js"

const inputs = pageInputs("https://candor.example")

/** The text content of the element carrying data-testid="<id>" (first one), markup stripped. */
const testId = (html: string, id: string): string | undefined => {
  const match = new RegExp(`data-testid="${id}"[^>]*>([\\s\\S]*?)</`).exec(html)
  return match?.[1]
}

describe("renderReputationPage", () => {
  const html = renderReputationPage(inputs.rated)

  it("is one complete document with the score and grade where tests and scrapers find them", () => {
    expect(html.startsWith('<!doctype html><html lang="en">')).toBe(true)
    expect(html.endsWith("</html>")).toBe(true)
    expect(testId(html, "score")).toBe(String(ratedAgent.score))
    expect(testId(html, "grade")).toBe(ratedAgent.grade)
    expect(html).toContain(`data-score="${ratedAgent.score}"`)
  })

  it("lists the five components with their weights and weighted scores, summing to the score", () => {
    const rows = [...html.matchAll(/data-testid="component" data-key="([a-z_]+)"/g)].map((m) => m[1])
    expect(rows).toEqual([
      "integrity_ratio",
      "compliance",
      "drift_stability",
      "trace_completeness",
      "coherence_compatibility"
    ])
    for (const c of ratedAgent.components) expect(html).toContain(`${Number((c.weight * 100).toFixed(2))}%`)
    const weighted = [...html.matchAll(/data-testid="weighted">([\d.]+)</g)].map((m) => Number(m[1]))
    expect(Math.round(weighted.reduce((a, b) => a + b, 0))).toBe(ratedAgent.score)
  })

  it("shows confidence, computed_at, the tree size, root and signed tree head it was computed over", () => {
    expect(testId(html, "confidence")).toBe(ratedAgent.confidence)
    expect(testId(html, "computed-at")).toBe("2026-03-31 12:00 UTC")
    expect(testId(html, "tree-size")).toBe(String(ratedAgent.computed_over.tree_size))
    expect(testId(html, "root")).toBe(ratedAgent.computed_over.root)
    expect(testId(html, "signed-tree-head")).toBe(ratedAgent.computed_over.checkpoint)
  })

  it("shows the protocol disclaimer, verbatim, with the verification (issue 26)", () => {
    expect(testId(html, "disclaimer")).toBe(PROTOCOL_DISCLAIMER)
    for (const input of [inputs.building, inputs.tampered])
      expect(renderReputationPage(input)).toContain(PROTOCOL_DISCLAIMER)
  })

  it("says how to verify, with the API base", () => {
    expect(testId(html, "verify-commands")).toContain(
      "npx candor reputation verify agent-rated-7 --url https://candor.example"
    )
    expect(testId(html, "verify-commands")).toContain("npx candor verify certificate.json --keys-url")
    expect(html).toContain('data-valid="true"')
    expect(renderReputationPage(inputs.building)).toContain('data-valid="unknown"')
    expect(renderReputationPage(inputs.tampered)).toMatch(
      /data-valid="false">✗ Verification failed: the certificate chain is broken\./
    )
  })

  it("draws the 90-day trend as an inline SVG with a title, a description and a table fallback", () => {
    expect(html).toMatch(
      /<svg class="chart" data-testid="trend-chart"[^>]*role="img" aria-labelledby="chart-title chart-desc" data-points="90">/
    )
    expect(html).toContain("<polyline")
    expect(html).toContain("Score (0–1000)")
    expect((html.match(/<tr><td>\d{4}-\d{2}-\d{2}<\/td>/g) ?? []).length).toBe(90)
    const empty = renderReputationPage({ ...inputs.rated, history: [] })
    expect(empty).toContain("No history in the last 90 days")
    expect(empty).not.toContain("<polyline")
  })

  it("loads nothing: no script, no external URL, images only as data: URIs", () => {
    for (const page of [html, renderReputationPage(inputs.building), renderNotFoundPage("x")]) {
      expect(page).not.toMatch(/<script/i)
      expect(page).not.toMatch(/<link rel="stylesheet"/)
      for (const [, src] of page.matchAll(/\ssrc="([^"]*)"/g)) expect(src).toMatch(/^data:image\/svg\+xml;base64,/)
      expect(page).not.toMatch(/url\(/)
    }
  })

  it("marks a building agent as not rated yet, with its count", () => {
    const building = renderReputationPage(inputs.building)
    expect(testId(building, "grade")).toBe("NR")
    expect(testId(building, "building")).toContain("23 of 50 analysed checkpoints")
  })
})

describe("escaping", () => {
  const html = renderReputationPage(inputs.tampered)

  it("renders markup in the id, tier, labels, inputs and tree head as text", () => {
    expect(html).not.toMatch(/<script/i)
    expect(html).not.toMatch(/<img\/src/i)
    expect(html).not.toContain("<b>bold</b>")
    expect(html).toContain("&lt;script&gt;alert(&quot;id&quot;)&lt;/script&gt;")
    expect(html).toContain("&lt;/pre&gt;&lt;script&gt;alert(&quot;sth&quot;)")
    expect(html).toContain("&amp;amp;")
    expect(renderNotFoundPage(TAMPERED_ID)).not.toMatch(/<script/i)
  })

  it("quotes the id in the shell command it prints", () => {
    expect(shellQuote("agent-1")).toBe("agent-1")
    expect(shellQuote("$(rm -rf ~)")).toBe("'$(rm -rf ~)'")
    expect(shellQuote("it's")).toBe(`'it'"'"'s'`)
    expect(testId(html, "verify-commands")).toContain("npx candor reputation verify &#39;&lt;script&gt;")
  })
})

describe("Content-Security-Policy", () => {
  it("allows exactly the page's stylesheet (by hash) and data: images, nothing else", () => {
    const html = renderReputationPage(inputs.rated)
    const css = /<style>([\s\S]*)<\/style>/.exec(html)?.[1] ?? ""
    const hash = createHash("sha256").update(css, "utf8").digest("base64")
    expect(REPUTATION_PAGE_CSP).toBe(
      `default-src 'none'; style-src 'sha256-${hash}'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`
    )
    // the same policy in a <meta> (attribute-escaped), minus frame-ancestors, which a <meta> cannot carry
    expect(html).toContain(
      `<meta http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;; style-src &#39;sha256-${hash}&#39;; img-src data:; base-uri &#39;none&#39;; form-action &#39;none&#39;">`
    )
    // a style attribute would need 'unsafe-inline'
    expect(html).not.toMatch(/\sstyle="/)
  })
})

describe("reputationPageResponse", () => {
  it("answers 200 with the page, the CSP and an hour of caching", () => {
    const response = reputationPageResponse("agent-rated-7", inputs.rated)
    expect(response.status).toBe(200)
    expect(response.headers).toMatchObject({
      "content-type": "text/html; charset=utf-8",
      "content-security-policy": REPUTATION_PAGE_CSP,
      "cache-control": "public, max-age=3600",
      "x-content-type-options": "nosniff"
    })
  })

  it("answers the same 404 for an unknown id and a private agent", () => {
    const unknown = reputationPageResponse("agent-rated-7", null)
    const hidden = reputationPageResponse("agent-rated-7", {
      ...inputs.rated,
      reputation: { ...ratedAgent, visibility: "private" }
    })
    expect(unknown.status).toBe(404)
    expect(hidden).toEqual(unknown)
    expect(hidden.body).not.toContain(String(ratedAgent.score))
    expect(renderReputationPage({ ...inputs.rated, reputation: { ...ratedAgent, visibility: "private" } })).toBe(
      unknown.body
    )
  })
})

describe("dailyHistory", () => {
  const item = (computed_at: string, score: number): ReputationHistoryItem => ({
    score,
    grade: "A",
    confidence: "medium",
    checkpoint_count: 100,
    tree_size: 100,
    kind: "recomputation",
    computed_at
  })
  const end = Date.parse(COMPUTED_AT)

  it("keeps each UTC day's newest record inside the 90 days, oldest first", () => {
    const days = dailyHistory(
      [
        item("2026-03-30T23:00:00Z", 710),
        item("2026-03-30T01:00:00Z", 700),
        item("2025-12-31T11:59:59Z", 500),
        item("2026-04-01T00:00:00Z", 999),
        item("2026-01-01T12:00:00Z", 600),
        item("not a date", 1)
      ],
      end
    )
    expect(days.map((d) => d.score)).toEqual([600, 710])
  })
})
