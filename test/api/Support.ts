/**
 * The management API's end-to-end harness: the real API (ApiLive with every handler, the real
 * Authentication and AccessControl, with /health, /metrics and the per-client limits of the public
 * routes as `candor serve` has them, the limits off unless asked for) served
 * over HTTP on an ephemeral port, on a fresh in-memory
 * PGlite (default) or a throwaway PostgreSQL database. Tests talk to it with `fetch` only; seeding
 * goes through the store and the identity repository, which the layer also provides.
 *
 * Fixtures (created once per layer, i.e. per test file):
 * - `userA`: a user with a personal agent `agentA`;
 * - `owner`, `admin`, `member`: the Owner, an Admin and a Member of organization `orgId`, whose
 *   agent is `orgAgent`;
 * - `userB`: a user of another organization `otherOrgId`, with its agent `agentB`.
 * Their plan is Enterprise with a rate high enough never to throttle a test; `freshUser()` gives a
 * new user on the default Free plan (10 requests per second) for rate-limit tests.
 *
 * Usage:
 *   layer(ApiHarness.layer())("checkpoints", (it) => {
 *     it.effect("…", () => Effect.gen(function*() {
 *       const api = yield* ApiHarness
 *       const res = yield* api.call("GET", `/v1/agents/${api.fixtures.agentA}/checkpoints`, { token: api.fixtures.userA.token })
 *     }))
 *   })
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as HttpLayerRouter from "@effect/platform/HttpLayerRouter"
import * as HttpServer from "@effect/platform/HttpServer"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as DefaultServices from "effect/DefaultServices"
import * as Effect from "effect/Effect"
import type { ForecastNarrator } from "../../adapters/analysis/ForecastNarrator.js"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { randomBytes, randomUUID } from "node:crypto"
import { createServer } from "node:http"
import { AuthConfig } from "../../adapters/auth/AuthConfig.js"
import * as IdentityTokens from "../../adapters/auth/IdentityTokens.js"
import { planRates } from "../../adapters/auth/RateLimiter.js"
import { generateSecret, hashSecret, displayPrefix } from "../../adapters/auth/Secrets.js"
import { ApprovalSignal } from "../../adapters/bus/ApprovalSignal.js"
import { AgentState } from "../../adapters/bus/AgentState.js"
import { AnchorChain } from "../../adapters/chain/AnchorChain.js"
import type { EventFeed } from "../../adapters/bus/EventFeed.js"
import * as EventFeedStore from "../../adapters/bus/EventFeedStore.js"
import { agentIdOf } from "../../adapters/gateway/AgentIdentity.js"
import { SigningKeys } from "../../adapters/keys/SigningKeys.js"
import { keyHashOf } from "../../adapters/providers/Identity.js"
import type { Repositories } from "../../adapters/store/Repositories.js"
import { CredentialRepo, type KeyCaps } from "../../adapters/store/identity/CredentialRepo.js"
import { IdentityRepo } from "../../adapters/store/identity/IdentityRepo.js"
import * as GovernanceLog from "../../adapters/store/GovernanceLog.js"
import * as SqlStore from "../../adapters/store/SqlStore.js"
import type { Store } from "../../adapters/store/Store.js"
import { WebhookNetwork } from "../../adapters/webhooks/WebhookUrlGuard.js"
import * as StoreDatabase from "../../adapters/store/StoreDatabase.js"
import type { OrgRole } from "../../core/schema/Organization.js"
import { generateSigningKey } from "../../core/Signing.js"
import { storeFamilies } from "../../adapters/metrics/StoreGauges.js"
import * as ApiLive from "../../src/api/ApiLive.js"
import type { StreamOptions } from "../../src/api/handlers/Stream.js"
import { HealthRoutes, Readiness } from "../../src/http/Health.js"
import { metricsRoute, RequestMetricsLive } from "../../src/http/Metrics.js"
import { NotFoundLive } from "../../src/http/NotFound.js"
import { PublicRateLimitLive } from "../../src/http/PublicRateLimit.js"
import { type PublicRateLimits, UNLIMITED } from "../../src/http/PublicRoutes.js"
import { noTrustedProxies, type TrustedProxies } from "../../adapters/http/ClientAddress.js"
import * as Postgres from "../support/Postgres.js"
import * as SecretKeys from "../../adapters/keys/SecretKeys.js"
import type { OperatorSignIn } from "../../adapters/auth/OperatorSignIn.js"
import { pgliteFromTemplate } from "../support/PgliteTemplate.js"

export interface ApiResponse {
  readonly status: number
  readonly headers: Headers
  /** Parsed JSON, or the text when the body is not JSON. */
  readonly body: any
}

export interface CallOptions {
  /** `Authorization: Bearer <token>` (a JWT, the service-role key, an impersonation token). */
  readonly token?: string | undefined
  /** `x-api-key`. */
  readonly apiKey?: string | undefined
  /** JSON-encoded unless it is a string (sent as is). */
  readonly body?: unknown
  readonly headers?: Record<string, string> | undefined
  /** A 2xx answer's body is not read (a stream that never ends): only its status and headers. */
  readonly headersOnly?: boolean | undefined
}

export interface TestUser {
  readonly userId: string
  readonly email: string
  /** A valid HS256 token for one hour. */
  readonly token: string
}

export interface Fixtures {
  readonly userA: TestUser
  readonly userB: TestUser
  readonly owner: TestUser
  readonly admin: TestUser
  readonly member: TestUser
  /** The organization of owner, admin and member. */
  readonly orgId: string
  /** userB's organization. */
  readonly otherOrgId: string
  /** userA's personal agent. */
  readonly agentA: string
  /** An agent of `orgId`. */
  readonly orgAgent: string
  /** An agent of `otherOrgId`. */
  readonly agentB: string
}

export interface MintOptions {
  readonly email?: string | undefined
  readonly ttlSeconds?: number | undefined
  /** Unix seconds (mint already-expired tokens with a past value and a short ttl). */
  readonly issuedAt?: number | undefined
}

export class ApiHarness extends Context.Tag("candor/test/api/ApiHarness")<
  ApiHarness,
  {
    /** `http://127.0.0.1:<port>`. */
    readonly url: string
    readonly call: (method: string, path: string, options?: CallOptions) => Effect.Effect<ApiResponse>
    /** An identity-provider token for `sub`, signed with the harness's HS256 secret. */
    readonly token: (sub: string, options?: MintOptions) => Effect.Effect<string>
    readonly serviceRoleKey: string
    readonly fixtures: Fixtures
    /** A new user on the Free plan, never seen by the API before. */
    readonly freshUser: Effect.Effect<TestUser>
    /** Claims the agent of `providerKey` (default: random) for a user, optionally into an organization; returns its id. */
    readonly claimAgent: (
      owner: { readonly userId: string; readonly orgId?: string | undefined },
      providerKey?: string,
      name?: string
    ) => Effect.Effect<string>
    /** Creates an API key directly in the store; returns the plaintext. */
    readonly createApiKey: (
      userId: string,
      scope?: { readonly orgId: string; readonly role: OrgRole }
    ) => Effect.Effect<string>
  }
>() {}

/** CANDOR_LOG_ORIGIN of the harness: governance logs are `candor.test/agents/<id>/governance`, … */
export const TEST_LOG_ORIGIN = "candor.test"

/** The harness's plan rates: Free, Developer, Team as shipped; Enterprise unthrottled for fixtures. */
export const TEST_PLAN_RATES = planRates(1_000_000)

const uid = (prefix: string) => `${prefix}-${randomUUID().slice(0, 8)}`

const make = (secret: string, serviceRoleKey: string) =>
  Effect.gen(function* () {
    const { address } = yield* HttpServer.HttpServer
    const url = HttpServer.formatAddress(address)
    const identity = yield* IdentityRepo
    const credentials = yield* CredentialRepo

    const call = (method: string, path: string, options: CallOptions = {}) =>
      Effect.promise(async (): Promise<ApiResponse> => {
        const headers: Record<string, string> = { ...options.headers }
        if (options.token !== undefined) headers["authorization"] = `Bearer ${options.token}`
        if (options.apiKey !== undefined) headers["x-api-key"] = options.apiKey
        let body: string | undefined
        if (options.body !== undefined) {
          body = typeof options.body === "string" ? options.body : JSON.stringify(options.body)
          headers["content-type"] ??= "application/json"
        }
        const response = await fetch(`${url}${path}`, { method, headers, ...(body === undefined ? {} : { body }) })
        if (options.headersOnly === true && response.ok) {
          await response.body?.cancel()
          return { status: response.status, headers: response.headers, body: undefined }
        }
        const text = await response.text()
        let parsed: unknown = text
        try {
          parsed = text === "" ? undefined : JSON.parse(text)
        } catch {
          // not JSON: keep the text
        }
        return { status: response.status, headers: response.headers, body: parsed }
      })

    const token = (sub: string, options: MintOptions = {}) =>
      Effect.promise(() =>
        IdentityTokens.mintToken(secret, { sub, ...options, ttlSeconds: options.ttlSeconds ?? 3600 })
      )

    const user = (prefix: string, plan: string) =>
      Effect.gen(function* () {
        const userId = uid(prefix)
        const email = `${userId}@example.test`
        yield* Effect.orDie(identity.ensureUser(userId, email))
        if (plan !== "free") yield* Effect.orDie(identity.updateUser(userId, { plan_id: plan }))
        return { userId, email, token: yield* token(userId, { email }) }
      })

    const org = (owner: TestUser, slug: string) =>
      Effect.gen(function* () {
        const orgId = `org_${randomUUID()}`
        yield* Effect.orDie(
          identity.createOrg({
            org_id: orgId,
            name: `Org ${slug}`,
            slug: uid(slug),
            billing_account_id: `ba_${randomUUID()}`,
            owner_user_id: owner.userId
          })
        )
        yield* Effect.orDie(identity.setOrgPlan(orgId, "enterprise"))
        return orgId
      })

    const claimAgent = (
      owner: { readonly userId: string; readonly orgId?: string | undefined },
      providerKey: string = `sk-test-${randomBytes(12).toString("hex")}`,
      name?: string
    ) =>
      Effect.gen(function* () {
        const keyHash = keyHashOf(providerKey)!
        const agentId = agentIdOf(keyHash, name)
        yield* Effect.orDie(
          identity.claimAgent({
            agent_id: agentId,
            agent_hash: keyHash,
            user_id: owner.userId,
            org_id: owner.orgId ?? null
          })
        )
        return agentId
      })

    const createApiKey = (userId: string, scope?: { readonly orgId: string; readonly role: OrgRole }) =>
      Effect.gen(function* () {
        const key = generateSecret("cnd")
        yield* Effect.orDie(
          credentials.createKey({
            key_id: `key_${randomUUID()}`,
            key_hash: hashSecret(key),
            name: "test key",
            prefix: displayPrefix(key),
            user_id: userId,
            org_id: scope?.orgId ?? null,
            role: scope?.role ?? null
          })
        )
        return key
      })

    const userA = yield* user("user-a", "enterprise")
    const userB = yield* user("user-b", "enterprise")
    const owner = yield* user("owner", "enterprise")
    const admin = yield* user("admin", "enterprise")
    const member = yield* user("member", "enterprise")
    const orgId = yield* org(owner, "acme")
    yield* Effect.orDie(identity.putMember(orgId, admin.userId, "admin"))
    yield* Effect.orDie(identity.putMember(orgId, member.userId, "member"))
    const otherOrgId = yield* org(userB, "other")

    const fixtures: Fixtures = {
      userA,
      userB,
      owner,
      admin,
      member,
      orgId,
      otherOrgId,
      agentA: yield* claimAgent({ userId: userA.userId }),
      orgAgent: yield* claimAgent({ userId: owner.userId, orgId }),
      agentB: yield* claimAgent({ userId: userB.userId, orgId: otherOrgId })
    }

    return ApiHarness.of({
      url,
      call,
      token,
      serviceRoleKey,
      fixtures,
      freshUser: user("fresh", "free"),
      claimAgent,
      createApiKey
    })
  })

export interface HarnessOptions {
  /** `pglite` (default): in memory, one per layer; `postgres`: a throwaway database on TEST_DATABASE_URL. */
  readonly database?: "pglite" | "postgres"
  /** A client of its own instead (a PostgreSQL reached through a proxy the test takes down). */
  readonly databaseClient?: Layer.Layer<SqlClient.SqlClient, unknown>
  /** The gateways' shared state (default: in memory). */
  readonly agentState?: Layer.Layer<AgentState>
  /** The event feed (default: the store's, as on the embedded default). */
  readonly feed?: Layer.Layer<EventFeed, unknown, SqlClient.SqlClient>
  readonly planRates?: Readonly<Record<string, number>>
  readonly maxBodyBytes?: number
  /** CANDOR_WEBHOOK_ALLOW_PRIVATE (default off): webhook receivers on 127.0.0.1 over http. */
  readonly webhookAllowPrivate?: boolean
  /** The live stream's heartbeat, connection limit and access cache. */
  readonly stream?: Partial<StreamOptions>
  /** The forecast's model (ANALYSIS_MODEL); default none: the forecast is deterministic. */
  readonly forecastNarrator?: Layer.Layer<ForecastNarrator>
  /** The chain anchors go to (default: anchoring off); test/support/InProcessChain.ts serves one. */
  readonly chain?: Layer.Layer<AnchorChain>
  /** The local operator's console sign-in (embedded default only; default: absent). */
  readonly operatorSignIn?: Layer.Layer<OperatorSignIn>
  /** Live API keys per user and organization (default: too many to meet, so tests that are not about caps never do). */
  readonly apiKeyCaps?: KeyCaps
  /** On-chain sends per organization per hour (default: too many to meet). */
  readonly chainSendsPerHour?: number
  /**
   * Per-client limits of the public routes and the trusted proxies (default: no limit, so tests that
   * are not about limits never meet one; `candor serve` has DEFAULT_PUBLIC_RATE_LIMITS).
   */
  readonly publicRateLimits?: PublicRateLimits
  readonly trustedProxies?: TrustedProxies
}

/**
 * A layer whose fibers keep the real clock when the harness is built under the test clock: the
 * feed's readers poll, and a test that sets the test clock to the real time (years ahead of its
 * start) would otherwise run every poll in between.
 */
const onLiveClock = <A, E, R>(layer: Layer.Layer<A, E, R>): Layer.Layer<A, E, R> =>
  Layer.locallyWith(layer, DefaultServices.currentServices, (services) =>
    Context.add(services, Clock.Clock, Context.get(DefaultServices.liveServices, Clock.Clock))
  )

/** The migrated database and the store and repositories on it, with the key its sealed fields are under (the API's reads open them too). */
const storeLayer = (
  client: Layer.Layer<SqlClient.SqlClient, unknown>
): Layer.Layer<Store | Repositories | SqlClient.SqlClient | SecretKeys.SecretKeys> =>
  SqlStore.layer.pipe(
    Layer.provideMerge(SecretKeys.layerEphemeral),
    Layer.provideMerge(StoreDatabase.migrated(client)),
    Layer.orDie
  )

/**
 * The served API and the harness. The context also holds the `Store`, `SqlClient`, `AgentState`, `EventFeed`,
 * `SigningKeys`, `IdentityRepo` and `CredentialRepo` the API runs on, for seeding and assertions.
 */
export const layer = (options: HarnessOptions = {}) => {
  const secret = randomBytes(32).toString("base64url")
  const serviceRoleKey = generateSecret("srk")
  const auth = Layer.succeed(AuthConfig, {
    jwtSecret: Option.some(Redacted.make(secret)),
    jwksUrl: Option.none(),
    issuer: Option.none(),
    audience: Option.none(),
    serviceRoleKey: Option.some(Redacted.make(serviceRoleKey))
  })
  const api = ApiLive.layer({
    planRates: options.planRates ?? TEST_PLAN_RATES,
    maxBodyBytes: options.maxBodyBytes ?? ApiLive.DEFAULT_MAX_BODY_BYTES,
    stream: options.stream,
    apiKeyCaps: options.apiKeyCaps ?? { perUser: 1_000_000, perOrg: 1_000_000 },
    chainSendsPerHour: options.chainSendsPerHour ?? 1_000_000
  }).pipe(Layer.provide(options.forecastNarrator ?? Layer.empty))
  // The same routes as `candor serve --role api`: the API, health (store check), metrics.
  const readiness = Layer.effect(
    Readiness,
    Effect.map(SqlClient.SqlClient, (sql) => [{ name: "store", check: sql`select 1` }])
  )
  const metrics = Layer.unwrapEffect(
    Effect.map(Effect.context<SqlClient.SqlClient>(), (ctx) => metricsRoute(Effect.provide(storeFamilies, ctx)))
  )
  const served = HttpLayerRouter.serve(
    Layer.mergeAll(
      api,
      NotFoundLive,
      HealthRoutes.pipe(Layer.provide(readiness)),
      metrics,
      RequestMetricsLive,
      PublicRateLimitLive({
        limits: options.publicRateLimits ?? UNLIMITED,
        trustedProxies: options.trustedProxies ?? noTrustedProxies
      })
    ),
    { disableLogger: true, disableListenLog: true }
  ).pipe(
    Layer.provideMerge(NodeHttpServer.layer(createServer, { host: "127.0.0.1", port: 0 })),
    Layer.provide(Layer.succeed(WebhookNetwork, { allowPrivate: options.webhookAllowPrivate ?? false }))
  )
  return Layer.effect(ApiHarness, make(secret, serviceRoleKey)).pipe(
    Layer.provideMerge(served),
    Layer.provideMerge(ApiLive.IdentityLive),
    Layer.provideMerge(GovernanceLog.layer({ logOrigin: TEST_LOG_ORIGIN })),
    Layer.provideMerge(onLiveClock((options.feed ?? EventFeedStore.layer()).pipe(Layer.orDie))),
    Layer.provideMerge(
      Layer.mergeAll(
        IdentityTokens.layer({ dataDir: "/nonexistent" }).pipe(Layer.orDie),
        options.agentState ?? AgentState.layerMemory,
        // The process's approval signal, as src/Serve.ts provides one: the API's decisions wake a
        // test's held call through it (src/api/ApiLive.ts takes the process's signal when there is one).
        ApprovalSignal.layerMemory,
        SigningKeys.fromKey(generateSigningKey())
      )
    ),
    Layer.provideMerge(auth),
    Layer.provideMerge(options.chain ?? AnchorChain.off),
    Layer.provideMerge(options.operatorSignIn ?? Layer.empty),
    Layer.provideMerge(
      storeLayer(
        options.databaseClient ?? (options.database === "postgres" ? Postgres.layerClient : pgliteFromTemplate)
      )
    ),
    Layer.provide(NodeContext.layer),
    Layer.provide(Logger.minimumLogLevel(LogLevel.Error))
  )
}

/**
 * A new organization of the fixtures' owner, with their admin and member in it (the shape most
 * API tests want beside the fixtures' own organization); its id.
 */
export const freshOrganization = (name: string) =>
  Effect.gen(function* () {
    const api = yield* ApiHarness
    const repo = yield* IdentityRepo
    const { admin, member, owner } = api.fixtures
    const orgId = `org_${randomUUID()}`
    yield* Effect.orDie(
      repo.createOrg({
        org_id: orgId,
        name,
        slug: `${name.toLowerCase()}-${randomUUID().slice(0, 8)}`,
        billing_account_id: `ba_${randomUUID()}`,
        owner_user_id: owner.userId
      })
    )
    yield* Effect.orDie(repo.putMember(orgId, admin.userId, "admin"))
    yield* Effect.orDie(repo.putMember(orgId, member.userId, "member"))
    return orgId
  })
