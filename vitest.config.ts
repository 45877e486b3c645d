/**
 * Every test, as two projects: `npx vitest run <file or folder>` runs what it names wherever it is.
 * `npm test` runs the fast lane first (vitest.unit.config.ts, which also shares module graphs between
 * files), then the project `servers`.
 *
 * - `unit`: every test that needs no server, child process or browser. The run is one without
 *   servers whatever the shell says, so the server cases of the files in both lanes skip.
 * - `servers`: the tests that need PostgreSQL, NATS, a browser or a child process, and the server
 *   cases of the files in both lanes. Outside CI an unconfigured server skips its tests; in CI (or
 *   configured but down) it fails the run (test/support/IntegrationServers.ts). `npm test` runs it
 *   two files at a time (`--maxWorkers=2`), then `servers-serial`, the files that must run alone
 *   (test/Lanes.ts `SERIAL`), one at a time.
 *
 * Both lanes share one module graph per vitest worker (`isolate: false`): each file importing Effect
 * and the product anew was most of the server lane's collect time (75 of 960 s). What a file leaves
 * in shared modules is reset by the setup file (@effect/vitest's `it`).
 *
 * Which lane a file is in follows from its folder or name (test/Lanes.ts). Tests read the official
 * vectors from test/vectors/; a missing file fails, never skips.
 */
import { defineConfig } from "vitest/config"
import { BOTH_LANES, SERIAL, SERVER_LANE } from "./test/Lanes.js"

const serverSetup = { globalSetup: ["./test/support/IntegrationServers.ts"] }

export default defineConfig({
  test: {
    testTimeout: 30_000,
    isolate: false,
    setupFiles: ["./test/support/EffectVitestReset.ts"],
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
          exclude: [...SERIAL, "**/node_modules/**"],
          ...serverSetup
        }
      },
      {
        extends: true,
        test: { name: "servers-serial", include: SERIAL, exclude: ["**/node_modules/**"], ...serverSetup }
      }
    ]
  }
})
