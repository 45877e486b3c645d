/**
 * `npm run bench:analysis`: how many responses a gateway analyses per second with a slow LLM judge,
 * against the bound ANALYSIS_CONCURRENCY / judge latency.
 *
 * Processes, on 127.0.0.1: this one runs the gateway as `candor serve` builds it (GatewayServer,
 * GatewayInspector, the real provider adapters and LLM judge, the in-process bus) and counts the
 * events it publishes; bench/analysis/Peers.ts runs the fake LLM judge that
 * `ANALYSIS_MODEL=anthropic:bench-judge` with `ANALYSIS_BASE_URL` point at (a clear verdict after
 * BENCH_JUDGE_LATENCY_MS, default 800), the fake provider (reasoning in every answer) and AGENTS
 * agents (distinct `x-candor-agent`) sending between them 1.2× the bound (at least 128 responses/s),
 * so the judge slots stay busy. Analysed responses are the events published over BENCH_WINDOW_S
 * seconds after BENCH_WARMUP_S seconds of warm-up, one gateway per row.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Scope from "effect/Scope"
import { type ChildProcess, fork } from "node:child_process"
import { once } from "node:events"
import { fileURLToPath } from "node:url"
import { layerFromSpec } from "../adapters/analysis/AnalysisSpec.js"
import { AgentState } from "../adapters/bus/AgentState.js"
import { Bus } from "../adapters/bus/Bus.js"
import * as GatewayInspector from "../adapters/gateway/GatewayInspector.js"
import * as Gateway from "../adapters/gateway/GatewayServer.js"
import { ProviderAdapters } from "../adapters/gateway/ProviderAdapters.js"
import { providerAdapters } from "../adapters/providers/Registry.js"

const JUDGE_LATENCY_MS = Number(process.env.BENCH_JUDGE_LATENCY_MS ?? 800)
const AGENTS = Number(process.env.BENCH_AGENTS ?? 256)
const WARMUP_S = Number(process.env.BENCH_WARMUP_S ?? 2)
const WINDOW_S = Number(process.env.BENCH_WINDOW_S ?? 8)
const SETTINGS = (process.env.BENCH_CONCURRENCY ?? "1,32,64,256").split(",").map(Number)

interface Row {
  readonly concurrency: number
  readonly offered: number
  readonly bound: number
  readonly measured: number
  readonly sent: number
  readonly judgeCalls: number
}

const ask = async <A>(peers: ChildProcess, message?: unknown): Promise<A> => {
  if (message !== undefined) peers.send(message as object)
  const [answer] = await once(peers, "message")
  return answer as A
}

const measure = async (
  peers: ChildProcess,
  concurrency: number,
  judgeUrl: string,
  providerUrl: string
): Promise<Row> => {
  const scope = await Effect.runPromise(Scope.make())
  const judge = layerFromSpec("anthropic:bench-judge", {
    apiKey: "bench-key",
    baseUrl: judgeUrl,
    connections: concurrency
  })
  const context = await Effect.runPromise(
    Layer.buildWithScope(
      Gateway.layer({
        port: 0,
        host: "127.0.0.1",
        upstreams: { anthropic: providerUrl, openai: providerUrl, gemini: providerUrl }
      }).pipe(
        Layer.provideMerge(GatewayInspector.layer({ concurrency, queueCapacity: 16_384 })),
        Layer.provideMerge(
          Layer.mergeAll(
            AgentState.layerMemory,
            Bus.layerMemory,
            Layer.succeed(ProviderAdapters, providerAdapters),
            judge
          )
        ),
        Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
      ),
      scope
    )
  )
  const published: Array<number> = []
  const subscription = await Effect.runPromise(
    Scope.extend(Context.get(context, Bus).subscribe("candor.events."), scope)
  )
  const counter = Effect.runFork(
    Effect.forever(Effect.map(subscription.take, () => void published.push(performance.now())))
  )

  const bound = concurrency / (JUDGE_LATENCY_MS / 1000)
  const offered = Math.max(1.2 * bound, 128)
  const started = performance.now()
  const { judgeCalls, sent } = await ask<{ sent: number; judgeCalls: number }>(peers, {
    gatewayUrl: Context.get(context, Gateway.GatewayServer).url,
    agents: AGENTS,
    periodMs: (AGENTS / offered) * 1000,
    durationMs: (WARMUP_S + WINDOW_S) * 1000
  })
  const from = started + WARMUP_S * 1000
  const measured = published.filter((t) => t >= from && t < from + WINDOW_S * 1000).length / WINDOW_S
  await Effect.runPromise(Fiber.interrupt(counter))
  await Effect.runPromise(Scope.close(scope, Exit.void))
  return { concurrency, offered, bound, measured, sent, judgeCalls }
}

const main = async () => {
  const peers = fork(fileURLToPath(new URL("./analysis/Peers.ts", import.meta.url)), [String(JUDGE_LATENCY_MS)], {
    execArgv: ["--import", "tsx"]
  })
  process.on("exit", () => peers.kill())
  const { judgeUrl, providerUrl } = await ask<{ judgeUrl: string; providerUrl: string }>(peers)
  console.log(
    `judge latency ${JUDGE_LATENCY_MS} ms, ${AGENTS} agents, ${WARMUP_S} s warm-up, ${WINDOW_S} s measured per row`
  )
  const rows: Array<Row> = []
  for (const concurrency of SETTINGS) {
    const row = await measure(peers, concurrency, judgeUrl, providerUrl)
    rows.push(row)
    console.log(
      `  concurrency ${concurrency}: ${row.measured.toFixed(1)}/s analysed (bound ${row.bound.toFixed(1)}/s); ` +
        `${row.sent} responses sent, ${row.judgeCalls} judge calls`
    )
  }
  peers.disconnect()
  console.log("")
  console.log(
    "| ANALYSIS_CONCURRENCY | offered (responses/s) | bound (concurrency / latency) | analysed (events/s) | ratio |"
  )
  console.log("|---:|---:|---:|---:|---:|")
  for (const row of rows) {
    const ratio = (100 * row.measured) / row.bound
    console.log(
      `| ${row.concurrency} | ${row.offered.toFixed(0)} | ${row.bound.toFixed(1)} | ${row.measured.toFixed(1)} | ${ratio.toFixed(0)}% |`
    )
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error)
    process.exit(1)
  }
)
