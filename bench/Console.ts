/**
 * `npm run bench:console`: the console's live feed page (`#/feed`) in headless Chromium under
 * BENCH_CONSOLE_RATE (1,000) events per second for BENCH_CONSOLE_SECONDS (10), beside the same page
 * idle for as long, in one run (this shared machine is noisy: read the ratios).
 *
 * The real API over HTTP on 127.0.0.1 (the test harness of test/api/Support.ts: every handler, real
 * authentication, embedded PGlite, and the console's built assets at /console as `candor serve`
 * serves them). The page signs in with the organization Owner's token and reads
 * `GET /v1/stream?format=ndjson`. Events are published to the API's own event feed in this process,
 * as the event relay and the gateways would: the cheapest real source at that rate (every event
 * still goes through the feed's table, the stream handler's access check and the HTTP stream).
 *
 * Measured in the page, over each phase: requestAnimationFrame deltas (frames per second,
 * frame-time p50/p99/max), long tasks (PerformanceObserver 'longtask': count and total ms), the
 * largest number of `.feed-row` elements seen (sampled every 100 ms: bounded if the list is
 * virtualised), the events the page counts as received against those sent, and the JS heap used
 * after a forced garbage collection (CDP) at the end.
 */
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import { randomUUID } from "node:crypto"
import { existsSync } from "node:fs"
import { availableParallelism, loadavg } from "node:os"
import { fileURLToPath } from "node:url"
import type { Page } from "playwright-core"
import { build } from "vite"
import { EventFeed } from "../adapters/bus/EventFeed.js"
import { newEnvelope } from "../core/Events.js"
import type { WebhookEventType } from "../core/schema/WebhookEvents.js"
import * as Harness from "../test/api/Support.js"
import { ApiHarness } from "../test/api/Support.js"
import { launchBrowser } from "../test/support/Browser.js"

const RATE = Number(process.env.BENCH_CONSOLE_RATE ?? 1_000)
const SECONDS = Number(process.env.BENCH_CONSOLE_SECONDS ?? 10)
const TICK_MS = 10
/** How long the page may take to show every event once publishing stops. */
const CATCH_UP_MS = 30_000

/** A mix of the kinds the feed colours and filters, with the fields its summary shows. */
const KINDS: ReadonlyArray<{ readonly type: WebhookEventType; readonly data: Record<string, unknown> }> = [
  { type: "agent.paused", data: { reason: "bench", actor: "operator" } },
  { type: "verdict.boundary_violation", data: { verdict: "boundary_violation", checkpoint_id: "ic-bench" } },
  { type: "drift.detected", data: { severity: "medium" } },
  { type: "enforcement.blocked", data: { reason: "agent_paused" } },
  { type: "policy.violation", data: { tool: "shell", severity: "high" } },
  { type: "agent.resumed", data: { actor: "operator" } }
]

/**
 * The page's recorder, installed before the console's scripts. Plain JavaScript (the project
 * compiles without the DOM library): `__bench.start()` clears and records, `__bench.stop()` answers
 * the frame deltas, long tasks and the largest row count seen.
 */
const RECORDER = `
(() => {
  const state = { recording: false, frames: [], longTasks: [], maxRows: 0, last: undefined, sampler: undefined };
  const tick = (now) => {
    if (state.recording && state.last !== undefined) state.frames.push(now - state.last);
    state.last = now;
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
  new PerformanceObserver((list) => {
    if (state.recording) for (const entry of list.getEntries()) state.longTasks.push(entry.duration);
  }).observe({ type: "longtask" });
  globalThis.__bench = {
    start: () => {
      state.frames = []; state.longTasks = []; state.maxRows = 0; state.last = undefined; state.recording = true;
      state.sampler = setInterval(() => {
        state.maxRows = Math.max(state.maxRows, document.querySelectorAll(".feed-row").length);
      }, 100);
    },
    stop: () => {
      state.recording = false;
      clearInterval(state.sampler);
      state.maxRows = Math.max(state.maxRows, document.querySelectorAll(".feed-row").length);
      return { frames: state.frames, longTasks: state.longTasks, maxRows: state.maxRows };
    }
  };
})();
`

interface Recording {
  readonly frames: Array<number>
  readonly longTasks: Array<number>
  readonly maxRows: number
}

interface Row {
  readonly phase: string
  readonly sent: number
  readonly sentPerSecond: number
  readonly received: number
  /** From the last publish to the page counting every event, ms. */
  readonly catchUpMs: number | undefined
  readonly fps: number
  readonly p50: number
  readonly p99: number
  readonly max: number
  readonly longTasks: number
  readonly longTaskMs: number
  readonly maxRows: number
  readonly heapMb: number
}

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!

const sleepUntil = (at: number) =>
  Effect.promise(() => new Promise((resolve) => setTimeout(resolve, Math.max(0, at - Date.now()))))

/** The console's build, made once if this tree has none (as test/browser/Console.test.ts does). */
const ensureBuilt = Effect.promise(async () => {
  const config = fileURLToPath(new URL("../console/vite.config.ts", import.meta.url))
  if (!existsSync(fileURLToPath(new URL("../console/dist/index.html", import.meta.url))))
    await build({ configFile: config, logLevel: "silent" })
})

/** The page's "received since this page opened" counter. */
const receivedOf = async (page: Page) =>
  Number((await page.getByTestId("feed-received").innerText()).replace(/[^0-9]/g, ""))

const heapAfterGc = async (page: Page) => {
  const cdp = await page.context().newCDPSession(page)
  await cdp.send("HeapProfiler.collectGarbage")
  const { usedSize } = await cdp.send("Runtime.getHeapUsage")
  await cdp.detach()
  return usedSize / 1024 / 1024
}

const row = (
  phase: string,
  recording: Recording,
  heapMb: number,
  traffic: { sent: number; sentPerSecond: number; received: number; catchUpMs: number | undefined }
): Row => {
  const frames = [...recording.frames].sort((a, b) => a - b)
  const total = recording.frames.reduce((a, b) => a + b, 0)
  return {
    phase,
    ...traffic,
    fps: (frames.length * 1000) / total,
    p50: percentile(frames, 50),
    p99: percentile(frames, 99),
    max: frames.at(-1) ?? NaN,
    longTasks: recording.longTasks.length,
    longTaskMs: recording.longTasks.reduce((a, b) => a + b, 0),
    maxRows: recording.maxRows,
    heapMb
  }
}

const program = Effect.gen(function* () {
  console.log(
    `bench:console — feed page in headless Chromium, ${RATE} events/s for ${SECONDS} s vs idle; ${availableParallelism()} cores, load ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}`
  )
  const api = yield* ApiHarness
  const feed = yield* EventFeed
  const { orgAgent, orgId, owner } = api.fixtures
  const browser = yield* Effect.acquireRelease(
    Effect.promise(() => launchBrowser()),
    (b) => Effect.promise(() => b.close())
  )
  const page = yield* Effect.promise(async () => {
    const page = await browser.page(1280, 800)
    // Signed in as the console's token form would leave it (console/src/Session.ts).
    await page.addInitScript(`sessionStorage.setItem("candor.credential", ${JSON.stringify(owner.token)});`)
    await page.addInitScript(RECORDER)
    await page.goto(`${api.url}/console/#/feed`)
    await page.getByTestId("feed-state").filter({ hasText: "Live" }).waitFor({ timeout: 30_000 })
    return page
  })
  const start = () => Effect.promise(() => page.evaluate("globalThis.__bench.start()"))
  const stop = () => Effect.promise(() => page.evaluate("globalThis.__bench.stop()") as Promise<Recording>)

  // Idle: the page live, no events.
  yield* start()
  yield* sleepUntil(Date.now() + SECONDS * 1000)
  const idle = yield* stop()
  const idleRow = row("idle (no events)", idle, yield* Effect.promise(() => heapAfterGc(page)), {
    sent: 0,
    sentPerSecond: 0,
    received: yield* Effect.promise(() => receivedOf(page)),
    catchUpMs: undefined
  })

  // Load: RATE events per second into the feed the stream reads.
  const total = RATE * SECONDS
  const perTick = Math.max(1, Math.round((RATE * TICK_MS) / 1000))
  yield* start()
  const began = Date.now()
  let sent = 0
  const inFlight: Array<Fiber.RuntimeFiber<void, unknown>> = []
  for (let tick = 0; sent < total; tick++) {
    yield* sleepUntil(began + tick * TICK_MS)
    const batch = Array.from({ length: Math.min(perTick, total - sent) }, (_, i) => {
      const kind = KINDS[(sent + i) % KINDS.length]!
      return newEnvelope({
        type: kind.type,
        source: randomUUID(),
        org_id: orgId,
        agent_id: orgAgent,
        created_at: new Date(),
        data: kind.data
      })
    })
    // Not awaited before the next tick: many publishers at once, as gateways are; the feed's writer
    // commits what has queued up together.
    inFlight.push(yield* Effect.fork(Effect.forEach(batch, feed.publish, { concurrency: perTick, discard: true })))
    sent += batch.length
  }
  yield* Fiber.joinAll(inFlight)
  const published = Date.now()
  const load = yield* stop()
  const caughtUp = yield* Effect.promise(() =>
    page
      .waitForFunction(
        `Number(document.querySelector('[data-testid="feed-received"]')?.textContent?.replace(/\\D/g, "")) >= ${total}`,
        undefined,
        { timeout: CATCH_UP_MS, polling: 50 }
      )
      .then(
        () => Date.now() - published,
        () => undefined
      )
  )
  const loadRow = row(
    `${RATE.toLocaleString("en-US")} events/s`,
    load,
    yield* Effect.promise(() => heapAfterGc(page)),
    {
      sent,
      sentPerSecond: Math.round(sent / ((published - began) / 1000)),
      received: yield* Effect.promise(() => receivedOf(page)),
      catchUpMs: caughtUp
    }
  )

  const ratio = (a: number, b: number) => (Number.isFinite(a / b) ? `${(a / b).toFixed(2)}×` : "")
  const fmt = (n: number) => n.toFixed(1)
  console.log("")
  console.log(
    "| phase | sent (per s) | received | caught up after | fps | frame p50 ms | frame p99 ms | frame max ms | long tasks (ms) | max DOM rows | JS heap after GC |"
  )
  console.log("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
  for (const r of [idleRow, loadRow])
    console.log(
      `| ${r.phase} | ${r.sent.toLocaleString("en-US")} (${r.sentPerSecond}) | ${r.received.toLocaleString("en-US")} | ${
        r.catchUpMs === undefined ? (r.sent === 0 ? "—" : "NOT within 30 s") : `${r.catchUpMs} ms`
      } | ${fmt(r.fps)} | ${fmt(r.p50)} | ${fmt(r.p99)} | ${fmt(r.max)} | ${r.longTasks} (${Math.round(r.longTaskMs)}) | ${r.maxRows} | ${fmt(r.heapMb)} MB |`
    )
  console.log(
    `| load / idle | | | | ${ratio(loadRow.fps, idleRow.fps)} | ${ratio(loadRow.p50, idleRow.p50)} | ${ratio(loadRow.p99, idleRow.p99)} | ${ratio(loadRow.max, idleRow.max)} | | ${ratio(loadRow.maxRows, Math.max(1, idleRow.maxRows))} | ${ratio(loadRow.heapMb, idleRow.heapMb)} |`
  )
  console.log(
    `\nevents: published to the API's event feed in-process (embedded PGlite table), read by the page over GET /v1/stream?format=ndjson; missing: ${sent - loadRow.received}`
  )
}).pipe(Effect.scoped)

// Built before the harness starts: the console route loads the assets when its layer is made.
Effect.runPromise(
  ensureBuilt.pipe(
    Effect.zipRight(program.pipe(Effect.provide(Harness.layer()))),
    Effect.provide(Logger.minimumLogLevel(LogLevel.Warning))
  )
).then(
  () => process.exit(0),
  (error) => {
    console.error(error)
    process.exit(1)
  }
)
