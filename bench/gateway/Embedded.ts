/**
 * The bench's embedded target: `candor serve` as a newcomer runs it (no NATS_URL, no DATABASE_URL:
 * every role in one process with its threads, PGlite in the data dir), observe mode, `rules` judge.
 * Its CPU is read from /proc/<pid>/stat, whose utime and stime cover every thread of the process
 * (gateway, backend, prover and PGlite alike), so attestation and commits are charged to it.
 *
 * Committed checkpoints are counted from the API's `/metrics` (`candor_checkpoints`, the store's
 * per-verdict counters, summed): the bench waits after each load until that count reaches the number
 * of responses the gateway answered, and reports how long it took. The table's CPU is read then: the
 * load, attestation and commits. The bench then waits for the outbox to drain
 * (`candor_outbox_pending`: the sampled verdict proofs, webhook fan-out), so no backlog runs into the
 * next target's turn, and reports the CPU per request up to then too ("all work").
 */
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { SERVE_NODE_FLAGS } from "../../src/NodeFlags.js"

export interface EmbeddedSettings {
  readonly apiPort: number
  readonly gatewayPort: number
  readonly upstreamOrigin: string
}

/** The command line and environment of the embedded default. */
export const embeddedCommand = ({ apiPort, gatewayPort, upstreamOrigin }: EmbeddedSettings) => ({
  args: [...SERVE_NODE_FLAGS, "bin/candor.js", "serve"],
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

/** The sum of a family's samples on the API's `/metrics`. */
const metricSum = async (apiOrigin: string, family: string): Promise<number> => {
  const text = await (await fetch(`${apiOrigin}/metrics`)).text()
  let total = 0
  for (const line of text.split("\n")) if (line.startsWith(`${family}{`)) total += Number(line.split(" ").pop())
  return total
}

/** Checkpoints committed so far. */
export const committedCheckpoints = (apiOrigin: string): Promise<number> => metricSum(apiOrigin, "candor_checkpoints")

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

/** Waits until the outbox is empty; the milliseconds waited, or undefined after `timeoutMs`. */
const untilDrained = async (apiOrigin: string, timeoutMs = 120_000): Promise<number | undefined> => {
  const start = performance.now()
  for (;;) {
    if ((await metricSum(apiOrigin, "candor_outbox_pending")) === 0) return performance.now() - start
    if (performance.now() - start > timeoutMs) return undefined
    await new Promise((ok) => setTimeout(ok, 10))
  }
}

/**
 * After a load of `requests` on the embedded target: the CPU ticks once its checkpoints are committed
 * (for the table), and a line with the waits and the CPU per request committed / all work.
 */
export const settleEmbedded = async (
  apiOrigin: string,
  expected: number,
  ticks: () => number,
  ticksBefore: number,
  requests: number
): Promise<{ readonly ticksCommitted: number; readonly line: string }> => {
  const loadEnd = performance.now()
  const { committed, waitedMs } = await untilCommitted(apiOrigin, expected)
  const ticksCommitted = ticks()
  const drainedMs = await untilDrained(apiOrigin)
  const drainedAfter = performance.now() - loadEnd
  const perRequest = (t: number) => (((t - ticksBefore) * 10_000) / requests).toFixed(0)
  const line =
    waitedMs === undefined
      ? `NOT all committed after 60 s (${committed}/${expected})`
      : `committed ${waitedMs.toFixed(0)} ms, outbox drained ${drainedMs === undefined ? "NOT within 120 s" : `${drainedAfter.toFixed(0)} ms`}; CPU µs/req ${perRequest(ticksCommitted)} committed, ${perRequest(ticks())} all work`
  return { ticksCommitted, line }
}
