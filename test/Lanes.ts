/**
 * The two lanes of `npm test` (vitest.unit.config.ts, then vitest.config.ts's project `servers`):
 * the fast lane (`npm run test:unit`) runs every test that needs no server, child process or
 * browser; the server lane runs the rest. Together they are every test file; which lane a file is in
 * follows from its folder or name, so a new test lands in the right one by being named as
 * CONTRIBUTING.md says.
 */

/** Test files that spawn a process (a `candor` CLI or server, openssl, nats-server, a second node). */
const SPAWNING = [
  "test/adapters/store/PgliteClient.test.ts",
  "test/adapters/gateway/Tls.test.ts",
  "test/adapters/http/Tls.test.ts",
  "test/api/Export.test.ts",
  "test/api/Serve.test.ts",
  "test/docs/WebhookReceiver.test.ts",
  "test/src/ChainCli.test.ts",
  "test/src/Serve.test.ts",
  "test/src/Tls.test.ts",
  "test/verification/Cli.test.ts",
  "test/verification/ReputationCli.test.ts",
  "test/verification/Witness.test.ts"
]

/** Files that need a server, a browser or a process: the server lane's. */
export const SERVER_LANE = [
  "test/integration/**/*.test.ts",
  "test/e2e/**/*.test.ts",
  "test/browser/**/*.test.ts",
  "test/**/*.postgres.test.ts",
  "test/**/*.nats.test.ts",
  ...SPAWNING
]

/**
 * Server-lane files that run alone, one after the other, after the rest of the lane (which runs two
 * files at a time): they kill and restart servers and workers and assert how soon the survivors
 * resume, bound how soon a change crosses processes (within 1 s), or drive Chromium, whose timing
 * another file's processes on the same two cores would make theirs.
 */
export const SERIAL = [
  "test/integration/**/*.test.ts",
  "test/browser/**/*.test.ts",
  "test/e2e/Governance.test.ts",
  "test/e2e/ConsciencePropagation.test.ts",
  "test/e2e/Containment.test.ts",
  "test/e2e/PolicyEnforcement.test.ts"
]

/**
 * Files of the fast lane with a server case beside their embedded ones (a table of backends): the
 * fast lane runs them without servers (their server cases skip), the server lane runs them again
 * with.
 */
export const BOTH_LANES = ["test/adapters/store/Transaction.test.ts", "test/api/Unavailable.test.ts"]
