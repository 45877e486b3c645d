/**
 * How often a row polls the database for its progress (the committed count, the backlogs). Each
 * poll reads every chain head (and the outbox, the reputation tallies): with 10,000 agents some
 * milliseconds of PostgreSQL, which a row counts as Candor's CPU. Polled every 20 ms, a 270-second
 * row spent ~15% of a core on its own probes; so the interval grows with the wait, 1% of it (20 ms
 * to 500 ms), which bounds how late an end is seen to 1% of the time waited.
 */
export const pollIntervalMs = (waitedMs: number): number => Math.min(500, Math.max(20, waitedMs / 100))
