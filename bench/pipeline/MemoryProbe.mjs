// Preloaded into the bench's worker process (`node --expose-gc --import`): on SIGUSR2 it writes one
// line with the process's memory, before and after a full collection, so the bench samples the
// worker's live heap (what a leak would grow) and not only its RSS.
process.on("SIGUSR2", () => {
  const before = process.memoryUsage()
  globalThis.gc?.()
  const after = process.memoryUsage()
  const line = { rss: before.rss, heapUsed: before.heapUsed, heapLive: after.heapUsed }
  process.stderr.write(`${JSON.stringify({ bench_memory: line })}\n`)
})
