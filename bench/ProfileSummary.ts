/**
 * `npx tsx bench/ProfileSummary.ts <path>... [--top N]`: `node --cpu-prof` profiles of Candor
 * summarised by feature (bench/pipeline/Features.ts maps source files to features;
 * bench/pipeline/Profile.ts attributes the samples), with the frames that cost the most. A path is
 * a `.cpuprofile`, a directory of them, or a row directory that `npm run bench:pipeline` kept with
 * BENCH_CPU_PROFILE=<dir> (`<dir>/<row>-<shape>`): then each role's profiles are cut to the row's
 * window and given in µs per checkpoint, scaled to the role's CPU, as the bench prints them.
 */
import { existsSync, readFileSync, statSync } from "node:fs"
import { join } from "node:path"
import { type CpuProfile, readProfiles, summarise, topFrames } from "./pipeline/Profile.js"
import { featuresOf } from "./pipeline/Profiling.js"

const args = process.argv.slice(2)
const topAt = args.indexOf("--top")
const top = topAt >= 0 ? Number(args[topAt + 1]) : 25
const paths = args.filter((arg, i) => !arg.startsWith("--") && (topAt < 0 || i !== topAt + 1))
if (paths.length === 0) {
  console.error("usage: npx tsx bench/ProfileSummary.ts <file.cpuprofile | dir | row dir>... [--top N]")
  process.exit(2)
}

const fmt = (n: number, digits = 0) => n.toFixed(digits)

for (const path of paths) {
  const windowFile = join(path, "window.json")
  if (statSync(path).isDirectory() && existsSync(windowFile)) {
    const { checkpoints, cpu, ...window } = JSON.parse(readFileSync(windowFile, "utf8")) as {
      fromUs: number
      toUs: number
      checkpoints: number
      cpu: Record<string, number>
    }
    const features = featuresOf(path, window, checkpoints, cpu)
    console.log(`${path}: ${checkpoints} checkpoints, ${((window.toUs - window.fromUs) / 1e6).toFixed(1)} s window\n`)
    for (const [role, r] of features.roles) {
      console.log(`\n${role}: ${fmt(r.cpuUs)} µs CPU per checkpoint (main threads sampled busy ${fmt(r.sampledUs)})\n`)
      console.log("| feature | µs / ckpt | share |\n|---|---:|---:|")
      for (const [feature, us] of [...r.byFeature].sort((a, b) => b[1] - a[1]))
        console.log(`| ${feature} | ${fmt(us)} | ${fmt((100 * us) / r.cpuUs, 1)}% |`)
    }
    console.log(`\nThe frames that decided the feature (everything beneath them), top ${top}:\n`)
    console.log("| process | frame | feature | µs / ckpt |\n|---|---|---|---:|")
    for (const [role, frame, feature, us] of features.frames.slice(0, top))
      console.log(`| ${role} | ${frame} | ${feature} | ${fmt(us, 1)} |`)
    continue
  }
  const profiles: Array<CpuProfile> = statSync(path).isDirectory()
    ? [...readProfiles(path)]
    : [JSON.parse(readFileSync(path, "utf8")) as CpuProfile]
  const summary = summarise(profiles)
  const pct = (ms: number) => fmt((100 * ms) / summary.busyMs, 1)
  console.log(`${path}: ${profiles.length} profile(s), ${fmt(summary.busyMs)} ms sampled busy\n`)
  console.log("| feature | ms | share |\n|---|---:|---:|")
  for (const [feature, ms] of [...summary.byFeature].sort((a, b) => b[1] - a[1]))
    console.log(`| ${feature} | ${fmt(ms)} | ${pct(ms)}% |`)
  console.log(`\nThe frames that decided the feature (everything beneath them), top ${top}:\n`)
  console.log("| frame | feature | ms | share |\n|---|---|---:|---:|")
  for (const [frame, { feature, ms }] of topFrames(summary.byDecidingFrame, top))
    console.log(`| ${frame} | ${feature} | ${fmt(ms)} | ${pct(ms)}% |`)
  console.log(`\nSelf time by innermost frame, top ${top}:\n`)
  console.log("| frame | feature | ms | share |\n|---|---|---:|---:|")
  for (const [frame, { feature, ms }] of topFrames(summary.bySelfFrame, top))
    console.log(`| ${frame} | ${feature} | ${fmt(ms)} | ${pct(ms)}% |`)
}
