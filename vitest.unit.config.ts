/**
 * The fast lane (`npm run test:unit`, the first of `npm test`'s two runs): every test that needs no
 * server, child process or browser (test/Lanes.ts), for the minute between two edits. The run is
 * one without servers whatever the shell says, so the server cases of the files in both lanes skip.
 * The embedded database (PGlite, from a migrated template: test/support/PgliteTemplate.ts) and the
 * in-process bus run here, as for a newcomer's first run.
 *
 * A configuration of its own, not a project of vitest.config.ts: isolation is the pool's, one for all
 * projects of a run.
 */
import { defineConfig } from "vitest/config"
import { SERVER_LANE } from "./test/Lanes.js"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    exclude: [...SERVER_LANE, "**/node_modules/**"],
    env: { CI: "", TEST_DATABASE_URL: "", TEST_NATS_URL: "" },
    testTimeout: 30_000,
    // One module graph per worker for all its files: importing Effect and the product once, not per
    // file, is most of the lane's time saved. What a file leaves in shared modules is reset by the
    // setup file (@effect/vitest's `it`); the metrics registry is shared, so tests read their own series.
    isolate: false,
    // One worker per core: vitest's default is one fewer (cores − 1: one on the 2-core CI machine),
    // which left a core idle while the one worker waited on sockets, timers and child processes (the
    // lane's CPU time was 0.6 of its wall time). Each worker imports the module graph once more.
    maxWorkers: "100%",
    setupFiles: ["./test/support/EffectVitestReset.ts"],
    reporters: ["default", "./test/SummaryReporter.ts"]
  }
})
