/**
 * Prints one closing line, `tests: N passed, N failed[, N skipped]`, the plain form CI readers
 * understand whatever the runner; vitest's own summary is not one of those forms.
 */
import type { Reporter, TestModule } from "vitest/node"

export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const counts = { passed: 0, failed: 0, skipped: 0, pending: 0 }
    for (const module of testModules) {
      for (const test of module.children.allTests()) counts[test.result().state]++
    }
    const skipped = counts.skipped + counts.pending
    const line = `tests: ${counts.passed} passed, ${counts.failed} failed${skipped > 0 ? `, ${skipped} skipped` : ""}\n`
    // After vitest's own summary, so that it really is the closing line (writes to pipes and files are synchronous).
    process.once("exit", () => process.stdout.write(line))
  }
}
