/**
 * The gateway of `npm run bench:mcp` (bench/McpGateway.ts), on a thread of its own as the embedded
 * default runs it (src/Serve.ts): the MCP proxy with the `rules` judge, whose bus, agent state and
 * approval desk are the thread bridge to the backend thread (adapters/bus/ThreadBridgeGateway.ts,
 * bench/McpBackendThread.ts), as a deployment runs it beside (not inside) the agent and the server.
 * Posts `{ url }` once listening; stops when told.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import { type MessagePort, parentPort, workerData } from "node:worker_threads"
import * as Rules from "../adapters/analysis/Rules.js"
import { busOptions } from "../adapters/bus/BusOptions.js"
import * as ThreadBridgeGateway from "../adapters/bus/ThreadBridgeGateway.js"
import * as GatewayServer from "../adapters/gateway/GatewayServer.js"
import { Inspector } from "../adapters/gateway/Inspector.js"
import * as McpProxy from "../adapters/mcp/McpProxy.js"

export interface GatewayThreadData {
  /** The gateway's end of the bridge; the backend thread holds the other. */
  readonly port: MessagePort
}

const { port } = workerData as GatewayThreadData
const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(effect)

const main = async () => {
  const scope = await run(Scope.make())
  const gateway = GatewayServer.layer({
    port: 0,
    host: "127.0.0.1",
    upstreams: { anthropic: "http://127.0.0.1:9", openai: "http://127.0.0.1:9", gemini: "http://127.0.0.1:9" },
    tuning: { shutdownGraceMs: 100 }
  }).pipe(
    Layer.provide(McpProxy.layer({ allowPrivate: true }).pipe(Layer.provide(Rules.layer()))),
    Layer.provide(Inspector.layerNoop),
    Layer.provide(ThreadBridgeGateway.layer({ port, partitions: busOptions().partitions }))
  )
  const url = Context.get(await run(Layer.buildWithScope(gateway, scope)), GatewayServer.GatewayServer).url
  parentPort!.once("message", () => void run(Scope.close(scope, Exit.void)).then(() => process.exit(0)))
  parentPort!.postMessage({ url })
}

main().catch((error: unknown) => parentPort!.postMessage({ error: String(error) }))
