/**
 * The closing line counts every failure, not only failed tests: vitest runs the fixtures in
 * test/fixtures/summary (a file that cannot be loaded, a suite whose hook fails, an unhandled
 * rejection) and the summary of that run is checked.
 */
import { expect, it } from "vitest"
import { fileURLToPath } from "node:url"
import { createVitest } from "vitest/node"
import { type Summary, summarize, summaryLine } from "./SummaryReporter.js"

const fixtures = fileURLToPath(new URL("fixtures/summary", import.meta.url))

it("counts files that fail to load, failed hooks and unhandled errors as failures", async () => {
  let summary: Summary | undefined
  const vitest = await createVitest("test", {
    config: false,
    root: fixtures,
    include: ["*.ts"],
    watch: false,
    globalSetup: [],
    // One worker thread, not isolated, for the four fixtures: no child process, no module graph per file.
    pool: "threads",
    maxWorkers: 1,
    minWorkers: 1,
    isolate: false,
    reporters: [{ onTestRunEnd: (modules, errors, reason) => void (summary = summarize(modules, errors, reason)) }]
  })
  const exitCode = process.exitCode
  try {
    await vitest.start()
  } finally {
    await vitest.close()
    // The fixtures' run fails on purpose; that must not mark this process as failed.
    process.exitCode = exitCode
  }
  // Passing: 2 passed. ThrowsOnImport: 1 failed. HookFails: 1 failed (the hook), its test skipped.
  // Mixed: 1 passed, 1 failed, 1 skipped, and the unhandled rejection: 1 failed.
  expect(summary).toStrictEqual({ passed: 3, failed: 4, skipped: 2 })
  expect(summaryLine(summary!)).toBe("tests: 3 passed, 4 failed, 2 skipped")
}, 60_000)

it("prints skipped tests only when there are some", () => {
  expect(summaryLine({ passed: 5, failed: 0, skipped: 0 })).toBe("tests: 5 passed, 0 failed")
})
