/**
 * The request shape of bench:gateway's tool-result row (issue 28): an Anthropic conversation whose
 * history carries three `tool_result` blocks (a fetched web page of about 4 KB, an API's JSON, a
 * file's contents), as an agent resends them with every turn. The gateway judges each result the
 * first time it sees it for the agent and afterwards only hashes it (ToolResultMemory.ts), so the
 * row measures the steady state of a conversation: one parse, three hashes, three lookups.
 */

const PAGE = Array.from(
  { length: 40 },
  (_, i) =>
    `<p>Section ${i + 1}. The quarterly report lists revenue by region, with notes on currency effects and one-off items; figures are unaudited.</p>`
).join("\n")

const API = JSON.stringify({
  orders: Array.from({ length: 12 }, (_, i) => ({
    id: `ord_${1000 + i}`,
    status: i % 3 === 0 ? "shipped" : "pending",
    total: { amount: 1999 + i * 250, currency: "EUR" },
    items: [{ sku: `SKU-${i}`, quantity: 1 + (i % 4) }]
  })),
  next_cursor: null
})

const FILE = Array.from({ length: 30 }, (_, i) => `export const value${i} = compute(${i}) // row ${i}`).join("\n")

export const toolResultRequestBody = (stream: boolean): string =>
  JSON.stringify({
    model: "claude-bench",
    max_tokens: 256,
    stream,
    messages: [
      { role: "user", content: "Summarise the report, the open orders and the config file." },
      {
        role: "assistant",
        content: [
          { type: "tool_use", id: "tu_page", name: "web_fetch", input: { url: "https://example.com/report" } },
          { type: "tool_use", id: "tu_api", name: "list_orders", input: { status: "any" } },
          { type: "tool_use", id: "tu_file", name: "read_file", input: { path: "src/config.ts" } }
        ]
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "tu_page", content: [{ type: "text", text: PAGE }] },
          { type: "tool_result", tool_use_id: "tu_api", content: API },
          { type: "tool_result", tool_use_id: "tu_file", content: FILE }
        ]
      }
    ]
  })
