/**
 * The V8 flags `candor serve` runs with: bin/candor.js's shebang (`npx candor`), `npm start`, and
 * the benches, which start it as users do (test/src/NodeFlags.test.ts holds the three to this list).
 *
 * A young generation of 64 MB semi-spaces where Node's default is 16 MB: the gateway and the
 * workers allocate per request and per checkpoint objects that die young, and a larger nursery
 * scavenges four times less often for the same survivors. On the realistic gateway row it took
 * 10–20% off the CPU per checkpoint, the gateway's and in all (docs/benchmarks.md), for some
 * 100–150 MB more resident memory per process under load. V8 reads it only at start, so
 * it cannot be set from inside the process (`v8.setFlagsFromString` is too late).
 *
 * The semi-spaces start at that size too (`--min-semi-space-size`): V8 otherwise grows them by
 * doubling whenever a burst of allocation calls for it, and a process that met its first burst
 * minutes into its life (the API, when the live stream's feed caught up on a backlog) took tens of
 * megabytes more resident memory then, and kept them: growth that looks like a leak to whoever
 * watches the RSS (the soak of docs/benchmarks.md). At full size from the start, the young
 * generation is resident once the process has allocated through it, and stays the same after.
 */
const SEMI_SPACE_MB = 64

export const SERVE_NODE_FLAGS: ReadonlyArray<string> = [
  `--max-semi-space-size=${SEMI_SPACE_MB}`,
  `--min-semi-space-size=${SEMI_SPACE_MB}`
]

/**
 * The same for the embedded default's backend thread, whose heap is configured by its `Worker`:
 * a young generation is three semi-spaces (two, and the large objects' space beside them).
 */
export const BACKEND_YOUNG_GENERATION_MB = 3 * SEMI_SPACE_MB
