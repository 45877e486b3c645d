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
 */
const SEMI_SPACE_MB = 64

export const SERVE_NODE_FLAGS: ReadonlyArray<string> = [`--max-semi-space-size=${SEMI_SPACE_MB}`]

/**
 * The same for the embedded default's backend thread, whose heap is configured by its `Worker`:
 * a young generation is three semi-spaces (two, and the large objects' space beside them).
 */
export const BACKEND_YOUNG_GENERATION_MB = 3 * SEMI_SPACE_MB
