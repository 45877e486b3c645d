/**
 * The fast lane (`npm run test:unit`): no servers and no processes, for the minute between two
 * edits. Everything that needs PostgreSQL or NATS is left out by making the run one without them
 * (outside CI, unconfigured: test/support/IntegrationServers.ts skips those tests), and the folders
 * and files that start servers, browsers or child processes are not collected. The embedded
 * database (PGlite) and the in-process bus run here, as they do for a newcomer's first run.
 * `npm test` (vitest.config.ts) runs everything, this lane included.
 */
import { defineConfig } from "vitest/config"

/** Test files that spawn a process (a `candor` CLI or server, openssl, nats-server, a second node). */
const SPAWNING = [
  "test/adapters/store/PgliteClient.test.ts",
  "test/adapters/gateway/Tls.test.ts",
  "test/adapters/http/Tls.test.ts",
  "test/api/Serve.test.ts",
  "test/docs/WebhookReceiver.test.ts",
  "test/src/ChainCli.test.ts",
  "test/src/Serve.test.ts",
  "test/src/Tls.test.ts",
  "test/verification/Cli.test.ts",
  "test/verification/ReputationCli.test.ts"
]

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    exclude: [
      "test/integration/**",
      "test/e2e/**",
      "test/browser/**",
      "**/*.postgres.test.ts",
      "**/*.nats.test.ts",
      ...SPAWNING,
      "**/node_modules/**"
    ],
    // No servers, whatever the shell says: the integration tests that remain skip themselves.
    env: { CI: "", TEST_DATABASE_URL: "", TEST_NATS_URL: "" },
    testTimeout: 30_000,
    // One module graph per worker for all its files: importing Effect and the product once, not per
    // file, is most of the lane's time saved. What a file leaves in shared modules is reset by the
    // setup file (@effect/vitest's \`it\`); the metrics registry is shared, so tests read their own series.
    isolate: false,
    setupFiles: ["./test/support/EffectVitestReset.ts"],
    reporters: ["default", "./test/SummaryReporter.ts"]
  }
})
