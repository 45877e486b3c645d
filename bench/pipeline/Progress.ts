/** A line on stderr saying where a long bench run is (its tables go to stdout). */
export const progress = (message: string) =>
  process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${message}\n`)
