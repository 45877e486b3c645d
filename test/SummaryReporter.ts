/**
 * Prints one closing line, `tests: N passed, N failed[, N skipped]`, the plain form CI readers
 * understand whatever the runner; vitest's own summary is not one of those forms. A failure is a
 * failed test, and also anything that failed outside a test: a file that could not be loaded (an
 * import error, a throw while collecting), a suite whose hook failed (its tests are then reported
 * as skipped), an unhandled error. Before it, when integration tests were skipped for want of a
 * server, one line says so and how to run them.
 *
 * `npm test` is two runs (the fast lane, then the server lane): with `CANDOR_TEST_LANES` naming a
 * file, each run adds its counts to the file's and prints the sum, so the closing line of
 * `npm test` counts every test of both lanes (the script empties the file first).
 */
import { readFileSync, writeFileSync } from "node:fs"
import type { Reporter, TestModule } from "vitest/node"
import { skipNotice } from "./support/IntegrationServers.js"

export interface Summary {
  readonly passed: number
  readonly failed: number
  readonly skipped: number
}

type RunEndReason = "passed" | "interrupted" | "failed"

export const summarize = (
  testModules: ReadonlyArray<TestModule>,
  unhandledErrors: ReadonlyArray<unknown>,
  reason: RunEndReason
): Summary => {
  let passed = 0
  let failed = unhandledErrors.length
  let skipped = 0
  for (const module of testModules) {
    let failedHere = 0
    for (const test of module.children.allTests()) {
      const state = test.result().state
      if (state === "passed") passed++
      else if (state === "failed") failedHere++
      else skipped++
    }
    for (const suite of [module, ...module.children.allSuites()]) if (suite.errors().length > 0) failedHere++
    // A module can fail with nothing to show for it (no test, no error of its own): count it once.
    if (failedHere === 0 && module.state() === "failed") failedHere = 1
    failed += failedHere
  }
  // A failed run never reads "0 failed", whatever failed.
  if (reason === "failed" && failed === 0) failed = 1
  return { passed, failed, skipped }
}

export const summaryLine = ({ failed, passed, skipped }: Summary): string =>
  `tests: ${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ""}`

const addSummaries = (a: Summary, b: Summary): Summary => ({
  passed: a.passed + b.passed,
  failed: a.failed + b.failed,
  skipped: a.skipped + b.skipped
})

/** The counts of the earlier runs of this `npm test` (none: an empty or missing file). */
const earlierRuns = (file: string): Summary => {
  try {
    const earlier = JSON.parse(readFileSync(file, "utf8")) as Partial<Summary>
    return { passed: earlier.passed ?? 0, failed: earlier.failed ?? 0, skipped: earlier.skipped ?? 0 }
  } catch {
    return { passed: 0, failed: 0, skipped: 0 }
  }
}

export default class SummaryReporter implements Reporter {
  onTestRunEnd(
    testModules: ReadonlyArray<TestModule>,
    unhandledErrors: ReadonlyArray<unknown>,
    reason: RunEndReason
  ): void {
    const lanes = process.env["CANDOR_TEST_LANES"]
    const thisRun = summarize(testModules, unhandledErrors, reason)
    const summary = lanes ? addSummaries(earlierRuns(lanes), thisRun) : thisRun
    if (lanes) writeFileSync(lanes, JSON.stringify(summary))
    const notice = summary.skipped > 0 ? skipNotice() : undefined
    const lines = `${notice === undefined ? "" : `${notice}\n`}${summaryLine(summary)}\n`
    // After vitest's own summary, so that it really is the closing line (writes to pipes and files are synchronous).
    process.once("exit", () => process.stdout.write(lines))
  }
}
