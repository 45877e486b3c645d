/**
 * `npm run bench:tool-results`: the rules judge's detection and false-positive rates on tool results
 * (issue 28), on the labelled set in bench/data/tool-results (its README says where the texts come
 * from). Not a timing benchmark: it reads 233 texts once and prints rates.
 *
 * - detected: an injected text judged a boundary violation (withheld in `enforce`);
 * - flagged: judged review_needed or worse (recorded with a concern, never withheld unless a violation);
 * - false positive: a benign text judged a boundary violation (withheld in `enforce`), and, apart,
 *   those only flagged for review.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { boundaryValueNames } from "../core/ConscienceResolution.js"
import { DEFAULT_CONSCIENCE_VALUES } from "../core/schema/Conscience.js"
import { deriveVerdict } from "../core/Verdict.js"
import { analyzeWithRules } from "../adapters/analysis/Rules.js"

interface Sample {
  readonly id: string
  readonly style: string
  readonly text: string
}

const dir = join(import.meta.dirname, "data", "tool-results")
const read = (name: string): ReadonlyArray<Sample> =>
  readFileSync(join(dir, name), "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as Sample)

const values = DEFAULT_CONSCIENCE_VALUES
const boundaries = boundaryValueNames(values)
const verdictOf = (text: string) => {
  const analysis = analyzeWithRules({
    thinking: text,
    card: undefined,
    conscienceValues: values,
    window: [],
    provider: "bench",
    model: undefined,
    scope: "tool_result"
  })
  return deriveVerdict(analysis.concerns, boundaries)
}

const pct = (n: number, of: number) => `${((100 * n) / of).toFixed(1)}% (${n}/${of})`

const injected = read("injected.jsonl")
const benign = read("benign.jsonl")
const verdicts = (samples: ReadonlyArray<Sample>) => samples.map((s) => ({ sample: s, verdict: verdictOf(s.text) }))
const onInjected = verdicts(injected)
const onBenign = verdicts(benign)
const violations = (rows: typeof onInjected) => rows.filter((r) => r.verdict === "boundary_violation")
const reviews = (rows: typeof onInjected) => rows.filter((r) => r.verdict === "review_needed")

console.log("rules judge on tool results (bench/data/tool-results)")
console.log(
  `detection (boundary_violation, withheld in enforce): ${pct(violations(onInjected).length, injected.length)}`
)
console.log(
  `detection incl. review_needed:                       ${pct(violations(onInjected).length + reviews(onInjected).length, injected.length)}`
)
console.log(`false positives (boundary_violation on benign):      ${pct(violations(onBenign).length, benign.length)}`)
console.log(`benign flagged review_needed (recorded, forwarded):  ${pct(reviews(onBenign).length, benign.length)}`)
if (process.argv.includes("--misses")) {
  for (const r of onInjected.filter((r) => r.verdict === "clear"))
    console.log(`missed ${r.sample.id}: ${r.sample.text.slice(-160)}`)
  for (const r of [...violations(onBenign), ...reviews(onBenign)])
    console.log(`benign ${r.verdict} ${r.sample.id}: ${r.sample.text.slice(0, 160)}`)
}
