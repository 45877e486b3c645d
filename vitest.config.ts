import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Tests read the official vectors from test/vectors/; a missing file fails, never skips.
    testTimeout: 30_000,
    // Checks the integration servers once: outside CI an unconfigured one skips its tests, in CI
    // (or when configured but down) it fails the run (test/support/IntegrationServers.ts).
    globalSetup: ["./test/support/IntegrationServers.ts"],
    reporters: ["default", "./test/SummaryReporter.ts"]
  }
})
