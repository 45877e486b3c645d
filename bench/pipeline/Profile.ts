/**
 * The profile summariser: reads the `.cpuprofile` files that `node --cpu-prof` writes when a process
 * exits, keeps the samples taken within a window (profile timestamps are microseconds of the
 * system's monotonic clock, the clock of `process.hrtime`, so the bench's own readings delimit
 * them), and attributes each sample's time to a feature by its stack (bench/pipeline/Features.ts).
 *
 * A sample's time is the interval to the next sample (as Chrome's DevTools count it). That is wall
 * time of the sampled thread (each process's main thread here), which a busy machine stretches while
 * the thread waits for a core, and it misses the process's other threads (GC helpers, the libuv pool,
 * the compiler): rows use the profile for *shares* and scale them to the process's CPU from /proc
 * (bench/pipeline/Profiling.ts).
 *
 * Frames are named by their function's position in the TypeScript source: `candor serve` runs the
 * sources through tsx, which hands V8 esbuild's output (one line per module, names kept), so a
 * frame's generated position is mapped back through the source map of the same transform, made
 * again here with tsx's options (the esbuild and source-map-js of the lockfile).
 */
import { transformSync } from "esbuild"
import { readdirSync, readFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { SourceMapConsumer } from "source-map-js"
import { classifyFrame, type FrameClass } from "./Features.js"

interface CallFrame {
  readonly functionName: string
  readonly url: string
  /** 0-based, in the code V8 ran. */
  readonly lineNumber: number
  readonly columnNumber: number
}

interface ProfileNode {
  readonly id: number
  readonly callFrame: CallFrame
  readonly children?: ReadonlyArray<number>
}

export interface CpuProfile {
  readonly nodes: ReadonlyArray<ProfileNode>
  readonly startTime: number
  readonly endTime: number
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
}

/** A window of the monotonic clock, µs (`monotonicUs()` readings). */
export interface Window {
  readonly fromUs: number
  readonly toUs: number
}

export interface ProfileSummary {
  /** Time sampled busy (not idle) within the window, ms. */
  readonly busyMs: number
  readonly byFeature: ReadonlyMap<string, number>
  /** Busy time by the frame that decided the feature (`file:line function`), ms. */
  readonly byDecidingFrame: ReadonlyMap<string, { readonly feature: string; readonly ms: number }>
  /** Busy time by innermost frame (self time), ms. */
  readonly bySelfFrame: ReadonlyMap<string, { readonly feature: string; readonly ms: number }>
}

/** The monotonic clock in µs, as V8 stamps profile samples. */
export const monotonicUs = (): number => Number(process.hrtime.bigint() / 1000n)

/** The repository's root, with a trailing slash: what frame URLs are made relative to. */
export const repositoryRoot = resolve(fileURLToPath(new URL("../..", import.meta.url))) + "/"

interface Source {
  readonly map: SourceMapConsumer
  readonly lines: ReadonlyArray<string>
}

const sources = new Map<string, Source | undefined>()

/** The transform tsx applies to a TypeScript module (its `transform` options, tsx 4), with its source map. */
const sourceOf = (path: string): Source | undefined => {
  if (sources.has(path)) return sources.get(path)
  let source: Source | undefined
  try {
    const text = readFileSync(path, "utf8")
    const { map } = transformSync(text, {
      target: `node${process.versions.node}`,
      loader: "ts",
      format: "esm",
      sourcemap: true,
      sourcesContent: false,
      minifyWhitespace: true,
      keepNames: true,
      sourcefile: path
    })
    source = { map: new SourceMapConsumer(JSON.parse(map)), lines: text.split("\n") }
  } catch {
    source = undefined
  }
  sources.set(path, source)
  return source
}

const DECLARATION = /^(?:export\s+)?(?:const|let|class|function\*?|async\s+function\*?)\s+([\w$]+)/

/** Where a function of a TypeScript module starts in its source (1-based line), and the top-level declaration holding it. */
const sourcePosition = (path: string, frame: CallFrame): { line: number; within: string | undefined } | undefined => {
  const source = sourceOf(path)
  if (source === undefined) return undefined
  const original = source.map.originalPositionFor({ line: frame.lineNumber + 1, column: frame.columnNumber })
  if (original.line === null) return undefined
  let within: string | undefined
  for (let i = original.line - 1; i >= 0 && within === undefined; i--) within = DECLARATION.exec(source.lines[i]!)?.[1]
  return { line: original.line, within }
}

const frameLabel = (frame: CallFrame, root: string): string => {
  const url = frame.url.startsWith("file://") ? decodeURIComponent(frame.url.slice(7)) : frame.url
  if (url === "") return `(native) ${frame.functionName}`
  const name = frame.functionName || "(anonymous)"
  if (url.startsWith(root) && url.endsWith(".ts") && !url.includes("/node_modules/")) {
    const position = sourcePosition(url, frame)
    if (position !== undefined)
      return `${url.slice(root.length)}:${position.line} ${name}${position.within !== undefined && position.within !== name ? ` in ${position.within}` : ""}`
  }
  const file = url.startsWith(root) ? url.slice(root.length) : url.replace(/^.*\/node_modules\//, "")
  return `${file}:${frame.lineNumber + 1} ${name}`
}

const add = (map: Map<string, number>, key: string, ms: number) => map.set(key, (map.get(key) ?? 0) + ms)
const addFrame = (map: Map<string, { feature: string; ms: number }>, key: string, feature: string, ms: number) => {
  const entry = map.get(key)
  if (entry === undefined) map.set(key, { feature, ms })
  else entry.ms += ms
}

/** The samples of `profiles` within `window` (all of them without one), attributed to features. */
export const summarise = (
  profiles: ReadonlyArray<CpuProfile>,
  window?: Window,
  root: string = repositoryRoot
): ProfileSummary => {
  const byFeature = new Map<string, number>()
  const byDecidingFrame = new Map<string, { feature: string; ms: number }>()
  const bySelfFrame = new Map<string, { feature: string; ms: number }>()
  let busyMs = 0
  for (const profile of profiles) {
    const nodes = new Map<number, ProfileNode>(profile.nodes.map((node) => [node.id, node]))
    const parent = new Map<number, number>()
    for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id)
    const classes = new Map<number, FrameClass>()
    const classOf = (id: number): FrameClass => {
      let cls = classes.get(id)
      if (cls === undefined) {
        const frame = nodes.get(id)!.callFrame
        cls = classifyFrame(frame.url, frame.functionName, root)
        classes.set(id, cls)
      }
      return cls
    }
    // Per leaf node: its feature and the frame that decided it (memoised: leaves repeat).
    const decided = new Map<number, { feature: string; frame: string } | undefined>()
    const decide = (leaf: number) => {
      if (decided.has(leaf)) return decided.get(leaf)
      let outcome: { feature: string; frame: string } | undefined
      const leafClass = classOf(leaf)
      if (leafClass.kind !== "idle" && leafClass.kind !== "root") {
        let fallback: { feature: string; frame: string } | undefined
        for (let id: number | undefined = leaf; id !== undefined; id = parent.get(id)) {
          const cls = classOf(id)
          if (cls.kind === "feature") {
            outcome = { feature: cls.feature, frame: frameLabel(nodes.get(id)!.callFrame, root) }
            break
          }
          if (cls.kind === "shared" && fallback === undefined)
            fallback = { feature: cls.fallback, frame: frameLabel(nodes.get(id)!.callFrame, root) }
        }
        outcome ??= fallback
      }
      decided.set(leaf, outcome)
      return outcome
    }
    const { samples, timeDeltas } = profile
    let at = profile.startTime
    const times: Array<number> = new Array(samples.length)
    for (let i = 0; i < samples.length; i++) times[i] = at += timeDeltas[i]!
    for (let i = 0; i < samples.length; i++) {
      const t = times[i]!
      if (window !== undefined && (t < window.fromUs || t >= window.toUs)) continue
      const next = i + 1 < samples.length ? times[i + 1]! : profile.endTime
      const ms = Math.max(0, next - t) / 1000
      const leaf = samples[i]!
      const outcome = decide(leaf)
      if (outcome === undefined) continue
      busyMs += ms
      add(byFeature, outcome.feature, ms)
      addFrame(byDecidingFrame, outcome.frame, outcome.feature, ms)
      addFrame(bySelfFrame, frameLabel(nodes.get(leaf)!.callFrame, root), outcome.feature, ms)
    }
  }
  return { busyMs, byFeature, byDecidingFrame, bySelfFrame }
}

/** Every `.cpuprofile` under `dir` (not recursive); none when it does not exist. */
export const readProfiles = (dir: string): ReadonlyArray<CpuProfile> => {
  let names: Array<string>
  try {
    names = readdirSync(dir)
  } catch {
    return []
  }
  return names
    .filter((name) => name.endsWith(".cpuprofile"))
    .map((name) => JSON.parse(readFileSync(join(dir, name), "utf8")) as CpuProfile)
}

/** The `n` largest entries of a frame map, largest first. */
export const topFrames = (
  map: ReadonlyMap<string, { readonly feature: string; readonly ms: number }>,
  n: number
): ReadonlyArray<readonly [string, { readonly feature: string; readonly ms: number }]> =>
  [...map].sort((a, b) => b[1].ms - a[1].ms).slice(0, n)
