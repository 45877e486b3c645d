/**
 * `npm run bench:policy`: what one request at the gateway's caps costs the gateway's thread to read
 * and evaluate against the largest tool policies the API accepts (issue 24), in CPU time of this
 * process (`process.cpuUsage`, steadier than wall time on a shared machine), median of BENCH_RUNS.
 *
 * Each request offers 512 tools of 128 characters never seen before (nothing remembered), except the
 * "again" rows (the same tools a second time: what an agent's usual traffic costs). Policies:
 * - usual, 1,000 rules: names, `prefix*`, `*suffix`, a few `mcp__*__x*` (core/GlobSet.ts's tries);
 * - adversarial, 1,000 and 2,000 rules (an agent's, and an organization's merged with an agent's):
 *   distinct `*a?b*c*z` globs, no literal anchor but the last letter, so each is a candidate for half
 *   the names and most match: every glob is tested and every finding is built;
 * - star-heavy, 1,000 rules: `*a*b*…` globs of 256 characters, each a long subsequence test.
 * For each: CPU per request (µs), steps (core/GlobSet.ts) and ns per step, how many slices of
 * SLICE_STEPS it took (1 = done within the request path's SYNC_STEPS), and a slice's median and 99th
 * percentile (µs, wall clock: the kernel accounts CPU in ticks, too coarse for one slice).
 * Then reading the tools: the byte scan that refuses a 20,000-tool flood against JSON.parse of it, and
 * the parse of a request at the caps.
 */
import * as Schema from "effect/Schema"
import { SLICE_STEPS, SYNC_STEPS } from "../adapters/gateway/PolicySlices.js"
import { toolEntriesOver } from "../adapters/gateway/ToolCount.js"
import { policyEvaluator } from "../core/Policy.js"
import { Policy, type PolicyEncoded } from "../core/schema/Policy.js"

const RUNS = Number(process.env.BENCH_RUNS ?? 7)

const cpuMicros = (f: () => void): number => {
  const start = process.cpuUsage()
  f()
  const used = process.cpuUsage(start)
  return used.user + used.system
}

const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

let seed = 24
const random = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) >>> 16) / 32768
const pick = (letters: string) => letters[Math.floor(random() * letters.length)]!

/** 512 new names of 128 characters from `letters`, half of them ending in "z". */
const freshNames = (letters: string) =>
  Array.from({ length: 512 }, (_, i) => ({
    name: Array.from({ length: 127 }, () => pick(letters)).join("") + (i % 2 === 0 ? "z" : "y")
  }))

const decode = (encoded: PolicyEncoded) => Schema.decodeUnknownSync(Policy)(encoded)

const TEN = "abcdefghij"
/** `gap` `?`s between the first two letters: another `gap`, another 1,000 distinct globs. */
const adversarial = (n: number, gap = 1): PolicyEncoded => ({
  forbidden: Array.from({ length: n }, (_, i) => ({
    pattern: `*${TEN[i % 10]}${"?".repeat(gap)}${TEN[Math.floor(i / 10) % 10]}*${TEN[Math.floor(i / 100) % 10]}*z`,
    reason: `r${i}`
  })),
  defaults: { enforcement_mode: "warn", unmapped_tool_action: "allow" }
})

const usual: PolicyEncoded = {
  capability_mappings: Object.fromEntries(
    Array.from({ length: 300 }, (_, i) => [
      `m${i}`,
      { tools: [`mcp__svc${i}__*`, `tool_${i}`], card_actions: ["read"] }
    ])
  ),
  forbidden: Array.from({ length: 200 }, (_, i) => ({ pattern: `*_delete_${i}`, reason: "no deletes" })),
  escalation_triggers: Array.from({ length: 100 }, (_, i) => ({
    condition: `tool_matches('mcp__*__pay${i}*')`,
    action: "escalate" as const,
    reason: "money"
  })),
  defaults: { enforcement_mode: "enforce", unmapped_tool_action: "allow" }
}

const starHeavy: PolicyEncoded = {
  forbidden: Array.from({ length: 1000 }, () => ({
    pattern: `*${Array.from({ length: 127 }, () => pick("ab")).join("*")}*`,
    reason: "r"
  })),
  defaults: { enforcement_mode: "warn", unmapped_tool_action: "allow" }
}

interface Row {
  readonly label: string
  readonly micros: number
  readonly steps: number
  readonly slices: number
  readonly medianSlice: number
  readonly longestSlice: number
}

/** One request's evaluation as the gateway runs it: SYNC_STEPS, then slices of SLICE_STEPS, each timed. */
const request = (policy: Policy, tools: ReadonlyArray<{ readonly name: string }>) => {
  const evaluator = policyEvaluator(policy, undefined, tools, () => undefined, new Date())
  let slices = 0
  const durations: Array<number> = []
  let total = 0
  let budget = SYNC_STEPS
  for (;;) {
    let done = false
    const started = performance.now()
    const micros = cpuMicros(() => {
      done = evaluator.run(budget) !== undefined
    })
    // Slices by the wall clock: the kernel accounts CPU in ticks, too coarse for one slice.
    if (slices++ > 0) durations.push((performance.now() - started) * 1000)
    total += micros
    budget = SLICE_STEPS
    if (done) break
  }
  return { micros: total, steps: evaluator.steps(), slices, durations }
}

const measure = (label: string, encoded: PolicyEncoded, letters: string, again = false): Row => {
  const samples: Array<ReturnType<typeof request>> = []
  for (let run = -1; run < RUNS; run++) {
    // A new policy object per run: compiled (not counted) and with nothing remembered.
    const policy = decode(encoded)
    policyEvaluator(policy, undefined, [], () => undefined, new Date()).run(1)
    const tools = freshNames(letters)
    if (again) request(policy, tools)
    const sample = request(policy, tools)
    if (run >= 0) samples.push(sample)
  }
  const typical = samples.find((s) => s.micros === median(samples.map((x) => x.micros)))!
  return {
    label,
    micros: typical.micros,
    steps: typical.steps,
    slices: typical.slices,
    ...sliceFigures(samples.flatMap((s) => s.durations))
  }
}

/** Slices after the synchronous part, over every run: the median and the 99th percentile (wall clock). */
const sliceFigures = (durations: ReadonlyArray<number>) => {
  const sorted = [...durations].sort((a, b) => a - b)
  return durations.length === 0
    ? { medianSlice: Number.NaN, longestSlice: Number.NaN }
    : { medianSlice: median(durations), longestSlice: sorted[Math.floor(sorted.length * 0.99)]! }
}

const merge = (a: PolicyEncoded, b: PolicyEncoded): PolicyEncoded => ({
  ...a,
  forbidden: [...(a.forbidden ?? []), ...(b.forbidden ?? [])]
})

const rows: ReadonlyArray<Row> = [
  measure("usual, 1,000 rules, new names", usual, TEN + "_"),
  measure("usual, 1,000 rules, same names again", usual, TEN + "_", true),
  measure("adversarial `*a?b*c*z`, 1,000 rules, new names", adversarial(1000), TEN),
  measure("adversarial `*a?b*c*z`, 1,000 rules, same names again", adversarial(1000), TEN, true),
  measure(
    "adversarial `*a?b*c*z`, 2,000 rules (org + agent), new names",
    merge(adversarial(1000), adversarial(1000, 2)),
    TEN
  ),
  measure("star-heavy `*a*b*…` (256 characters), 1,000 rules, new names", starHeavy, "ab")
]

console.log(`Node ${process.version}, median of ${RUNS} runs, ${new Date().toISOString()}`)
console.log(`SYNC_STEPS ${SYNC_STEPS}, SLICE_STEPS ${SLICE_STEPS}; 512 tools of 128 characters per request`)
console.log("")
console.log(
  "| policy, tools | CPU µs / request | steps | ns / step | turns (1: no slicing) | slice µs, median | slice µs, p99 |"
)
console.log("|---|---:|---:|---:|---:|---:|---:|")
for (const row of rows) {
  console.log(
    `| ${row.label} | ${row.micros.toFixed(0)} | ${row.steps} | ${((row.micros * 1000) / Math.max(1, row.steps)).toFixed(1)} | ${row.slices} | ${Number.isNaN(row.medianSlice) ? "" : row.medianSlice.toFixed(0)} | ${Number.isNaN(row.longestSlice) ? "" : row.longestSlice.toFixed(0)} |`
  )
}

// Reading the tools.
const toolEntry = (i: number) => ({
  name: `tool_${i}`,
  description: "d",
  input_schema: { type: "object", properties: {} }
})
const conversation = Array.from({ length: 200 }, (_, i) => ({
  role: i % 2 === 0 ? "user" : "assistant",
  content: `turn ${i}`
}))
const flood = Buffer.from(
  JSON.stringify({
    model: "m",
    max_tokens: 10,
    messages: conversation,
    tools: Array.from({ length: 20_000 }, (_, i) => toolEntry(i))
  })
)
const atCaps = Buffer.from(
  JSON.stringify({
    model: "m",
    max_tokens: 10,
    messages: conversation,
    tools: freshNames(TEN).map(({ name }) => ({ name, description: "d", input_schema: { type: "object" } }))
  })
)
const timed = (f: () => void) => median(Array.from({ length: RUNS }, () => cpuMicros(f)))
console.log("")
console.log("| reading the tools | bytes | CPU µs |")
console.log("|---|---:|---:|")
console.log(
  `| 20,000 tools: byte scan to the 413 (toolEntriesOver) | ${flood.byteLength} | ${timed(() => toolEntriesOver("anthropic", flood, 512)).toFixed(0)} |`
)
console.log(
  `| 20,000 tools: JSON.parse (what the 413 used to wait for) | ${flood.byteLength} | ${timed(() => JSON.parse(flood.toString("utf8"))).toFixed(0)} |`
)
console.log(
  `| 512 tools of 128: JSON.parse | ${atCaps.byteLength} | ${timed(() => JSON.parse(atCaps.toString("utf8"))).toFixed(0)} |`
)
