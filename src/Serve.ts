/**
 * `candor serve`: the layers one process runs, each behind the roles that select it. The HTTP server
 * on HOST:PORT (health and metrics on every role, the management API on `api`), the gateway on
 * GATEWAY_PORT, and the workers (partition consumers, agent actors, outbox relays, the team reputation
 * refresh, witnessing when CANDOR_WITNESSES lists witnesses). Bus, agent state, store, signing key and key-encryption key are shared by all roles of one process: in-process on the embedded
 * default, NATS JetStream and KV when NATS_URL is set.
 *
 * The embedded default (every role, no NATS_URL) runs on two threads so that the gateway's response
 * path never waits behind attestation, signing, proving or PGlite: the gateway on the main thread,
 * everything else in a worker thread (`BackendLive`, started by src/BackendThread.ts), joined by the
 * thread bridge (adapters/bus/ThreadBridge*.ts) that carries the in-process bus, agent state and feed.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as HttpLayerRouter from "@effect/platform/HttpLayerRouter"
import * as HttpServer from "@effect/platform/HttpServer"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { createServer } from "node:http"
import { createServer as createHttpsServer } from "node:https"
import type { Server as TlsServer } from "node:tls"
import { resolve } from "node:path"
import { layerFromSpec } from "../adapters/analysis/AnalysisSpec.js"
import { Bus } from "../adapters/bus/Bus.js"
import type { BusError } from "../adapters/bus/BusError.js"
import { EventFeed } from "../adapters/bus/EventFeed.js"
import * as EventFeedJetStream from "../adapters/bus/EventFeedJetStream.js"
import * as EventFeedStore from "../adapters/bus/EventFeedStore.js"
import * as KvAgentState from "../adapters/bus/KvAgentState.js"
import { ApprovalSignal } from "../adapters/bus/ApprovalSignal.js"
import * as ApprovalSignalKv from "../adapters/bus/ApprovalSignalKv.js"
import { ApprovalDesk } from "../adapters/bus/ApprovalDesk.js"
import * as ApprovalDeskNats from "../adapters/bus/ApprovalDeskNats.js"
import * as ApprovalDeskLocal from "../services/ApprovalDeskLocal.js"
import { NatsConnection } from "../adapters/bus/NatsConnection.js"
import { AgentState } from "../adapters/bus/AgentState.js"
import * as ThreadBridgeBackend from "../adapters/bus/ThreadBridgeBackend.js"
import * as ThreadBridgeGateway from "../adapters/bus/ThreadBridgeGateway.js"
import type { MessagePort } from "node:worker_threads"
import { type ApiAddress, startBackend } from "./BackendThread.js"
import * as SecretKeys from "../adapters/keys/SecretKeys.js"
import * as SigningKeys from "../adapters/keys/SigningKeys.js"
import * as GovernanceLog from "../adapters/store/GovernanceLog.js"
import * as StoreDatabase from "../adapters/store/StoreDatabase.js"
import { WebhookNetwork } from "../adapters/webhooks/WebhookUrlGuard.js"
import { PolicyLimits } from "./api/handlers/PolicyLimits.js"
import * as PartitionLeases from "../adapters/bus/PartitionLeases.js"
import { defaultWorkerId, PartitionOwnership } from "../adapters/bus/PartitionOwnership.js"
import { runWorkers } from "../streams/PartitionWorkers.js"
import { defaultGroupCommitOptions, singleConnectionGroupCommitOptions } from "../streams/GroupCommit.js"
import * as ProverWorkers from "../streams/ProverWorkers.js"
import * as TeamReputationRefresh from "../streams/TeamReputationRefresh.js"
import * as ApprovalExpiry from "../streams/ApprovalExpiry.js"
import * as Witnessing from "../streams/Witnessing.js"
import { restoreAgentState } from "../streams/AgentStateRestore.js"
import type { ApprovalRepo } from "../adapters/store/ApprovalRepo.js"
import type { Repositories } from "../adapters/store/Repositories.js"
import type { Store } from "../adapters/store/Store.js"
import * as ChainAnchoring from "../streams/ChainAnchoring.js"
import * as AnchorChain from "../adapters/chain/AnchorChain.js"
import * as Prover from "../prover/Prover.js"
import * as GatewayInspector from "../adapters/gateway/GatewayInspector.js"
import { defaultUnknownKeyLimits } from "../adapters/gateway/UnknownKeys.js"
import { ProviderAdapters } from "../adapters/gateway/ProviderAdapters.js"
import { providerAdapters } from "../adapters/providers/Registry.js"
import { AuthConfig } from "../adapters/auth/AuthConfig.js"
import * as IdentityTokens from "../adapters/auth/IdentityTokens.js"
import * as OperatorSignIn from "../adapters/auth/OperatorSignIn.js"
import { planRates } from "../adapters/auth/RateLimiter.js"
import { storeFamilies } from "../adapters/metrics/StoreGauges.js"
import * as ApiLive from "./api/ApiLive.js"
import * as ForecastNarrator from "../adapters/analysis/ForecastNarrator.js"
import { CandorConfig, tlsFiles } from "./Config.js"
import { ListenFailed, listenErrorCode } from "../adapters/http/ListenFailed.js"
import { loadTls, reloadOnSighup, serverTlsOptions } from "../adapters/http/Tls.js"
import { warnIfPlainHttp } from "./http/PlainHttpWarning.js"
import { startupStep } from "./StartupStep.js"
import { TracingLive } from "./Tracing.js"
import * as Gateway from "../adapters/gateway/GatewayServer.js"
import * as McpProxy from "../adapters/mcp/McpProxy.js"
import { McpGatewayUrl, McpNetwork } from "../adapters/mcp/McpNetwork.js"
import { HealthRoutes, Readiness, type ReadinessCheck } from "./http/Health.js"
import { metricsRoute, RequestMetricsLive } from "./http/Metrics.js"
import { NotFoundLive } from "./http/NotFound.js"
import { PublicRateLimitLive } from "./http/PublicRateLimit.js"

/** What one process can be; `all` is every role at once (the embedded default). */
export const roles = ["gateway", "api", "worker", "prover"] as const
export type Role = (typeof roles)[number]
export const roleChoices = ["all", ...roles] as const
export type RoleChoice = (typeof roleChoices)[number]

export const selectRoles = (choice: RoleChoice): ReadonlyArray<Role> => (choice === "all" ? roles : [choice])

/** Creates CANDOR_DATA_DIR (and its parents) before anything wants to write there. */
const DataDirLive = Layer.effectDiscard(
  Effect.gen(function* () {
    const { dataDir } = yield* CandorConfig
    const fs = yield* FileSystem.FileSystem
    yield* fs.makeDirectory(dataDir, { recursive: true })
  })
)

/**
 * The key-encryption key of stored secrets, one per process: the API seals webhook secrets, the
 * workers' webhook relay opens them at send time.
 */
const SecretKeysFromConfig = Layer.unwrapEffect(
  Effect.map(CandorConfig, (config) => SecretKeys.layer({ secretKey: config.secretKey, dataDir: config.dataDir }))
)

/**
 * The database (PostgreSQL or PGlite, migrated at start), one per process: the API and the workers
 * share it. With it, the store and every repository (adapters/store/Repositories.ts), provided here
 * once for every role of the process; no route, service or worker provides one of its own.
 */
const StoreFromConfig = Layer.unwrapEffect(
  Effect.map(CandorConfig, (config) =>
    startupStep("store", StoreDatabase.layer({ databaseUrl: config.databaseUrl, dataDir: config.dataDir }))
  )
).pipe(Layer.provideMerge(startupStep("secret keys", SecretKeysFromConfig)))

/** The governance logs, on the process's store and signing key (the API and the workers append). */
const GovernanceLogFromConfig = Layer.unwrapEffect(
  Effect.map(CandorConfig, (config) => GovernanceLog.layer({ logOrigin: config.logOrigin }))
)

/** The signing key, one per process (certificates of the workers, licenses checked by the API). */
const SigningKeysFromConfig = Layer.unwrapEffect(
  Effect.map(CandorConfig, (config) =>
    startupStep("signing key", SigningKeys.layer({ signingKey: config.signingKey, dataDir: config.dataDir }))
  )
)

const AuthConfigLive = Layer.effect(
  AuthConfig,
  Effect.map(CandorConfig, (config) => ({
    jwtSecret: config.authJwtSecret,
    jwksUrl: config.authJwksUrl,
    issuer: config.authJwtIssuer,
    audience: config.authJwtAudience,
    serviceRoleKey: config.serviceRoleKey
  }))
)

/** The management API's routes, on the shared store, agent state and signing key. */
const ApiRoutesLive = Layer.unwrapEffect(
  Effect.gen(function* () {
    const {
      analysisApiKey,
      analysisBaseUrl,
      analysisModel,
      apiKeysPerOrg,
      apiKeysPerUser,
      chainSendsPerHour,
      dataDir,
      enterpriseRateLimit
    } = yield* CandorConfig
    const rates = planRates(enterpriseRateLimit)
    // The forecast's narrative comes from the model ANALYSIS_MODEL names (none with `rules`).
    const narrator = ForecastNarrator.layerFromSpec(analysisModel, {
      apiKey: Option.getOrUndefined(analysisApiKey),
      baseUrl: Option.getOrUndefined(analysisBaseUrl)
    })
    const store = yield* Effect.context<SqlClient.SqlClient>()
    // On the embedded default's backend thread, the gateway thread's own series too.
    const gateway = yield* Effect.serviceOption(ThreadBridgeBackend.GatewayThreadMetrics)
    const gauges = Effect.provide(storeFamilies, store)
    return Layer.mergeAll(
      ApiLive.layer({
        planRates: rates,
        maxBodyBytes: ApiLive.DEFAULT_MAX_BODY_BYTES,
        apiKeyCaps: { perUser: apiKeysPerUser, perOrg: apiKeysPerOrg },
        chainSendsPerHour
      }).pipe(Layer.provide(narrator)),
      metricsRoute(
        Option.isSome(gateway) ? Effect.zipWith(gauges, gateway.value, (ours, its) => [...ours, ...its]) : gauges
      )
    ).pipe(Layer.provide(ApiLive.IdentityLive), Layer.provide(IdentityTokens.layer({ dataDir })))
  })
).pipe(Layer.provide(AuthConfigLive))

/** `/health/ready`'s checks: a database round trip (roles with a store) and the bus connection. */
const ReadinessLive = (withStore: boolean) =>
  Layer.effect(
    Readiness,
    Effect.gen(function* () {
      const checks: Array<ReadinessCheck> = [{ name: "bus", check: yield* BusHealth }]
      if (withStore) {
        const sql = yield* SqlClient.SqlClient
        checks.unshift({ name: "store", check: sql`select 1` })
      }
      return checks
    })
  )

/**
 * The node server behind HOST:PORT: `node:https` (TLS 1.2 minimum, reloaded on SIGHUP) when
 * TLS_CERT_FILE and TLS_KEY_FILE are set, `node:http` otherwise (with a warning when HOST is not
 * loopback). Same HTTP/1.1 defaults either way.
 */
const NodeServerLive = Layer.unwrapScoped(
  Effect.gen(function* () {
    const config = yield* CandorConfig
    const { host, port } = config
    const files = tlsFiles(config)
    yield* warnIfPlainHttp("api", host, files !== undefined)
    const listenFailed = Layer.catchAll((error: unknown) =>
      Layer.fail(new ListenFailed({ variable: "PORT", host, port, code: listenErrorCode(error) }))
    )
    if (files === undefined) return NodeHttpServer.layer(createServer, { host, port }).pipe(listenFailed)
    const server = createHttpsServer(serverTlsOptions(yield* loadTls(files)))
    return NodeHttpServer.layer(() => server, { host, port }).pipe(
      listenFailed,
      // Registered alongside the listen: a reload before the first connection is harmless.
      Layer.merge(Layer.scopedDiscard(reloadOnSighup(server as TlsServer, files, "api")))
    )
  })
)

/** Per-client limits of every route answering without credentials (SECURITY.md, "Unauthenticated routes"). */
const PublicRateLimitFromConfig = Layer.unwrapEffect(
  Effect.map(CandorConfig, ({ publicRateLimits, trustedProxies }) =>
    PublicRateLimitLive({ limits: publicRateLimits, trustedProxies })
  )
)

/**
 * The HTTP server on HOST:PORT; it also provides `HttpServer`, so callers can read the bound
 * address. Health and metrics on every role; the API when `withApi`.
 */
const HttpLive = (withApi: boolean, withStore: boolean) =>
  HttpLayerRouter.serve(
    Layer.mergeAll(
      HealthRoutes,
      NotFoundLive,
      RequestMetricsLive,
      PublicRateLimitFromConfig,
      withApi ? ApiRoutesLive : metricsRoute(Effect.succeed([]))
    ),
    { disableListenLog: true }
  ).pipe(Layer.provide(ReadinessLive(withStore)), Layer.provideMerge(startupStep("HTTP listener", NodeServerLive)))

/** HOST:PORT's server as the "listening" line names it. */
const apiAddress = Effect.gen(function* () {
  const config = yield* CandorConfig
  const { address } = yield* HttpServer.HttpServer
  const url = HttpServer.formatAddress(address)
  return {
    url: tlsFiles(config) === undefined ? url : url.replace(/^http:/, "https:"),
    port: address._tag === "TcpAddress" ? address.port : undefined
  } satisfies ApiAddress
})

/**
 * One structured line once the servers are bound, with the ports actually bound (PORT=0 and
 * GATEWAY_PORT=0 take any free one), one when stopping.
 */
const announceWith = <E, R>(selected: ReadonlyArray<Role>, api: Effect.Effect<ApiAddress, E, R>) =>
  Layer.scopedDiscard(
    Effect.gen(function* () {
      const { dataDir } = yield* CandorConfig
      const { port, signInUrl, url } = yield* api
      const gateway = yield* Effect.serviceOption(Gateway.GatewayServer)
      yield* Effect.log("listening").pipe(
        Effect.annotateLogs({
          url,
          ...(port === undefined ? {} : { port }),
          ...(Option.isSome(gateway) ? { gateway_url: gateway.value.url, gateway_port: gateway.value.port } : {}),
          roles: selected,
          dataDir: resolve(dataDir)
        })
      )
      // Printed once for the person at the terminal, on stderr: not a log line (logs are JSON on stdout
      // and may be shipped elsewhere), so the code never reaches a log store (docs/console.md).
      if (signInUrl !== undefined)
        yield* Effect.sync(() =>
          process.stderr.write(
            `\nCandor console: open ${signInUrl}\n(one-time sign-in link for this machine's operator, valid 15 minutes)\n\n`
          )
        )
      yield* Effect.addFinalizer(() => Effect.log("shutting down"))
    })
  )

const announce = (selected: ReadonlyArray<Role>) => announceWith(selected, apiAddress)

/** The judge chosen by ANALYSIS_MODEL; a bad spec or a missing key stops startup with a clear message. */
const AnalysisLive = Layer.unwrapEffect(
  Effect.map(
    CandorConfig,
    ({ analysisApiKey, analysisBaseUrl, analysisConcurrency, analysisModel, analysisTimeoutMs }) =>
      layerFromSpec(analysisModel, {
        apiKey: Option.getOrUndefined(analysisApiKey),
        baseUrl: Option.getOrUndefined(analysisBaseUrl),
        connections: analysisConcurrency,
        timeout: Duration.millis(analysisTimeoutMs)
      })
  )
)

/** The LLM gateway on HOST:GATEWAY_PORT, inspecting every exchange; publishes to the shared bus. */
const GatewayLive = Layer.unwrapEffect(
  Effect.map(CandorConfig, (config) => {
    const tls = tlsFiles(config)
    return Gateway.layer({
      port: config.gatewayPort,
      host: config.host,
      upstreams: { anthropic: config.anthropicBaseUrl, openai: config.openaiBaseUrl, gemini: config.geminiBaseUrl },
      tuning: {
        inFlight: {
          perCredential: config.gatewayInflightBytesPerCredential,
          perOrg: config.gatewayInflightBytesPerOrg,
          total: config.gatewayInflightBytes
        }
      },
      ...(tls === undefined ? {} : { tls })
    }).pipe(
      Layer.tap(() => warnIfPlainHttp("gateway", config.host, tls !== undefined)),
      Layer.provide(
        GatewayInspector.layer({
          subjectPrefix: config.natsPrefix,
          concurrency: config.analysisConcurrency,
          unknownKeys: {
            ...defaultUnknownKeyLimits,
            perMinute: config.gatewayUnknownKeyRate,
            burst: config.gatewayUnknownKeyBurst
          },
          analysisTimeoutMs: config.analysisTimeoutMs,
          toolCaps: { maxTools: config.gatewayMaxTools, maxNameLength: config.gatewayMaxToolName },
          trustedProxies: config.trustedProxies,
          evidenceRedaction: config.evidenceRedaction
        })
      ),
      Layer.provide(Layer.mergeAll(Layer.succeed(ProviderAdapters, providerAdapters), AnalysisLive)),
      // The MCP gateway on the same port (docs/mcp.md): /mcp/{server_id}.
      Layer.provide(
        McpProxy.layer({
          allowPrivate: config.mcpAllowPrivate,
          subjectPrefix: config.natsPrefix,
          analysisTimeoutMs: config.analysisTimeoutMs,
          evidenceRedaction: config.evidenceRedaction
        }).pipe(Layer.provide(AnalysisLive))
      )
    )
  })
)

/** How long a worker's partition lease outlives its last renewal. */
const LEASE_TTL_MS = 15_000

/** Whether the bus is reachable: always for the in-process bus, a round trip to the server on NATS. */
class BusHealth extends Context.Tag("candor/src/BusHealth")<BusHealth, Effect.Effect<void, unknown>>() {}

/**
 * Bus, agent state and partition ownership: in-process and owning every partition on the embedded
 * default; on NATS (one connection) with leases shared among workers otherwise. A process without
 * the worker role owns no partition.
 */
const MessagingLive = (withWorkers: boolean, bridge?: MessagePort) =>
  Layer.unwrapEffect(
    Effect.map(
      CandorConfig,
      ({ busBatchEvents, natsPrefix: prefix, natsReplicas: replicas, natsUrl, partitions, workerId }) => {
        const worker = Option.getOrElse(workerId, defaultWorkerId)
        if (Option.isNone(natsUrl)) {
          // No connection here: only FeedLive asks for one, and only when NATS_URL is set.
          return Layer.mergeAll(
            Bus.layerMemoryWith({ prefix, partitions }),
            // The embedded default's backend thread: agent-state changes also reach the gateway thread's copy.
            bridge === undefined ? AgentState.layerMemory : ThreadBridgeBackend.agentStateLayer(bridge),
            PartitionOwnership.layerAll(withWorkers ? partitions : 0, worker),
            // Human approval's wake-ups: decider and waiter share this thread's service (docs/approvals.md).
            ApprovalSignal.layerMemory,
            Layer.succeed(BusHealth, Effect.void)
          ) as Layer.Layer<Bus | AgentState | PartitionOwnership | BusHealth | NatsConnection | ApprovalSignal>
        }
        return Layer.mergeAll(
          startupStep(
            "bus streams and consumers",
            Bus.layerJetStream({ prefix, partitions, publishBatchEvents: busBatchEvents, replicas })
          ),
          startupStep("agent state bucket", KvAgentState.layer({ prefix, replicas })),
          startupStep("approval signal bucket", ApprovalSignalKv.layer({ prefix, replicas })),
          withWorkers
            ? startupStep(
                "partition leases",
                PartitionLeases.layer({ partitions, workerId: worker, ttlMs: LEASE_TTL_MS, prefix, replicas })
              )
            : PartitionOwnership.layerAll(0, worker),
          Layer.effect(
            BusHealth,
            Effect.map(NatsConnection, (nc) =>
              nc.isClosed() ? Effect.fail("closed") : Effect.tryPromise(() => nc.flush())
            )
          )
          // The connection stays in the context: the event feed (FeedLive) shares it.
        ).pipe(
          Layer.provideMerge(
            startupStep("NATS connection", NatsConnection.layer(natsUrl.value, { name: `candor-${worker}` }))
          )
        )
      }
    )
  )

/**
 * The feed of catalogue events (adapters/bus/EventFeed.ts): the API streams it, the workers publish
 * and fan it out to webhooks, the gateway publishes blocked requests and policy violations. On NATS,
 * stream `<PREFIX>_FEED` (on the messaging connection); embedded, the store's `feed_events` table;
 * a lone gateway without NATS has no store and no reader (`layerDetached`).
 */
const FeedLive = (withStore: boolean) =>
  Layer.unwrapEffect(
    Effect.map(
      CandorConfig,
      ({
        natsPrefix: prefix,
        natsReplicas: replicas,
        natsUrl
      }): Layer.Layer<EventFeed, BusError, NatsConnection | SqlClient.SqlClient> =>
        Option.isSome(natsUrl)
          ? startupStep("event feed stream", EventFeedJetStream.layer({ prefix, replicas }))
          : withStore
            ? EventFeedStore.layer()
            : EventFeed.layerDetached
    )
  )

/** Whether webhook endpoints may be private addresses or plain http (the API's checks and the workers' connections). */
const WebhookNetworkFromConfig = Layer.unwrapEffect(
  Effect.map(CandorConfig, (config) => Layer.succeed(WebhookNetwork, { allowPrivate: config.webhookAllowPrivate }))
)

/**
 * The gateway's URL as agents reach it, for each MCP server's `mcp_url` (docs/mcp.md):
 * CANDOR_GATEWAY_PUBLIC_URL, else the local gateway (HOST:GATEWAY_PORT, a wildcard host as loopback).
 * A process serving the API without the gateway cannot know it: set it there (else a warning).
 */
const McpGatewayFromConfig = (selected: ReadonlyArray<Role>) =>
  Layer.unwrapEffect(
    Effect.gen(function* () {
      const config = yield* CandorConfig
      const network = Layer.succeed(McpNetwork, { allowPrivate: config.mcpAllowPrivate })
      if (Option.isSome(config.gatewayPublicUrl))
        return Layer.merge(network, Layer.succeed(McpGatewayUrl, config.gatewayPublicUrl.value.replace(/\/+$/, "")))
      // The embedded default's backend thread serves the API beside the process's own gateway: only
      // an API without a gateway in its process (a split deployment) needs to be told. Not told, it
      // names HOST:GATEWAY_PORT (right when both run on one host) and says so once.
      const split = selected.length < backendRoles.length
      if (selected.includes("api") && !selected.includes("gateway") && split)
        yield* Effect.logWarning(
          "CANDOR_GATEWAY_PUBLIC_URL is not set: MCP servers' mcp_url names this host's GATEWAY_PORT (docs/mcp.md)"
        )
      const host =
        config.host === "0.0.0.0"
          ? "127.0.0.1"
          : config.host === "::"
            ? "[::1]"
            : config.host.includes(":")
              ? `[${config.host}]`
              : config.host
      const scheme = tlsFiles(config) === undefined ? "http" : "https"
      return Layer.merge(network, Layer.succeed(McpGatewayUrl, `${scheme}://${host}:${config.gatewayPort}`))
    })
  )

/**
 * Where this process's MCP proxy asks for human approval (adapters/bus/ApprovalDesk.ts): the store's
 * desk in a process with the store, over NATS in a gateway without it, else nowhere (every call
 * that needs an approval is then refused). The embedded default's gateway thread asks over the
 * thread bridge instead (EmbeddedLive).
 */
type ApprovalDeskNeeds =
  Store | ApprovalRepo | GovernanceLog.GovernanceLog | ApprovalSignal | SqlClient.SqlClient | NatsConnection
const ApprovalDeskLive = (withStore: boolean) =>
  Layer.unwrapEffect(
    Effect.map(CandorConfig, ({ natsPrefix, natsUrl }): Layer.Layer<ApprovalDesk, never, ApprovalDeskNeeds> =>
      withStore
        ? ApprovalDeskLocal.layer
        : Option.isSome(natsUrl)
          ? ApprovalDeskNats.layer({ prefix: natsPrefix })
          : ApprovalDesk.layerNone
    )
  )

/**
 * The answers to other processes' approval requests, in a process with the store: gateways without
 * one ask over NATS (a queue group: one process answers each), the embedded default's gateway thread
 * over the bridge.
 */
const ApprovalDeskServing = (withStore: boolean, bridge: MessagePort | undefined) =>
  Layer.unwrapEffect(
    Effect.map(CandorConfig, ({ natsPrefix, natsUrl }) =>
      !withStore
        ? Layer.empty
        : Layer.mergeAll(
            Option.isSome(natsUrl) ? ApprovalDeskNats.serve({ prefix: natsPrefix }) : Layer.empty,
            bridge === undefined ? Layer.empty : ThreadBridgeBackend.serveLayer(bridge)
          ).pipe(Layer.provide(ApprovalDeskLocal.layer))
    )
  )

/** How large a tool policy the API stores (POLICY_MAX_RULES). */
const PolicyLimitsFromConfig = Layer.unwrapEffect(
  Effect.map(CandorConfig, (config) => Layer.succeed(PolicyLimits, { maxRules: config.policyMaxRules }))
)

/** How long a stopping worker on the in-process bus may take to commit what the bus still holds. */
const SETTLE_AT_STOP = "20 seconds"

/**
 * The agent actors: the consumers, on the shared store and signing key. On the in-process bus, whose
 * events do not outlive the process, stopping first waits (a while) until every stored event is
 * committed: the gateway's last events, published as it stopped, are not lost.
 */
const WorkersLive = Layer.unwrapEffect(
  Effect.map(CandorConfig, (config) =>
    // The key is registered in the key ring before it signs anything (GET /v1/keys lists it, and it retires older keys).
    Layer.scopedDiscard(
      Effect.gen(function* () {
        yield* SigningKeys.registerActiveKey
        yield* runWorkers({
          logOrigin: config.logOrigin,
          subjectPrefix: config.natsPrefix,
          // Embedded PGlite is one connection: one committer, the largest groups.
          groupCommit: Option.isNone(config.databaseUrl)
            ? singleConnectionGroupCommitOptions
            : defaultGroupCommitOptions
        })
        const { settled } = yield* Bus
        // Added after the consumers started, so it runs before they are stopped.
        if (settled !== undefined)
          yield* Effect.addFinalizer(() => settled.pipe(Effect.timeout(SETTLE_AT_STOP), Effect.ignore))
      })
    )
  )
)

/** Witnessing (docs/witnesses.md) beside the workers, when CANDOR_WITNESSES lists any witness. */
const WitnessingLive = Layer.unwrapEffect(
  Effect.map(CandorConfig, (config) =>
    config.witnesses.length === 0
      ? Layer.empty
      : Witnessing.layer({
          witnesses: config.witnesses,
          interval: Duration.seconds(config.witnessIntervalSeconds),
          batch: config.witnessBatch
        })
  )
)

/** The chain tree heads and scores are anchored to (docs/on-chain.md): off unless CANDOR_CHAIN_* are set. */
const AnchorChainFromConfig = Layer.unwrapEffect(
  Effect.map(CandorConfig, (config) =>
    AnchorChain.layer({
      rpcUrl: config.chainRpcUrl,
      privateKey: config.chainPrivateKey,
      contract: config.chainContract
    })
  )
)

/**
 * The periodic anchoring of the worker role, when CANDOR_CHAIN_ANCHOR_INTERVAL is set; with anchoring
 * off it warns once at start and does nothing.
 */
const AnchorJobLive = Layer.unwrapEffect(
  Effect.gen(function* () {
    const config = yield* CandorConfig
    if (Option.isNone(config.chainAnchorInterval)) return Layer.empty
    const { client, missing } = yield* AnchorChain.AnchorChain
    if (client === undefined)
      return Layer.effectDiscard(
        Effect.logWarning("CANDOR_CHAIN_ANCHOR_INTERVAL is set but on-chain anchoring is off").pipe(
          Effect.annotateLogs({ not_set: missing })
        )
      )
    return ChainAnchoring.layer({ interval: config.chainAnchorInterval.value })
  })
)

/** The prover role: proof jobs from the outbox, proved in worker threads, attached to the stored certificates. */
const ProverLive = ProverWorkers.layer().pipe(Layer.provide(Prover.layer()))

/**
 * The roles in `selected`, announced by `bound` once their servers are bound; with `bridge`, as the
 * embedded default's backend thread (its agent state mirrored to the gateway thread, the gateway's
 * publishes served).
 */
const rolesLive = (
  selected: ReadonlyArray<Role>,
  /** May read the store, its repositories and the agent state (the embedded backend restores that state before announcing). */
  bound: Layer.Layer<
    never,
    never,
    CandorConfig | HttpServer.HttpServer | Store | Repositories | SqlClient.SqlClient | AgentState
  >,
  bridge?: MessagePort
) => {
  const withApi = selected.includes("api")
  const withWorkers = selected.includes("worker")
  const withProver = selected.includes("prover")
  const announced = bound.pipe(
    Layer.provideMerge(HttpLive(withApi, withApi || withWorkers || withProver)),
    // One store for the API's exchange route, its authentication and the printed link.
    Layer.provide(bridge === undefined ? Layer.empty : OperatorSignInFromConfig)
  )
  // The gateway is bound before the line that announces both.
  const withStore = withApi || withWorkers || withProver
  const gateway = GatewayLive.pipe(Layer.provide(ApprovalDeskLive(withStore)))
  const roles = (selected.includes("gateway") ? Layer.provide(announced, gateway) : announced).pipe(
    // The team reputation refresh (docs/team-reputation.md), witnessing (docs/witnesses.md), the
    // periodic anchoring (docs/on-chain.md) and the approvals' expiry sweep run beside the workers.
    Layer.merge(
      withWorkers
        ? Layer.mergeAll(
            WorkersLive,
            TeamReputationRefresh.layer(),
            WitnessingLive,
            AnchorJobLive,
            // Human approval's expiry (docs/approvals.md).
            ApprovalExpiry.layer()
          )
        : Layer.empty
    ),
    Layer.merge(withProver ? ProverLive : Layer.empty),
    // The bridge's publishes and desk calls (the embedded default), the NATS desk's answers (split).
    Layer.merge(ApprovalDeskServing(withStore, bridge)),
    Layer.provide(FeedLive(withStore))
  )
  const stored = roles.pipe(
    Layer.provide(AnchorChainFromConfig),
    Layer.provide(GovernanceLogFromConfig),
    Layer.provide(Layer.merge(StoreFromConfig, SigningKeysFromConfig))
  )
  // Only the API, the workers and the prover read or write records: a gateway process opens no database
  // (the types cannot see that they are absent then).
  return (withStore ? stored : (roles as unknown as typeof stored)).pipe(
    Layer.provide(Layer.mergeAll(WebhookNetworkFromConfig, PolicyLimitsFromConfig, McpGatewayFromConfig(selected))),
    Layer.provide(
      MessagingLive(withWorkers, bridge) as Layer.Layer<
        | Bus
        | AgentState
        | PartitionOwnership
        | BusHealth
        | NatsConnection
        | ThreadBridgeBackend.ThreadBridgeInbox
        | ApprovalSignal,
        BusError,
        CandorConfig
      >
    ),
    Layer.provide(DataDirLive),
    Layer.provide(TracingLive(selected))
  )
}

/**
 * The local operator's sign-in (adapters/auth/OperatorSignIn.ts) on the embedded default with its own
 * database: whoever runs that process owns its data dir, so the service-role key's rights give them
 * nothing they do not hold already. With DATABASE_URL the database may hold others' data: no link.
 */
const OperatorSignInFromConfig = Layer.unwrapEffect(
  Effect.map(CandorConfig, ({ databaseUrl }) =>
    Option.isNone(databaseUrl) ? OperatorSignIn.layer() : (Layer.empty as Layer.Layer<OperatorSignIn.OperatorSignIn>)
  )
)

/** `…/console/#/sign-in/<code>` on the API's address, a wildcard address replaced by loopback. */
const signInUrlOf = (apiUrl: string, code: string): string =>
  `${apiUrl.replace("//0.0.0.0:", "//127.0.0.1:").replace("//[::]:", "//[::1]:")}/console/#/sign-in/${code}`

/** The backend thread's address, with a fresh one-time sign-in link when the operator sign-in is on. */
const readyAddress = Effect.gen(function* () {
  const address = yield* apiAddress
  const signIn = yield* Effect.serviceOption(OperatorSignIn.OperatorSignIn)
  return Option.isNone(signIn)
    ? address
    : ({ ...address, signInUrl: signInUrlOf(address.url, signIn.value.issueCode().code) } satisfies ApiAddress)
})

/** The roles of the embedded default's backend thread: everything but the gateway. */
export const backendRoles: ReadonlyArray<Role> = roles.filter((role) => role !== "gateway")

/**
 * The embedded default's backend thread (src/Backend.ts runs it): every role but the gateway, on the
 * bridge's end `port`; `ready` is told HOST:PORT's address once the servers are bound.
 */
export const BackendLive = (port: MessagePort, ready: (api: ApiAddress) => void) =>
  rolesLive(
    backendRoles,
    Layer.effectDiscard(Effect.zipRight(restoredAgentState, Effect.map(readyAddress, ready))),
    port
  )

/**
 * The embedded default's agent state is a map in memory: rebuilt from the store before the backend
 * says it is ready, and so before the gateway binds (`EmbeddedLive`), or a restart would forget
 * every containment, mode and policy (streams/AgentStateRestore.ts).
 */
const restoredAgentState = Effect.flatMap(restoreAgentState, (restored) =>
  Effect.logDebug("agent state restored from the store").pipe(Effect.annotateLogs(restored))
).pipe(Effect.orDie)

/**
 * The embedded default's main thread: the gateway, with the backend thread started beside it; the
 * "listening" line once both are bound (a backend that fails to start fails this with its error).
 */
const EmbeddedLive = Layer.unwrapScoped(
  Effect.gen(function* () {
    const config = yield* CandorConfig
    const backend = yield* startBackend({ forwardSighup: tlsFiles(config) !== undefined })
    // The gateway binds once the backend is ready: its agent state has been restored from the store
    // by then, so no request is forwarded on settings the gateway has not been given yet.
    const gatewayAfterBackend = Layer.provide(GatewayLive, Layer.effectDiscard(Effect.ignore(backend.ready)))
    return announceWith(roles, backend.ready).pipe(
      Layer.provide(gatewayAfterBackend),
      Layer.provide(ThreadBridgeGateway.layer({ port: backend.port, partitions: config.partitions })),
      // This thread's spans (the gateway's); the backend thread exports its own (BackendLive).
      Layer.provide(TracingLive(["gateway"]))
    )
  })
)

/** The roles in `selected` in this thread, announced once bound (the split roles, and tests). */
export const ServeLive = (selected: ReadonlyArray<Role>) => rolesLive(selected, announce(selected))

/**
 * Everything `candor serve` runs, until interrupted (SIGINT/SIGTERM through NodeRuntime.runMain):
 * every role without NATS_URL is the embedded default, on two threads; anything else, `ServeLive`.
 */
export const ServeProcessLive = (selected: ReadonlyArray<Role>) =>
  Layer.unwrapEffect<never, unknown, CandorConfig | FileSystem.FileSystem, never, CandorConfig>(
    Effect.map(CandorConfig, ({ natsUrl }) => {
      const embedded = selected.length === roles.length && Option.isNone(natsUrl)
      return embedded ? EmbeddedLive : Layer.discard(ServeLive(selected))
    })
  )
