/**
 * The bench's embedded target: `candor serve` as a newcomer runs it (no NATS_URL, no DATABASE_URL:
 * every role in one process with its threads, PGlite in the data dir), observe mode, `rules` judge.
 * Its CPU is read from /proc/<pid>/stat, whose utime and stime cover every thread of the process
 * (gateway, backend, prover and PGlite alike), so attestation and commits are charged to it.
 *
 * Committed checkpoints are counted from the API's `/metrics` (`candor_checkpoints`, the store's
 * per-verdict counters, summed): the bench waits after each load until that count reaches the number
 * of responses the gateway answered, and reports how long it took.
 */
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

export interface EmbeddedSettings {
  readonly apiPort: number
  readonly gatewayPort: number
  readonly upstreamOrigin: string
}

/** The command line and environment of the embedded default. */
export const embeddedCommand = ({ apiPort, gatewayPort, upstreamOrigin }: EmbeddedSettings) => ({
  args: ["bin/candor.js", "serve"],
  env: {
    NATS_URL: "",
    DATABASE_URL: "",
    PORT: String(apiPort),
    GATEWAY_PORT: String(gatewayPort),
    HOST: "127.0.0.1",
    CANDOR_DATA_DIR: mkdtempSync(join(tmpdir(), "candor-bench-embedded-")),
    ANTHROPIC_BASE_URL: upstreamOrigin,
    OPENAI_BASE_URL: upstreamOrigin,
    LOG_LEVEL: "warn"
  }
})

/** Checkpoints committed so far: the sum of `candor_checkpoints` on the API's `/metrics`. */
export const committedCheckpoints = async (apiOrigin: string): Promise<number> => {
  const text = await (await fetch(`${apiOrigin}/metrics`)).text()
  let total = 0
  for (const line of text.split("\n"))
    if (line.startsWith("candor_checkpoints{")) total += Number(line.split(" ").pop())
  return total
}

/**
 * Waits until at least `expected` checkpoints are committed, polling every 10 ms; the milliseconds
 * waited, or undefined when `timeoutMs` passed first (the count is then reported as it stood).
 */
export const untilCommitted = async (
  apiOrigin: string,
  expected: number,
  timeoutMs = 60_000
): Promise<{ readonly waitedMs: number | undefined; readonly committed: number }> => {
  const start = performance.now()
  for (;;) {
    const committed = await committedCheckpoints(apiOrigin)
    const waited = performance.now() - start
    if (committed >= expected) return { waitedMs: waited, committed }
    if (waited > timeoutMs) return { waitedMs: undefined, committed }
    await new Promise((ok) => setTimeout(ok, 10))
  }
}
