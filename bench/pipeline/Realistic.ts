/**
 * The realistic shape's deployment around a row's workers (issue 25): the settings every `candor
 * serve` process of the row shares, `candor serve --role api` (which the operator sets up and the
 * live stream reads), the peers (webhook receivers, live stream client), the organizations and
 * agents made through the API (bench/pipeline/Operator.ts), and, for the rows that publish events
 * themselves, the events the real gateway publishes for those agents (bench/pipeline/Templates.ts).
 *
 * The workers start first (the first store process migrates the database), then the API, so the
 * exchanges captured through the gateway are committed like the rest of the warm-up.
 */
import { randomBytes } from "node:crypto"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { NatsConnection } from "../../adapters/bus/NatsConnection.js"
import { formatSecretKey, generateSecretKey } from "../../core/SecretBox.js"
import { formatSigningKey, generateSigningKey } from "../../core/Signing.js"
import { freePort } from "../../test/support/NatsServer.js"
import { type Peers, startPeers, startUpstream } from "./Children.js"
import { type Memory, startWorkerProcess } from "./CandorProcess.js"
import { type Organization, setUpOrganizations } from "./Operator.js"
import { ANSWER_KINDS } from "./RealisticContent.js"
import { progress } from "./Progress.js"
import { shapeSettings } from "./Shape.js"
import { captureTemplates, realisticSource, type EventSource } from "./Templates.js"

/** What every `candor serve` process of one deployment is given. */
export interface Shared {
  readonly databaseUrl: string
  readonly natsUrl: string
  readonly prefix: string
  readonly partitions: number
  readonly signingKey: string
  readonly secretKey: string
  readonly serviceRoleKey: string
  readonly jwtSecret: string
}

export const LOG_ORIGIN = "candor.bench"

export const sharedSettings = (databaseUrl: string, natsUrl: string, prefix: string, partitions: number): Shared => ({
  databaseUrl,
  natsUrl,
  prefix,
  partitions,
  signingKey: formatSigningKey(generateSigningKey()),
  // Shared by every store process: the API seals webhook secrets, the workers open them and each other's fields.
  secretKey: formatSecretKey(generateSecretKey()),
  serviceRoleKey: `srk-bench-${randomBytes(16).toString("hex")}`,
  jwtSecret: randomBytes(32).toString("base64url")
})

/** The environment of a store process (api, worker) of the deployment, as an operator configures it. */
export const storeEnv = (shared: Shared): Record<string, string> => ({
  DATABASE_URL: shared.databaseUrl,
  NATS_URL: shared.natsUrl,
  CANDOR_NATS_PREFIX: shared.prefix,
  CANDOR_PARTITIONS: String(shared.partitions),
  CANDOR_LOG_ORIGIN: LOG_ORIGIN,
  SIGNING_KEY: shared.signingKey,
  CANDOR_SECRET_KEY: shared.secretKey,
  SERVICE_ROLE_KEY: shared.serviceRoleKey,
  AUTH_JWT_SECRET: shared.jwtSecret,
  // The receivers are on loopback.
  CANDOR_WEBHOOK_ALLOW_PRIVATE: "true"
})

/** `candor serve --role gateway` of the deployment, in front of `upstreamOrigin`; its gateway port. */
export const startGateway = (shared: Shared, upstreamOrigin: string, cpuProfileDir: string | undefined) =>
  Effect.gen(function* () {
    const gatewayPort = yield* Effect.promise(freePort)
    const gateway = yield* startWorkerProcess(
      {
        NATS_URL: shared.natsUrl,
        CANDOR_NATS_PREFIX: shared.prefix,
        CANDOR_PARTITIONS: String(shared.partitions),
        GATEWAY_PORT: String(gatewayPort),
        ANTHROPIC_BASE_URL: upstreamOrigin
      },
      cpuProfileDir,
      "gateway",
      gatewayPort
    )
    return { ...gateway, url: `http://127.0.0.1:${gatewayPort}` }
  })

export interface RealisticParts {
  readonly organizations: ReadonlyArray<Organization>
  readonly agents: ReadonlyArray<string>
  readonly apiPid: number
  /** The API's memory now (its live heap too: bench/pipeline/MemoryProbe.mjs). */
  readonly apiMemory: Effect.Effect<Memory>
  readonly apiUrl: string
  readonly peers: Peers
}

/**
 * The API and the peers, the organizations and `agents` agents set up through the API (spread over
 * the shape's organizations), and the live stream open. The workers must be running.
 */
export const setUpRealistic = (
  shared: Shared,
  agents: number,
  profileDir: string | undefined
): Effect.Effect<RealisticParts, unknown, Scope.Scope> =>
  Effect.gen(function* () {
    const api = yield* startWorkerProcess(
      storeEnv(shared),
      profileDir === undefined ? undefined : join(profileDir, "api"),
      "api"
    )
    const apiUrl = `http://127.0.0.1:${api.port}`
    const peers = yield* startPeers
    const organizations = shapeSettings.organizations
    const perOrganization = Math.max(1, Math.ceil(agents / organizations))
    progress(`setting up ${organizations} organizations × ${perOrganization} agents through the API`)
    const orgs = yield* Effect.promise(() =>
      setUpOrganizations({
        apiUrl,
        serviceRoleKey: shared.serviceRoleKey,
        jwtSecret: shared.jwtSecret,
        organizations,
        agentsPerOrganization: perOrganization,
        receiverUrl: (i) => `${peers.origin}/org-${i}`
      })
    )
    yield* peers.openStream(`${apiUrl}/v1/stream`, shared.serviceRoleKey)
    return {
      organizations: orgs,
      agents: orgs.flatMap((org) => org.agents.map((agent) => agent.agentId)).slice(0, agents),
      apiPid: api.pid,
      apiMemory: api.memory,
      apiUrl,
      peers
    }
  })

/**
 * The events of the realistic shape for `parts`' agents: their answers captured through a gateway
 * and a fake provider that live only for the capture (the workers commit what it sends).
 */
export const realisticEvents = (
  shared: Shared,
  nc: NatsConnection["Type"],
  parts: RealisticParts
): Effect.Effect<{ readonly source: EventSource; readonly published: number }, unknown> =>
  Effect.scoped(
    Effect.gen(function* () {
      progress(`capturing the gateway's events for ${parts.agents.length} agents`)
      const upstream = yield* startUpstream
      const gateway = yield* startGateway(shared, upstream.origin, undefined)
      const templates = yield* captureTemplates(nc, shared.prefix, gateway.url, parts.organizations)
      return { source: realisticSource(templates, parts.agents), published: templates.size * ANSWER_KINDS.length }
    })
  )
