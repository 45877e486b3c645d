// Preloaded into the bench's worker process (`node --expose-gc --import`): on SIGUSR2 it writes one
// line with the process's memory, before and after a full collection, so the bench samples the
// worker's live heap (what a leak would grow) and not only its RSS, and what V8 holds of it (heap
// total: the heap's pages, the young generation's included) beside what lives outside (external).
process.on("SIGUSR2", () => {
  const before = process.memoryUsage()
  globalThis.gc?.()
  const after = process.memoryUsage()
  const line = {
    rss: before.rss,
    heapUsed: before.heapUsed,
    heapLive: after.heapUsed,
    heapTotal: before.heapTotal,
    external: before.external
  }
  process.stderr.write(`${JSON.stringify({ bench_memory: line })}\n`)
})
