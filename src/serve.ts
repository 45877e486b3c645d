/**
 * `candor serve`: the layers one process runs, each behind the roles that select it. The HTTP server
 * on HOST:PORT (health, later the API), the gateway on GATEWAY_PORT, and the workers (partition
 * consumers, agent actors, outbox relays). Bus and agent state are shared by all roles of one
 * process: in-process on the embedded default, NATS JetStream and KV when NATS_URL is set.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as HttpLayerRouter from "@effect/platform/HttpLayerRouter"
import * as HttpServer from "@effect/platform/HttpServer"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { createServer } from "node:http"
import { resolve } from "node:path"
import { layerFromSpec } from "../adapters/analysis/layer.js"
import { Bus } from "../adapters/bus/Bus.js"
import * as KvAgentState from "../adapters/bus/KvAgentState.js"
import { NatsConnection } from "../adapters/bus/NatsConnection.js"
import { AgentState } from "../adapters/gateway/AgentState.js"
import * as SigningKeys from "../adapters/keys/SigningKeys.js"
import * as StoreLive from "../adapters/store/StoreLive.js"
import { defaultWorkerId, PartitionOwnership } from "../streams/PartitionOwnership.js"
import { runWorkers } from "../streams/PartitionWorkers.js"
import * as GatewayInspector from "../adapters/gateway/GatewayInspector.js"
import { ProviderAdapters } from "../adapters/gateway/ProviderAdapters.js"
import { providerAdapters } from "../adapters/providers/registry.js"
import { CandorConfig } from "./config.js"
import * as Gateway from "./gateway/server.js"
import { HealthRoutes } from "./http/health.js"
import { NotFoundLive } from "./http/not-found.js"

/** What one process can be; `all` is every role at once (the embedded default). */
export const roles = ["gateway", "api", "worker", "prover"] as const
export type Role = (typeof roles)[number]
export const roleChoices = ["all", ...roles] as const
export type RoleChoice = (typeof roleChoices)[number]

export const selectRoles = (choice: RoleChoice): ReadonlyArray<Role> => (choice === "all" ? roles : [choice])

/** Creates CANDOR_DATA_DIR (and its parents) before anything wants to write there. */
const DataDirLive = Layer.effectDiscard(Effect.gen(function*() {
  const { dataDir } = yield* CandorConfig
  const fs = yield* FileSystem.FileSystem
  yield* fs.makeDirectory(dataDir, { recursive: true })
}))

/** The HTTP server on HOST:PORT; it also provides `HttpServer`, so callers can read the bound address. */
const HttpLive = Layer.unwrapEffect(Effect.map(CandorConfig, ({ host, port }) =>
  HttpLayerRouter.serve(Layer.mergeAll(HealthRoutes, NotFoundLive), { disableListenLog: true }).pipe(
    Layer.provideMerge(NodeHttpServer.layer(createServer, { host, port }))
  )
))

/** One structured line once the server is bound (the port may be ephemeral), one when stopping. */
const announce = (selected: ReadonlyArray<Role>) =>
  Layer.scopedDiscard(Effect.gen(function*() {
    const { dataDir } = yield* CandorConfig
    const { address } = yield* HttpServer.HttpServer
    yield* Effect.log("listening").pipe(Effect.annotateLogs({
      url: HttpServer.formatAddress(address),
      roles: selected,
      dataDir: resolve(dataDir)
    }))
    yield* Effect.addFinalizer(() => Effect.log("shutting down"))
  }))

/** The judge chosen by ANALYSIS_MODEL; a bad spec or a missing key stops startup with a clear message. */
const AnalysisLive = Layer.unwrapEffect(
  Effect.map(CandorConfig, ({ analysisApiKey, analysisBaseUrl, analysisModel }) =>
    layerFromSpec(analysisModel, {
      apiKey: Option.getOrUndefined(analysisApiKey),
      baseUrl: Option.getOrUndefined(analysisBaseUrl)
    })
  )
)

/** The LLM gateway on HOST:GATEWAY_PORT, inspecting every exchange; publishes to the shared bus. */
const GatewayLive = Gateway.layer().pipe(
  Layer.provide(GatewayInspector.layer()),
  Layer.provide(Layer.mergeAll(Layer.succeed(ProviderAdapters, providerAdapters), AnalysisLive))
)

/** How long a worker's partition lease outlives its last renewal. */
const LEASE_TTL_MS = 15_000

/**
 * Bus, agent state and partition ownership: in-process and owning every partition on the embedded
 * default; on NATS (one connection) with leases shared among workers otherwise. A process without
 * the worker role owns no partition.
 */
const MessagingLive = (withWorkers: boolean) =>
  Layer.unwrapEffect(Effect.map(CandorConfig, ({ natsPrefix: prefix, natsUrl, partitions, workerId }) => {
    const worker = Option.getOrElse(workerId, defaultWorkerId)
    if (Option.isNone(natsUrl)) {
      return Layer.mergeAll(
        Bus.layerMemoryWith({ prefix, partitions }),
        AgentState.layerMemory,
        PartitionOwnership.layerAll(withWorkers ? partitions : 0, worker)
      )
    }
    return Layer.mergeAll(
      Bus.layerJetStream({ prefix, partitions }),
      KvAgentState.layer({ prefix }),
      withWorkers
        ? PartitionOwnership.layerLease({ partitions, workerId: worker, ttlMs: LEASE_TTL_MS, prefix })
        : PartitionOwnership.layerAll(0, worker)
    ).pipe(Layer.provide(NatsConnection.layer(natsUrl.value, { name: `candor-${worker}` })))
  }))

/** The agent actors: the store (PostgreSQL or PGlite, migrated at start), the signing key, the consumers. */
const WorkersLive = Layer.unwrapEffect(Effect.map(CandorConfig, (config) =>
  Layer.scopedDiscard(runWorkers({ logOrigin: config.logOrigin, subjectPrefix: config.natsPrefix })).pipe(
    Layer.provide(StoreLive.layer({ databaseUrl: config.databaseUrl, dataDir: config.dataDir })),
    Layer.provide(SigningKeys.layer({ signingKey: config.signingKey, dataDir: config.dataDir }))
  )
))

/** Everything `candor serve` runs, until interrupted (SIGINT/SIGTERM through NodeRuntime.runMain). */
export const ServeLive = (selected: ReadonlyArray<Role>) =>
  announce(selected).pipe(
    Layer.provideMerge(HttpLive),
    Layer.merge(selected.includes("gateway") ? Layer.discard(GatewayLive) : Layer.empty),
    Layer.merge(selected.includes("worker") ? WorkersLive : Layer.empty),
    Layer.provide(MessagingLive(selected.includes("worker"))),
    Layer.provide(DataDirLive)
  )
