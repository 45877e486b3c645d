/**
 * Every test, as two projects: `npx vitest run <file or folder>` runs what it names wherever it is.
 * `npm test` runs the fast lane first (vitest.unit.config.ts, which also shares module graphs between
 * files), then the project `servers`.
 *
 * - `unit`: every test that needs no server, child process or browser. The run is one without
 *   servers whatever the shell says, so the server cases of the files in both lanes skip.
 * - `servers`: the tests that need PostgreSQL, NATS, a browser or a child process, and the server
 *   cases of the files in both lanes. Outside CI an unconfigured server skips its tests; in CI (or
 *   configured but down) it fails the run (test/support/IntegrationServers.ts).
 *
 * Which lane a file is in follows from its folder or name (test/Lanes.ts). Tests read the official
 * vectors from test/vectors/; a missing file fails, never skips.
 */
import { defineConfig } from "vitest/config"
import { BOTH_LANES, SERVER_LANE } from "./test/Lanes.js"

export default defineConfig({
  test: {
    testTimeout: 30_000,
    reporters: ["default", "./test/SummaryReporter.ts"],
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          include: ["test/**/*.test.ts"],
          exclude: [...SERVER_LANE, "**/node_modules/**"],
          env: { CI: "", TEST_DATABASE_URL: "", TEST_NATS_URL: "" }
        }
      },
      {
        extends: true,
        test: {
          name: "servers",
          include: [...SERVER_LANE, ...BOTH_LANES],
          exclude: ["**/node_modules/**"],
          globalSetup: ["./test/support/IntegrationServers.ts"]
        }
      }
    ]
  }
})
