/**
 * The public reputation page of an agent: one self-contained HTML document rendered on the server
 * from what the reputation routes read (the AgentReputation, 90 days of history, the chain and
 * tree-head verification). No script, no external asset, nothing that needs a network: the CSS
 * is inline (allowed by its hash in REPUTATION_PAGE_CSP), the 90-day trend is an inline SVG with a
 * table beside it for screen readers, the badge is a data: URI. Every string that comes from the
 * data is escaped, because an agent id is any 1–256 characters without whitespace
 * (`<script>…</script>` is a valid one).
 *
 * Wiring: `reputationPageResponse(agentId, input | null)` answers status, headers and body; null
 * (unknown id) and a private agent both give the same 404 page, so the page never says whether an
 * id exists (docs/reputation-badges.md).
 */
import { createHash } from "node:crypto"
import { agentBadge, agentBadgeState, BADGE_CACHE_CONTROL, BADGE_COLORS } from "../../core/Badge.js"
import { ELIGIBILITY_THRESHOLD } from "../../core/Reputation.js"
import { PROTOCOL_DISCLAIMER } from "../../core/schema/Disclaimer.js"
import type { AgentReputation, Grade, ReputationHistoryItem } from "../../core/schema/Reputation.js"

/** What the page shows of `GET /v1/reputation/{agent_id}/verify`; null when it could not be run. */
export interface PageVerification {
  readonly chain_valid: boolean
  readonly signed_tree_head_valid: boolean
  readonly tree_size: number
  readonly root: string | null
  readonly signed_tree_head: string | null
}

export interface ReputationPageInput {
  readonly reputation: AgentReputation
  /** The last 90 days of history, any order (the page keeps each day's newest record). */
  readonly history: ReadonlyArray<ReputationHistoryItem>
  readonly verification: PageVerification | null
  /** The API's public base URL (`https://candor.example.com`), for the commands and links the page prints. */
  readonly apiBase: string
}

// -- escaping ------------------------------------------------------------------------------------

/** Text and attribute values alike: the five characters HTML gives a meaning to. */
export const escapeHtml = (text: string): string =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;")

/** A POSIX shell word: as is when it is plainly safe, else single-quoted (an id may hold `$(…)` or `;`). */
export const shellQuote = (word: string): string =>
  /^[A-Za-z0-9._:@%+=,/-]+$/.test(word) ? word : `'${word.replace(/'/g, `'"'"'`)}'`

const trimBase = (apiBase: string): string => apiBase.replace(/\/+$/, "")

/** The public routes the page links to (the coordinator's routes serve them at these paths). */
export const reputationPaths = (agentId: string) => {
  const id = encodeURIComponent(agentId)
  return {
    reputation: `/v1/reputation/${id}`,
    history: `/v1/reputation/${id}/history`,
    verify: `/v1/reputation/${id}/verify`,
    badge: `/v1/reputation/${id}/badge.svg`,
    page: `/agents/${id}/reputation`,
    keys: "/v1/keys"
  }
}

// -- style ---------------------------------------------------------------------------------------

const gradeRules = (style: "light" | "dark"): string =>
  Object.entries(BADGE_COLORS[style])
    .map(([grade, color]) => `.grade-${grade}{background:${color}}`)
    .join("")

/** The whole stylesheet; its hash is in the CSP, so it must stay one constant string. */
export const REPUTATION_PAGE_CSS = [
  ":root{color-scheme:light dark;--bg:#ffffff;--fg:#1f2328;--muted:#57606a;--card:#f6f8fa;--border:#d0d7de;",
  "--line:#0969da;--grid:#d8dee4;--ok:#1a7f37;--bad:#b91c1c;--warn:#8a6a00}",
  "@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#9198a1;--card:#161b22;",
  "--border:#30363d;--line:#4493f8;--grid:#30363d;--ok:#3fb950;--bad:#f85149;--warn:#d29922}",
  `${gradeRules("dark")}}`,
  "*{box-sizing:border-box}",
  "body{margin:0;background:var(--bg);color:var(--fg);font:16px/1.5 system-ui,-apple-system,'Segoe UI',Roboto,",
  "'DejaVu Sans',sans-serif}",
  "header,main,footer{max-width:1100px;margin:0 auto;padding:0 20px}",
  "header{padding-top:20px;color:var(--muted);font-size:14px}",
  "h1{font-size:24px;margin:4px 0 16px;overflow-wrap:anywhere}h2{font-size:19px;margin:0 0 12px}",
  "code,pre{font:13px/1.45 ui-monospace,'DejaVu Sans Mono',Menlo,Consolas,monospace}",
  "code{overflow-wrap:anywhere}",
  "pre{background:var(--card);border:1px solid var(--border);border-radius:6px;padding:10px 12px;margin:8px 0;",
  "white-space:pre-wrap;overflow-wrap:anywhere}",
  "section{border:1px solid var(--border);border-radius:10px;padding:16px 18px;margin:0 0 18px}",
  ".hero{display:flex;flex-wrap:wrap;gap:20px 32px;align-items:center}",
  ".grade{display:inline-block;min-width:88px;padding:10px 14px;border-radius:10px;color:#fff;",
  "font-size:40px;font-weight:700;text-align:center;line-height:1.1}",
  `${gradeRules("light")}`,
  ".score{font-size:56px;font-weight:700;line-height:1}.out-of{font-size:20px;color:var(--muted)}",
  ".tier{font-size:20px;font-weight:600}.muted{color:var(--muted)}",
  "dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:4px 14px;margin:0}",
  "dl.facts dt{color:var(--muted)}dl.facts dd{margin:0;overflow-wrap:anywhere}",
  "table{border-collapse:collapse;width:100%}",
  "th,td{text-align:left;padding:6px 8px;border-bottom:1px solid var(--border);vertical-align:top}",
  "td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}",
  "tfoot td{font-weight:700;border-bottom:0}",
  ".inputs{display:block;color:var(--muted);font-size:13px;overflow-wrap:anywhere}",
  "figure{margin:0;overflow-x:auto}.chart{width:100%;min-width:600px;max-width:820px;height:auto;display:block}",
  ".chart .grid{stroke:var(--grid);stroke-width:1}.chart .axis{fill:var(--muted);font-size:14px}",
  ".chart .line{fill:none;stroke:var(--line);stroke-width:2.5}.chart .dot{fill:var(--line)}",
  ".chart .empty{fill:var(--muted);font-size:15px}",
  "details{margin-top:10px}summary{cursor:pointer}",
  ".status{font-weight:700}.status.ok{color:var(--ok)}.status.bad{color:var(--bad)}.status.unknown{color:var(--warn)}",
  "footer{color:var(--muted);font-size:14px;padding-bottom:28px}",
  "@media (max-width:600px){header,main,footer{padding:0 12px}section{padding:12px}.score{font-size:44px}",
  ".grade{font-size:32px;min-width:72px}table{font-size:14px}th,td{padding:5px 3px}tfoot td.num{white-space:normal}}"
].join("")

const styleHash = `sha256-${createHash("sha256").update(REPUTATION_PAGE_CSS, "utf8").digest("base64")}`

/**
 * The Content-Security-Policy the page routes send: nothing may load but the inline stylesheet
 * (by its hash) and data: images (the badge); no script, no form, no frame, no base URL.
 */
export const REPUTATION_PAGE_CSP = [
  "default-src 'none'",
  `style-src '${styleHash}'`,
  "img-src data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'"
].join("; ")

/** The same policy in the document itself (a <meta> cannot carry frame-ancestors), for copies saved offline. */
const META_CSP = REPUTATION_PAGE_CSP.split("; ")
  .filter((directive) => !directive.startsWith("frame-ancestors"))
  .join("; ")

export const REPUTATION_PAGE_CONTENT_TYPE = "text/html; charset=utf-8"

// -- formatting ----------------------------------------------------------------------------------

const DAY_MS = 86_400_000
const HISTORY_DAYS = 90

const dayFormat = new Intl.DateTimeFormat("en", { month: "short", day: "numeric", timeZone: "UTC" })

/** `2026-03-31 12:00 UTC`; an unparseable value is shown as given (escaped by the caller). */
const when = (iso: string): string => {
  const ms = Date.parse(iso)
  return Number.isNaN(ms) ? iso : `${new Date(ms).toISOString().slice(0, 16).replace("T", " ")} UTC`
}

const signed = (n: number): string => (n > 0 ? `+${n}` : n < 0 ? `−${Math.abs(n)}` : "±0")

const trendText = (trend: number | null): string =>
  trend === null ? "no score 30 days old yet" : `${signed(trend)} over 30 days`

const decimals = (n: number): string => String(Number(n.toFixed(2)))

const inputText = (value: unknown): string => {
  if (typeof value === "string") return value
  try {
    return JSON.stringify(value) ?? String(value)
  } catch {
    return String(value)
  }
}

// -- parts ---------------------------------------------------------------------------------------

/** Each UTC day's newest record inside the 90 days before `end`, oldest first. */
export const dailyHistory = (
  history: ReadonlyArray<ReputationHistoryItem>,
  end: number
): ReadonlyArray<ReputationHistoryItem & { readonly at: number }> => {
  const byDay = new Map<number, ReputationHistoryItem & { readonly at: number }>()
  for (const item of history) {
    const at = Date.parse(item.computed_at)
    if (Number.isNaN(at) || at > end || at < end - HISTORY_DAYS * DAY_MS) continue
    const day = Math.floor(at / DAY_MS)
    const kept = byDay.get(day)
    if (kept === undefined || kept.at < at) byDay.set(day, { ...item, at })
  }
  return [...byDay.values()].sort((a, b) => a.at - b.at)
}

const CHART = { width: 720, height: 280, left: 56, right: 18, top: 26, bottom: 46 } as const

const trendChart = (points: ReturnType<typeof dailyHistory>, end: number): string => {
  const start = end - HISTORY_DAYS * DAY_MS
  const plotW = CHART.width - CHART.left - CHART.right
  const plotH = CHART.height - CHART.top - CHART.bottom
  const x = (at: number) => CHART.left + ((at - start) / (end - start)) * plotW
  const y = (score: number) => CHART.top + (1 - score / 1000) * plotH
  const fmt = (n: number) => n.toFixed(1)
  const yAxis = [0, 200, 400, 600, 800, 1000]
    .map(
      (s) =>
        `<line class="grid" x1="${CHART.left}" x2="${CHART.width - CHART.right}" y1="${fmt(y(s))}" y2="${fmt(y(s))}"/>` +
        `<text class="axis" x="${CHART.left - 8}" y="${fmt(y(s) + 4)}" text-anchor="end">${s}</text>`
    )
    .join("")
  const xAxis = [0, 1, 2, 3, 4]
    .map((i) => {
      const at = start + (i * (end - start)) / 4
      const anchor = i === 0 ? "start" : i === 4 ? "end" : "middle"
      return `<text class="axis" x="${fmt(x(at))}" y="${CHART.height - CHART.bottom + 18}" text-anchor="${anchor}">${escapeHtml(dayFormat.format(at))}</text>`
    })
    .join("")
  const axisTitles =
    `<text class="axis" x="${CHART.left}" y="14">Score (0–1000)</text>` +
    `<text class="axis" x="${CHART.width - CHART.right}" y="${CHART.height - 6}" text-anchor="end">Date (UTC), last 90 days</text>`
  const first = points[0]
  const last = points[points.length - 1]
  const description =
    first === undefined || last === undefined
      ? "No score was recorded in the last 90 days."
      : `${points.length} daily scores: ${first.score} on ${dayFormat.format(first.at)}, ${last.score} on ` +
        `${dayFormat.format(last.at)}; lowest ${Math.min(...points.map((p) => p.score))}, highest ` +
        `${Math.max(...points.map((p) => p.score))}.`
  const series =
    points.length === 0
      ? `<text class="empty" x="${CHART.left + plotW / 2}" y="${CHART.top + plotH / 2}" text-anchor="middle">No history in the last 90 days</text>`
      : (points.length > 1
          ? `<polyline class="line" points="${points.map((p) => `${fmt(x(p.at))},${fmt(y(p.score))}`).join(" ")}"/>`
          : "") +
        points
          .map(
            (p) =>
              `<circle class="dot" cx="${fmt(x(p.at))}" cy="${fmt(y(p.score))}" r="2.5"><title>${escapeHtml(
                `${dayFormat.format(p.at)}: ${p.score} (${p.grade})`
              )}</title></circle>`
          )
          .join("")
  return (
    `<svg class="chart" data-testid="trend-chart" viewBox="0 0 ${CHART.width} ${CHART.height}" role="img" ` +
    `aria-labelledby="chart-title chart-desc" data-points="${points.length}">` +
    `<title id="chart-title">Score over the last 90 days</title><desc id="chart-desc">${escapeHtml(description)}</desc>` +
    `${yAxis}${xAxis}${axisTitles}${series}</svg>`
  )
}

const historyTable = (points: ReturnType<typeof dailyHistory>): string =>
  points.length === 0
    ? `<p class="muted">No score was recorded in the last 90 days.</p>`
    : `<details><summary>The same history as a table</summary><table data-testid="history-table">` +
      `<caption class="muted">Each day's last recorded score</caption><thead><tr><th scope="col">Day (UTC)</th>` +
      `<th scope="col" class="num">Score</th><th scope="col">Grade</th><th scope="col">Confidence</th></tr></thead><tbody>` +
      [...points]
        .reverse()
        .map(
          (p) =>
            `<tr><td>${escapeHtml(new Date(p.at).toISOString().slice(0, 10))}</td><td class="num">${p.score}</td>` +
            `<td>${escapeHtml(p.grade)}</td><td>${escapeHtml(p.confidence)}</td></tr>`
        )
        .join("") +
      `</tbody></table></details>`

const componentsTable = (reputation: AgentReputation): string => {
  const rows = reputation.components
    .map((c) => {
      const inputs = Object.entries(c.inputs)
        .map(([key, value]) => `${key} ${inputText(value)}`)
        .join(" · ")
      return (
        `<tr data-testid="component" data-key="${escapeHtml(c.key)}"><th scope="row">${escapeHtml(c.label)}` +
        (inputs === "" ? "" : `<span class="inputs">${escapeHtml(inputs)}</span>`) +
        `</th><td class="num">${c.score}</td><td class="num">${decimals(c.weight * 100)}%</td>` +
        `<td class="num" data-testid="weighted">${decimals(c.weighted_score)}</td></tr>`
      )
    })
    .join("")
  const total = reputation.components.reduce((sum, c) => sum + c.weighted_score, 0)
  return (
    `<table data-testid="components"><thead><tr><th scope="col">Component</th><th scope="col" class="num">Score</th>` +
    `<th scope="col" class="num">Weight</th><th scope="col" class="num">Weighted</th></tr></thead><tbody>${rows}</tbody>` +
    `<tfoot><tr><td colspan="3">Sum, rounded: the score</td><td class="num">${decimals(total)} → ${reputation.score}</td></tr></tfoot></table>`
  )
}

const verificationPart = (input: ReputationPageInput): string => {
  const { reputation, verification } = input
  const api = trimBase(input.apiBase)
  const paths = reputationPaths(reputation.agent_id)
  const status =
    verification === null
      ? `<p class="status unknown" data-testid="verification-status" data-valid="unknown">Not checked: the verification could not run when this page was rendered. Run it yourself below.</p>`
      : verification.chain_valid && verification.signed_tree_head_valid
        ? `<p class="status ok" data-testid="verification-status" data-valid="true">✓ Verified: the certificate chain is intact and the signed tree head's signature is valid.</p>`
        : `<p class="status bad" data-testid="verification-status" data-valid="false">✗ Verification failed: ` +
          [
            verification.chain_valid ? "" : "the certificate chain is broken",
            verification.signed_tree_head_valid ? "" : "the signed tree head does not verify"
          ]
            .filter((s) => s !== "")
            .join("; ") +
          `.</p>`
  const checked =
    verification === null
      ? ""
      : `<dl class="facts"><dt>Chain</dt><dd>${verification.chain_valid ? "valid" : "invalid"}</dd>` +
        `<dt>Signed tree head</dt><dd>${verification.signed_tree_head_valid ? "valid" : "invalid"}</dd>` +
        `<dt>Log size checked</dt><dd>${verification.tree_size}</dd>` +
        `<dt>Merkle root</dt><dd><code data-testid="verified-root">${escapeHtml(verification.root ?? "none (empty log)")}</code></dd></dl>` +
        (verification.signed_tree_head === null
          ? ""
          : `<pre data-testid="verified-sth">${escapeHtml(verification.signed_tree_head)}</pre>`)
  const commands =
    `npx candor reputation verify ${shellQuote(reputation.agent_id)} --url ${shellQuote(api)}\n` +
    `npx candor verify certificate.json --keys-url ${shellQuote(`${api}${paths.keys}`)} --tree-head note.txt`
  return (
    `<section id="verification" aria-labelledby="verification-h"><h2 id="verification-h">Verification</h2>${status}` +
    // A constant with no markup in it, kept verbatim (escaping would turn its apostrophes into entities).
    `<p class="disclaimer" data-testid="disclaimer">${PROTOCOL_DISCLAIMER}</p>${checked}` +
    `<h3>Check it yourself</h3><p>Recompute the whole score from the agent's public certificates and signed tree head ` +
    `(the first command), or check a single certificate offline (the second; the certificate from ` +
    `<code>${escapeHtml(`${api}/v1/checkpoints/{id}/certificate`)}</code>, the note from its inclusion proof):</p>` +
    `<pre data-testid="verify-commands">${escapeHtml(commands)}</pre>` +
    `<p class="muted">The same data as JSON: <code>${escapeHtml(`${api}${paths.reputation}`)}</code>, ` +
    `<code>${escapeHtml(`${api}${paths.history}`)}</code>, <code>${escapeHtml(`${api}${paths.verify}`)}</code>.</p></section>`
  )
}

const dataUri = (svg: string): string => `data:image/svg+xml;base64,${Buffer.from(svg, "utf8").toString("base64")}`

const embedPart = (input: ReputationPageInput): string => {
  const { reputation } = input
  const api = trimBase(input.apiBase)
  const paths = reputationPaths(reputation.agent_id)
  const svg = agentBadge(agentBadgeState(reputation), "score_tier")
  const badgeUrl = `${api}${paths.badge}?variant=score_tier`
  const pageUrl = `${api}${paths.page}`
  const snippet =
    `[![Candor Trust](${badgeUrl})](${pageUrl})\n\n` +
    `<a href="${escapeHtml(pageUrl)}"><img src="${escapeHtml(badgeUrl)}" alt="Candor Trust score"></a>`
  return (
    `<section id="embed" aria-labelledby="embed-h"><h2 id="embed-h">Badge</h2>` +
    `<p><img data-testid="badge" src="${dataUri(svg)}" alt="${escapeHtml(agentBadgeState(reputation).kind === "rated" ? `Candor Trust ${reputation.score} ${reputation.tier}` : "Candor Trust badge")}"></p>` +
    `<p>Embed it (Markdown, then HTML; variants and styles in the API documentation):</p>` +
    `<pre data-testid="embed-snippet">${escapeHtml(snippet)}</pre></section>`
  )
}

const htmlDocument = (title: string, body: string): string =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8">` +
  `<meta http-equiv="Content-Security-Policy" content="${escapeHtml(META_CSP)}">` +
  `<meta name="viewport" content="width=device-width,initial-scale=1"><meta name="color-scheme" content="light dark">` +
  `<meta name="referrer" content="no-referrer"><meta name="robots" content="noindex">` +
  `<link rel="icon" href="data:,"><title>${escapeHtml(title)}</title><style>${REPUTATION_PAGE_CSS}</style></head>` +
  `<body><header>Candor · agent reputation</header><main>${body}</main>` +
  `<footer>Every number on this page can be recomputed by anyone from the agent's signed certificates and ` +
  `signed tree head; nothing here needs trusting Candor.</footer></body></html>`

// -- pages ---------------------------------------------------------------------------------------

/** The agent's public page: score, grade, trend, components, the log prefix it covers, verification. */
export const renderReputationPage = (input: ReputationPageInput): string => {
  const { reputation } = input
  if (reputation.visibility === "private") return renderNotFoundPage(reputation.agent_id)
  const end = Date.parse(reputation.computed_at)
  const points = dailyHistory(input.history, Number.isNaN(end) ? Date.now() : end)
  const grade: Grade = reputation.grade
  const eligibility = reputation.is_eligible
    ? ""
    : `<p class="muted" data-testid="building">Not rated yet: ${reputation.checkpoint_count} of ${ELIGIBILITY_THRESHOLD} ` +
      `analysed checkpoints. The score below is provisional.</p>`
  const over = reputation.computed_over
  const hero =
    `<section class="hero" aria-labelledby="agent-h"><div><h1 id="agent-h">Agent <code data-testid="agent-id">` +
    `${escapeHtml(reputation.agent_id)}</code></h1>${eligibility}` +
    `<dl class="facts"><dt>Confidence</dt><dd data-testid="confidence">${escapeHtml(reputation.confidence)}</dd>` +
    `<dt>Analysed checkpoints</dt><dd>${reputation.checkpoint_count}</dd>` +
    `<dt>30-day trend</dt><dd data-testid="trend">${escapeHtml(trendText(reputation.trend_30d))}</dd>` +
    `<dt>Computed at</dt><dd><time datetime="${escapeHtml(reputation.computed_at)}" data-testid="computed-at">` +
    `${escapeHtml(when(reputation.computed_at))}</time></dd></dl></div>` +
    `<div class="grade grade-${escapeHtml(grade)}" id="grade" data-testid="grade" data-grade="${escapeHtml(grade)}" ` +
    `aria-label="Grade ${escapeHtml(grade)}">${escapeHtml(grade)}</div>` +
    `<div><div><span class="score" id="score" data-testid="score" data-score="${reputation.score}">${reputation.score}</span>` +
    `<span class="out-of"> / 1000</span></div><div class="tier" data-testid="tier">${escapeHtml(reputation.tier)}</div></div></section>`
  const trend =
    `<section id="trend" aria-labelledby="trend-h"><h2 id="trend-h">Score over 90 days</h2>` +
    `<figure>${trendChart(points, Number.isNaN(end) ? Date.now() : end)}</figure>` +
    `${historyTable(points)}</section>`
  const components =
    `<section id="components-section" aria-labelledby="components-h"><h2 id="components-h">Components</h2>` +
    `${componentsTable(reputation)}</section>`
  const computedOver =
    `<section id="computed-over" aria-labelledby="over-h"><h2 id="over-h">Computed over</h2>` +
    `<p>The first ${over.tree_size} certificates of the agent's log (positions 0 to ${Math.max(0, over.tree_size - 1)}), ` +
    `the signed tree head of exactly that size:</p>` +
    `<dl class="facts"><dt>Tree size</dt><dd data-testid="tree-size">${over.tree_size}</dd>` +
    `<dt>Merkle root</dt><dd><code data-testid="root">${escapeHtml(over.root ?? "none (empty log)")}</code></dd></dl>` +
    (over.checkpoint === null
      ? `<p class="muted">No signed tree head (empty log).</p>`
      : `<pre data-testid="signed-tree-head">${escapeHtml(over.checkpoint)}</pre>`) +
    `</section>`
  return htmlDocument(
    `Candor reputation of ${reputation.agent_id}: ${reputation.score} (${grade})`,
    hero + trend + components + computedOver + verificationPart(input) + embedPart(input)
  )
}

/** The page for an unknown or private id: the same words for both, so it says nothing about which. */
export const renderNotFoundPage = (agentId: string): string =>
  htmlDocument(
    "Candor reputation: not found",
    `<section aria-labelledby="nf-h" data-testid="not-found"><h1 id="nf-h">No public reputation</h1>` +
      `<p>There is no agent <code data-testid="agent-id">${escapeHtml(agentId)}</code> with a reputation to show here: ` +
      `the id is unknown, or the agent's owners keep its reputation private.</p></section>`
  )

export interface HtmlResponse {
  readonly status: 200 | 404
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

const headers = (cacheControl: string): Readonly<Record<string, string>> => ({
  "content-type": REPUTATION_PAGE_CONTENT_TYPE,
  "content-security-policy": REPUTATION_PAGE_CSP,
  "cache-control": cacheControl,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer"
})

/**
 * The page route in one call: 200 with the page, or the same 404 for an unknown id (null) and a
 * private agent. A 404 is cached briefly, so an agent made public shows soon.
 */
export const reputationPageResponse = (agentId: string, input: ReputationPageInput | null): HtmlResponse =>
  input === null || input.reputation.visibility === "private"
    ? { status: 404, headers: headers("public, max-age=60"), body: renderNotFoundPage(agentId) }
    : { status: 200, headers: headers(BADGE_CACHE_CONTROL), body: renderReputationPage(input) }
