/**
 * The backend of `npm run bench:mcp` (bench/McpGateway.ts), on a thread of its own as the embedded
 * default runs it (src/Serve.ts): the in-process bus and the agent state, served to the gateway
 * thread over the thread bridge (adapters/bus/ThreadBridgeBackend.ts). It holds the bench's agent,
 * its token and its server, which the bridge pushes to the gateway's copy; the bus's events are
 * consumed and acked as the workers do (no store here: what is measured is the gateway's hop).
 * Posts `{ ready: true }` once the gateway's copy has the agent; stops when told.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { type MessagePort, parentPort, workerData } from "node:worker_threads"
import { hashSecret } from "../adapters/auth/Secrets.js"
import { AgentState } from "../adapters/bus/AgentState.js"
import { ApprovalDesk } from "../adapters/bus/ApprovalDesk.js"
import { Bus } from "../adapters/bus/Bus.js"
import { EventFeed } from "../adapters/bus/EventFeed.js"
import * as ThreadBridgeBackend from "../adapters/bus/ThreadBridgeBackend.js"

export interface BackendThreadData {
  /** The agent's enforcement mode: `enforce` holds each answer until judged. */
  readonly mode: "enforce" | "observe"
  /** The registered MCP server, its id and URL, and the agent's token. */
  readonly serverId: string
  readonly serverUrl: string
  readonly token: string
  /** The backend's end of the bridge; the gateway thread holds the other. */
  readonly port: MessagePort
}

const { mode, port, serverId, serverUrl, token } = workerData as BackendThreadData
const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(effect)

const main = async () => {
  const scope = await run(Scope.make())
  const messaging = Layer.mergeAll(Bus.layerMemory, ThreadBridgeBackend.agentStateLayer(port))
  const backend = ThreadBridgeBackend.serveLayer(port).pipe(
    Layer.provideMerge(messaging),
    // No catalogue events are published in the bench (every result passes); no policy holds calls.
    Layer.provideMerge(Layer.merge(EventFeed.layerDetached, ApprovalDesk.layerNone))
  )
  const context = await run(Layer.buildWithScope(backend, scope))
  const events = Context.get(context, Bus)
  const state = Context.get(context, AgentState)
  for (let partition = 0; partition < events.partitions; partition++)
    await run(
      Effect.forkIn(
        Stream.runForEach(events.consumePartition(partition), (delivery) => delivery.ack),
        scope
      )
    )
  const agentId = "agt-bench"
  const orgId = "org-bench"
  // Each resolves once the gateway thread's copy has applied it.
  await run(state.update(agentId, { mode, orgId }))
  await run(state.updateKey(hashSecret(token), { mcpToken: { token_id: "t1", agent_id: agentId, org_id: orgId } }))
  await run(state.updateKey(serverId, { mcpServer: { org_id: orgId, url: serverUrl } }))
  parentPort!.once("message", () => void run(Scope.close(scope, Exit.void)).then(() => process.exit(0)))
  parentPort!.postMessage({ ready: true })
}

main().catch((error: unknown) => parentPort!.postMessage({ error: String(error) }))
