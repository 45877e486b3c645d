/**
 * The bench's knobs, read once from the environment (see bench/Pipeline.ts for what each row does).
 */
// Backend and WorkerMode spelled out, not imported from Deployment.ts, which reads these settings.

/** A positive number from the environment, else `fallback`. */
export const positive = (name: string, fallback: number): number => {
  const value = Number(process.env[name])
  return Number.isFinite(value) && value > 0 ? value : fallback
}

export const settings = {
  /** Events of a throughput row. */
  events: positive("BENCH_EVENTS", 20_000),
  /** Agents of the throughput and latency rows (the realistic shape's 20 organizations × 10). */
  agents: positive("BENCH_AGENTS", 200),
  /** Events on other agents before a row is timed. */
  warmup: positive("BENCH_WARMUP", 2_000),
  /** Publishes in flight when publishing as fast as the bus takes them. */
  concurrency: positive("BENCH_PUBLISH_CONCURRENCY", 256),
  /** CANDOR_PARTITIONS of the row's deployment (64, as deployed). */
  partitions: positive("BENCH_PARTITIONS", 64),
  /** The latency rows' rate; unset: half the backend's throughput just measured, else 2,500. */
  rate: Number(process.env.BENCH_RATE) > 0 ? Number(process.env.BENCH_RATE) : undefined,
  latencySeconds: positive("BENCH_LATENCY_SECONDS", 20),
  soakSeconds: positive("BENCH_SOAK_SECONDS", 60),
  soakAgents: positive("BENCH_SOAK_AGENTS", 10_000),
  /** The soak's rate: well within what one worker sustains for 10,000 agents, so memory is not backlog. */
  soakRate: positive("BENCH_SOAK_RATE", 1_000),
  soakSampleSeconds: positive("BENCH_SOAK_SAMPLE_SECONDS", 10),
  /**
   * How long the deferred work may take to drain before a row fails: the reputation of 10,000 agents
   * is recomputed 250 a drain, and a loaded machine may take minutes.
   */
  drainSeconds: positive("BENCH_DRAIN_SECONDS", 300),
  /** The bench publisher's BusOptions.publishBatchEvents (events per JetStream message); unset: the bus's default. */
  publishBatchEvents: Number(process.env.BENCH_PUBLISH_BATCH) > 0 ? Number(process.env.BENCH_PUBLISH_BATCH) : undefined,
  /** Deliveries per partition batch in the worker-alone baseline (BusOptions.batchSize). */
  batch: positive("BENCH_BATCH", 256),
  backends: (process.env.BENCH_BACKENDS ?? "postgres,pglite")
    .split(",")
    .filter((b): b is "postgres" | "pglite" => b === "postgres" || b === "pglite"),
  /** Where the PostgreSQL worker runs (PGlite's always runs in the bench process). */
  pgWorker: (process.env.BENCH_WORKER === "inline" ? "inline" : "process") as "process" | "inline",
  /** Keep the rows' CPU profiles here (bench/pipeline/Profiling.ts); unset: a temporary directory. */
  cpuProfileDir: process.env.BENCH_CPU_PROFILE
} as const

export type Settings = typeof settings
