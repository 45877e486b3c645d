/**
 * The tables `npm run bench:pipeline` prints (Markdown, as docs/benchmarks.md takes them): rows of
 * each shape with the ratio realistic / bare beneath, CPU by process and by feature, and the code
 * that cost the most.
 */
import type { CpuShare } from "./Load.js"
import type { FeatureBreakdown } from "./Profiling.js"
import type { Shape } from "./Shape.js"
import type { Deferred, Measurement } from "./Window.js"

export const fmt = (n: number | undefined, digits = 0) =>
  n === undefined || !Number.isFinite(n)
    ? ""
    : n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits })

export const table = (title: string, header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>) => {
  console.log(`\n${title}\n`)
  console.log(`| ${header.join(" | ")} |`)
  console.log(`|${header.map((_, i) => (i === 0 ? "---" : "---:")).join("|")}|`)
  for (const row of rows) console.log(`| ${row.join(" | ")} |`)
}

/** `a / b` as a ratio (`1.23×`), blank when either is missing or b is 0. */
export const ratio = (a: number | undefined, b: number | undefined) =>
  a === undefined || b === undefined || b === 0 || !Number.isFinite(a / b) ? "" : `${(a / b).toFixed(2)}×`

/** The processes of CPU columns, in this order, as far as any row has them. */
const PROCESS_ORDER = [
  "api",
  "gateway",
  "worker",
  "workers",
  "postgres",
  "nats",
  "bench",
  "loadGenerator",
  "provider",
  "peers"
]

const PROCESS_LABEL: Readonly<Record<string, string>> = {
  api: "api",
  gateway: "gateway",
  worker: "worker",
  workers: "workers",
  postgres: "PostgreSQL",
  nats: "NATS",
  bench: "bench (publisher)",
  loadGenerator: "load generator",
  provider: "provider",
  peers: "peers (receivers, stream)"
}

/** The CPU columns for `shares`: every process any of them counted, then the total. */
export const cpuColumns = (shares: ReadonlyArray<CpuShare>) => {
  const names = PROCESS_ORDER.filter((name) => shares.some((share) => share[name] !== undefined))
  return {
    header: [...names.map((name) => `CPU ${PROCESS_LABEL[name]}`), "CPU total"],
    cells: (share: CpuShare) => [
      ...names.map((name) => fmt(share[name])),
      fmt(Object.values(share).reduce((sum, us) => sum + us, 0))
    ],
    ratios: (a: CpuShare, b: CpuShare) => [
      ...names.map((name) => ratio(a[name], b[name])),
      ratio(
        Object.values(a).reduce((sum, us) => sum + us, 0),
        Object.values(b).reduce((sum, us) => sum + us, 0)
      )
    ]
  }
}

/** The drain after the last commit, s: in all, then when the outbox, the fan-out and reputation were last behind. */
export const drainCell = (m: Measurement | undefined) =>
  m === undefined
    ? ""
    : `${fmt(m.drainSeconds, 2)} (${fmt(m.drainedBy.outbox, 1)} / ${fmt(m.drainedBy.fanOut, 1)} / ${fmt(m.drainedBy.reputation, 1)})`

export const DRAIN_HEADER = "drained s after the last commit (outbox / fan-out / reputation)"

export const DEFERRED_HEADER = ["webhooks / ckpt", "stream events / ckpt", "proof jobs / ckpt"]

export const deferredCells = (deferred: Deferred | undefined) =>
  deferred === undefined
    ? ["", "", ""]
    : [fmt(deferred.webhooks, 3), fmt(deferred.stream, 3), fmt(deferred.proofJobs, 3)]

export interface ShapedFeatures {
  readonly shape: Shape
  readonly cpu: CpuShare
  readonly features: FeatureBreakdown | undefined
}

/**
 * CPU by feature, µs per checkpoint (profile shares scaled to each role's /proc CPU): the first
 * shape's by role and in all, each other shape's in all, the ratio of the first to the second.
 */
export const featureTable = (title: string, shaped: ReadonlyArray<ShapedFeatures>) => {
  const withProfiles = shaped.filter((s) => s.features !== undefined)
  if (withProfiles.length === 0) return
  const [first, ...rest] = withProfiles
  const roles = [...first!.features!.roles.keys()]
  const totalOf = (s: ShapedFeatures, feature: string) =>
    [...s.features!.roles.values()].reduce((sum, role) => sum + (role.byFeature.get(feature) ?? 0), 0)
  const features = new Set<string>()
  for (const s of withProfiles)
    for (const role of s.features!.roles.values()) for (const f of role.byFeature.keys()) features.add(f)
  const ordered = [...features].sort((a, b) => totalOf(first!, b) - totalOf(first!, a))
  const firstTotal = [...first!.features!.roles.values()].reduce((sum, role) => sum + role.cpuUs, 0)
  const rows = ordered.map((feature) => [
    feature,
    ...roles.map((role) => fmt(first!.features!.roles.get(role)?.byFeature.get(feature))),
    fmt(totalOf(first!, feature)),
    `${((100 * totalOf(first!, feature)) / Math.max(1, firstTotal)).toFixed(1)}%`,
    ...rest.map((s) => fmt(totalOf(s, feature))),
    ...(rest.length > 0 ? [ratio(totalOf(first!, feature), totalOf(rest[0]!, feature))] : [])
  ])
  const cpuOf = (s: ShapedFeatures) => [...s.features!.roles.values()].reduce((sum, role) => sum + role.cpuUs, 0)
  const sampledOf = (s: ShapedFeatures) =>
    [...s.features!.roles.values()].reduce((sum, role) => sum + role.sampledUs, 0)
  rows.push([
    "**the profiled processes' CPU (/proc, all threads)**",
    ...roles.map((role) => fmt(first!.features!.roles.get(role)?.cpuUs)),
    fmt(cpuOf(first!)),
    "100%",
    ...rest.map((s) => fmt(cpuOf(s))),
    ...(rest.length > 0 ? [ratio(cpuOf(first!), cpuOf(rest[0]!))] : [])
  ])
  rows.push([
    "main threads sampled busy (wall time: above the CPU when they waited for a core)",
    ...roles.map((role) => fmt(first!.features!.roles.get(role)?.sampledUs)),
    fmt(sampledOf(first!)),
    "",
    ...rest.map((s) => fmt(sampledOf(s))),
    ...(rest.length > 0 ? [ratio(sampledOf(first!), sampledOf(rest[0]!))] : [])
  ])
  table(
    title,
    [
      "feature",
      ...roles.map((role) => `${first!.shape}: ${role}`),
      `${first!.shape}: total`,
      "share",
      ...rest.map((s) => `${s.shape}: total`),
      ...(rest.length > 0 ? [`ratio ${first!.shape} / ${rest[0]!.shape}`] : [])
    ],
    rows
  )
}

/** The frames that decided the most CPU in `features` (the code to look at), µs per checkpoint. */
export const framesTable = (title: string, features: FeatureBreakdown | undefined, n = 25) => {
  if (features === undefined) return
  table(
    title,
    ["process", "frame (file:line function)", "feature", "µs / ckpt"],
    features.frames.slice(0, n).map(([role, frame, feature, us]) => [role, `\`${frame}\``, feature, fmt(us, 1)])
  )
}
