/**
 * The gateway of `npm run bench:mcp`, on a thread of its own (bench/McpGateway.ts): the embedded
 * gateway's MCP proxy (in-process bus and agent state, the `rules` judge), with one agent, its token
 * and one registered server, as a deployment runs it beside (not inside) the agent and the server.
 * The bus's events are consumed and acked as the workers do: left unconsumed, the in-memory bus
 * would keep every one, and the thread's garbage collection would grow with them. Posts `{ url }`
 * once listening; stops when told.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { parentPort, workerData } from "node:worker_threads"
import * as Rules from "../adapters/analysis/Rules.js"
import { hashSecret } from "../adapters/auth/Secrets.js"
import { AgentState } from "../adapters/bus/AgentState.js"
import { ApprovalDesk } from "../adapters/bus/ApprovalDesk.js"
import { Bus } from "../adapters/bus/Bus.js"
import * as GatewayServer from "../adapters/gateway/GatewayServer.js"
import { Inspector } from "../adapters/gateway/Inspector.js"
import * as McpProxy from "../adapters/mcp/McpProxy.js"

export interface GatewayThreadData {
  readonly mode: "enforce" | "observe"
  readonly serverUrl: string
  readonly serverId: string
  readonly token: string
}

const { mode, serverUrl, serverId, token } = workerData as GatewayThreadData
const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(effect)

const main = async () => {
  const scope = await run(Scope.make())
  const state = Context.get(await run(Layer.buildWithScope(AgentState.layerMemory, scope)), AgentState)
  const bus = await run(Layer.buildWithScope(Bus.layerMemory, scope))
  const events = Context.get(bus, Bus)
  for (let partition = 0; partition < events.partitions; partition++)
    await run(
      Effect.forkIn(
        Stream.runForEach(events.consumePartition(partition), (delivery) => delivery.ack),
        scope
      )
    )
  const gateway = GatewayServer.layer({
    port: 0,
    host: "127.0.0.1",
    upstreams: { anthropic: "http://127.0.0.1:9", openai: "http://127.0.0.1:9", gemini: "http://127.0.0.1:9" },
    tuning: { shutdownGraceMs: 100 }
  }).pipe(
    Layer.provide(McpProxy.layer({ allowPrivate: true }).pipe(Layer.provide(Rules.layer()))),
    Layer.provide(Inspector.layerNoop),
    Layer.provide(Layer.succeedContext(Context.merge(bus, Context.make(AgentState, state)))),
    // No policy holds calls for approval here.
    Layer.provide(ApprovalDesk.layerNone)
  )
  const url = Context.get(await run(Layer.buildWithScope(gateway, scope)), GatewayServer.GatewayServer).url
  const agentId = "agt-bench"
  const orgId = "org-bench"
  await run(state.update(agentId, { mode, orgId }))
  await run(state.updateKey(hashSecret(token), { mcpToken: { token_id: "t1", agent_id: agentId, org_id: orgId } }))
  await run(state.updateKey(serverId, { mcpServer: { org_id: orgId, url: serverUrl } }))
  parentPort!.once("message", () => void run(Scope.close(scope, Exit.void)).then(() => process.exit(0)))
  parentPort!.postMessage({ url })
}

main().catch((error: unknown) => parentPort!.postMessage({ error: String(error) }))
