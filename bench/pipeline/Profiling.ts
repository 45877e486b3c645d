/**
 * CPU by feature for a row: where its profiled processes write their `--cpu-prof` profiles (one
 * directory per row and shape, a subdirectory per role: `worker`, `gateway`, `api`), and, once the
 * row's processes have stopped and written them, the summary of the measured window in µs per
 * checkpoint (bench/pipeline/Profile.ts, bench/pipeline/Features.ts).
 *
 * Profiles go to a temporary directory removed afterwards, or are kept under BENCH_CPU_PROFILE=<dir>
 * (`<dir>/<row>-<shape>/<role>/*.cpuprofile`, with the row's window, checkpoints and CPU by process in
 * `<dir>/<row>-<shape>/window.json`; bench/ProfileSummary.ts reads them).
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { CpuShare } from "./Load.js"
import { readProfiles, summarise, type Window } from "./Profile.js"
import type { Shape } from "./Shape.js"
import { shapeSettings } from "./Shape.js"
import { settings } from "./Settings.js"

/**
 * The features of one profiled role, µs per checkpoint: the profile's shares of the sampled time,
 * scaled to the role's CPU from /proc (all its threads; bench/pipeline/Profile.ts says why).
 */
export interface RoleFeatures {
  /** The role's processes' CPU (/proc), what the features add up to. */
  readonly cpuUs: number
  /** Wall time its main threads were sampled busy: above `cpuUs` when the machine kept them waiting for a core. */
  readonly sampledUs: number
  readonly byFeature: ReadonlyMap<string, number>
}

export interface FeatureBreakdown {
  /** By role (`worker`, `gateway`, `api`: the directory its processes wrote to). */
  readonly roles: ReadonlyMap<string, RoleFeatures>
  /** The frames that decided the most time, across roles: `[role, frame, feature, µs per checkpoint]`. */
  readonly frames: ReadonlyArray<readonly [string, string, string, number]>
}

/** The directory of a row's profiles, or undefined when profiling is off; removed at the end unless kept. */
export const profileDir = (row: string, shape: Shape): Effect.Effect<string | undefined, never, Scope.Scope> => {
  if (!shapeSettings.profile) return Effect.succeed(undefined)
  const kept = settings.cpuProfileDir
  if (kept !== undefined)
    return Effect.sync(() => {
      const dir = join(kept, `${row}-${shape}`)
      mkdirSync(dir, { recursive: true })
      return dir
    })
  return Effect.acquireRelease(
    Effect.sync(() => mkdtempSync(join(tmpdir(), `candor-prof-${row}-${shape}-`))),
    (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
  )
}

/** Which process of a row's CPU (µs per checkpoint) a role's profiles come from. */
export const roleCpu = (role: string, cpu: CpuShare): number | undefined =>
  role === "worker" ? (cpu.worker ?? cpu.workers) : cpu[role]

/** The window's samples of every role under `dir`, in µs per checkpoint (the role's CPU in `cpu`). */
export const featuresOf = (dir: string, window: Window, checkpoints: number, cpu: CpuShare): FeatureBreakdown => {
  const roles = new Map<string, RoleFeatures>()
  const frames: Array<readonly [string, string, string, number]> = []
  const perCheckpoint = (ms: number) => (ms * 1000) / Math.max(1, checkpoints)
  let entries: Array<string> = []
  try {
    entries = readdirSync(dir)
  } catch {
    // nothing written
  }
  for (const role of entries.sort()) {
    if (role.endsWith(".json")) continue
    const profiles = readProfiles(join(dir, role))
    if (profiles.length === 0) continue
    const summary = summarise(profiles, window)
    const cpuUs = roleCpu(role, cpu) ?? perCheckpoint(summary.busyMs)
    // µs per checkpoint of CPU for `ms` of sampled time.
    const scaled = (ms: number) => (summary.busyMs === 0 ? 0 : (cpuUs * ms) / summary.busyMs)
    roles.set(role, {
      cpuUs,
      sampledUs: perCheckpoint(summary.busyMs),
      byFeature: new Map([...summary.byFeature].map(([feature, ms]) => [feature, scaled(ms)]))
    })
    for (const [frame, { feature, ms }] of summary.byDecidingFrame) frames.push([role, frame, feature, scaled(ms)])
  }
  frames.sort((a, b) => b[3] - a[3])
  return { roles, frames: frames.slice(0, 40) }
}

/**
 * Runs a row with a profile directory of its own, and once its scope has closed (its processes
 * stopped, their profiles written) adds the CPU by feature over the row's window.
 */
export const profiled = <
  A extends { readonly window: Window; readonly checkpoints: number; readonly cpu: CpuShare },
  E,
  R
>(
  row: string,
  shape: Shape,
  run: (dir: string | undefined) => Effect.Effect<A, E, R | Scope.Scope>
): Effect.Effect<A & { readonly features: FeatureBreakdown | undefined }, E, Exclude<R, Scope.Scope>> =>
  Effect.scoped(
    Effect.gen(function* () {
      const dir = yield* profileDir(row, shape)
      const result = yield* Effect.scoped(run(dir))
      // Kept profiles carry their window, for bench/ProfileSummary.ts.
      if (dir !== undefined && settings.cpuProfileDir !== undefined)
        writeFileSync(
          join(dir, "window.json"),
          JSON.stringify({ ...result.window, checkpoints: result.checkpoints, cpu: result.cpu })
        )
      return {
        ...result,
        features: dir === undefined ? undefined : featuresOf(dir, result.window, result.checkpoints, result.cpu)
      }
    })
  ) as Effect.Effect<A & { readonly features: FeatureBreakdown | undefined }, E, Exclude<R, Scope.Scope>>
