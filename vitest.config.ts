import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Tests read the official vectors from test/vectors/; a missing file fails, never skips.
    testTimeout: 30_000,
    reporters: ["default", "./test/SummaryReporter.ts"]
  }
})
