/**
 * The management API as router routes for `HttpLayerRouter.serve` (src/Serve.ts): every group's
 * handlers, the Authentication middleware, the OpenAPI document at /v1/openapi.json, the docs page
 * at /docs (Swagger UI, its assets inlined: no CDN), the public reputation pages at
 * /agents/{agent_id}/reputation, the `{error}` bodies and the body size limit.
 *
 * What it needs from the process (store and repositories, agent state, event feed, signing key, auth
 * configuration, the anchoring chain) stays a requirement, provided by Serve.ts or by the test harness.
 */
import * as HttpApiSwagger from "@effect/platform/HttpApiSwagger"
import * as HttpLayerRouter from "@effect/platform/HttpLayerRouter"
import * as Layer from "effect/Layer"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as IdentityAccessControl from "../../adapters/auth/IdentityAccessControl.js"
import * as Accounts from "../../adapters/auth/Accounts.js"
import * as CredentialAuthentication from "../../adapters/auth/CredentialAuthentication.js"
import * as RateLimiter from "../../adapters/auth/RateLimiter.js"
import * as ChainVerifier from "../../adapters/store/ChainVerifier.js"
import { ReputationPageRoute } from "../http/ReputationPageRoute.js"
import { ConsoleRoute } from "../http/ConsoleRoute.js"
import { CandorApi } from "./Api.js"
import { ErrorBodiesLive } from "./ErrorBodies.js"
import { AdminLive } from "./handlers/Admin.js"
import { BillingLive } from "./handlers/Billing.js"
import { BlogLive } from "./handlers/Blog.js"
import { ClaimsLive } from "./handlers/Claims.js"
import { EnterpriseLive } from "./handlers/Enterprise.js"
import { ApiKeysLive } from "./handlers/ApiKeys.js"
import { LicenseLive } from "./handlers/License.js"
import { OrgsLive } from "./handlers/Orgs.js"
import { PlansLive } from "./handlers/Plans.js"
// Agent data (docs/api.md, "Agent data"):
import { AgentsLive } from "./handlers/Agents.js"
import { CardsLive } from "./handlers/Cards.js"
import { CheckpointsLive } from "./handlers/Checkpoints.js"
import { DriftLive } from "./handlers/Drift.js"
import { EnforcementLive } from "./handlers/Enforcement.js"
import { EnforcementRecordsLive } from "./handlers/EnforcementRecords.js"
import { AgentPermissionsLive } from "./handlers/AgentPermissions.js"
import { IntegrityLive } from "./handlers/Integrity.js"
import { ReverifyLive } from "./handlers/Reverify.js"
import { SsmLive } from "./handlers/Ssm.js"
import { TracesLive } from "./handlers/Traces.js"
import { VerificationLive } from "./handlers/Verification.js"
import { GovernanceLogsLive } from "./handlers/GovernanceLogs.js"
import { PoliciesLive } from "./handlers/Policies.js"
import { WebhookEventTypesLive } from "./handlers/WebhookEventTypes.js"
import { WebhooksLive } from "./handlers/Webhooks.js"
import { McpServersLive } from "./handlers/McpServers.js"
import * as McpServers from "../../services/McpServers.js"
import { ContainmentLive } from "./handlers/Containment.js"
import { OrgConscienceLive } from "./handlers/OrgConscience.js"
import { EvidenceRedactionLive } from "./handlers/EvidenceRedaction.js"
import { ExportLive } from "./handlers/Export.js"
import { type StreamOptions, StreamLive } from "./handlers/Stream.js"
import { CoherenceLive } from "./handlers/Coherence.js"
import { TeamsLive } from "./handlers/Teams.js"
import * as Teams from "../../services/Teams.js"
import * as Webhooks from "../../services/Webhooks.js"
import * as OrgConscience from "../../services/OrgConscience.js"
import * as Containment from "../../services/Containment.js"
import * as Enforcement from "../../services/Enforcement.js"
import * as Drift from "../../services/Drift.js"
import * as Claims from "../../services/Claims.js"
import * as Coherence from "../../services/Coherence.js"
import * as Risk from "../../services/Risk.js"
import * as TeamReputation from "../../services/TeamReputation.js"
import * as TeamIntelligence from "../../services/TeamIntelligence.js"
import * as EvidenceRedaction from "../../services/EvidenceRedaction.js"
import * as Agents from "../../services/Agents.js"
import * as Cards from "../../services/Cards.js"
import * as TrustEdges from "../../services/TrustEdges.js"
import * as Policies from "../../services/Policies.js"
import * as Reverify from "../../services/Reverify.js"
import * as Reclassifications from "../../services/Reclassifications.js"
import * as Reputation from "../../services/Reputation.js"
import * as Organizations from "../../services/Organizations.js"
import * as Transactions from "../../services/Transactions.js"
import * as Checkpoints from "../../services/Checkpoints.js"
import * as Traces from "../../services/Traces.js"
import * as Integrity from "../../services/Integrity.js"
import * as GovernanceLogs from "../../services/GovernanceLogs.js"
import * as PublicAccess from "../../services/PublicAccess.js"
import * as EvidenceExport from "../../services/EvidenceExport.js"
import * as Verification from "../../services/Verification.js"
import * as OnChain from "../../services/OnChain.js"
import * as Billing from "../../services/Billing.js"
import * as DeadLetters from "../../services/DeadLetters.js"
import * as Blog from "../../services/Blog.js"
import * as SelfSimilarity from "../../services/SelfSimilarity.js"
import * as Licenses from "../../services/Licenses.js"
import * as Administration from "../../services/Administration.js"
import * as ApiKeys from "../../services/ApiKeys.js"
import * as Credentials from "../../services/Credentials.js"
import { TrustEdgesLive } from "./handlers/TrustEdges.js"
import { ReclassificationsLive } from "./handlers/Reclassifications.js"
import { ReputationLive, ReputationQueriesLive } from "./handlers/Reputation.js"
import { TeamReputationLive } from "./handlers/TeamReputation.js"
import { TeamIntelligenceLive } from "./handlers/TeamIntelligence.js"
import { RiskLive } from "./handlers/Risk.js"
import { TransactionsLive } from "./handlers/Transactions.js"
import { OnChainLive } from "./handlers/OnChain.js"
import { ConsoleLive, ConsoleSignInLive } from "./handlers/Console.js"
import * as ChainSendBudget from "../../adapters/chain/ChainSendBudget.js"
import type { KeyCaps } from "../../adapters/store/identity/CredentialRepo.js"
import { defaults } from "../Config.js"
import { ApiKeyCaps } from "./ApiKeyCaps.js"
import { DeadLettersLive } from "./handlers/DeadLetters.js"
import { ApprovalSignal } from "../../adapters/bus/ApprovalSignal.js"
import * as Approvals from "../../services/Approvals.js"
import { ApprovalsLive } from "./handlers/Approvals.js"

export interface ApiOptions {
  /** Requests per second per plan id (RateLimiter.planRates). */
  readonly planRates: Readonly<Record<string, number>>
  /** Larger request bodies are refused with 413. */
  readonly maxBodyBytes: number
  /** The live stream's heartbeat, connection limit, access cache and credential re-check (defaults: 15 s, 10, 30 s, 30 s). */
  readonly stream?: Partial<StreamOptions> | undefined
  /** Live API keys per user and per organization (default: CANDOR_API_KEYS_PER_USER's and _PER_ORG's defaults). */
  readonly apiKeyCaps?: KeyCaps | undefined
  /** On-chain sends per organization per hour (default: CANDOR_CHAIN_SENDS_PER_HOUR's default). */
  readonly chainSendsPerHour?: number | undefined
}

export const OPENAPI_PATH = "/v1/openapi.json"
export const DOCS_PATH = "/docs"

/** One MiB: the largest legitimate body is a card with its conscience values. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024

/** Agent data (docs/api.md, "Agent data"): its handlers, on the process's agent-data queries. */
const AgentDataLive = Layer.mergeAll(
  AgentsLive,
  CardsLive,
  CheckpointsLive,
  TracesLive,
  ReverifyLive,
  IntegrityLive,
  DriftLive,
  SsmLive,
  EnforcementLive,
  EnforcementRecordsLive,
  AgentPermissionsLive
)

/**
 * The process's approval signal (src/Serve.ts provides the NATS KV one on a split deployment, the
 * in-memory one on the embedded default), else one of the API's own (tests, benchmarks): the held
 * side must wait on the signal the API publishes to, so the process's is taken when there is one.
 */
const ProcessApprovalSignal = Layer.unwrapEffect(
  Effect.map(
    Effect.serviceOption(ApprovalSignal),
    Option.match({
      onNone: () => ApprovalSignal.layerMemory,
      onSome: (signal) => Layer.succeed(ApprovalSignal, signal)
    })
  )
)

/** Every group's handlers. */
const HandlersLive = Layer.mergeAll(
  OrgsLive,
  ApiKeysLive,
  ClaimsLive,
  AdminLive,
  PlansLive,
  LicenseLive,
  BillingLive,
  EnterpriseLive,
  BlogLive,
  AgentDataLive,
  VerificationLive,
  GovernanceLogsLive,
  ContainmentLive,
  PoliciesLive,
  OrgConscienceLive,
  EvidenceRedactionLive,
  WebhookEventTypesLive,
  WebhooksLive,
  ExportLive,
  CoherenceLive,
  TeamsLive,
  TrustEdgesLive,
  ReputationLive,
  ReputationQueriesLive,
  TeamReputationLive,
  TeamIntelligenceLive,
  RiskLive,
  ReclassificationsLive,
  TransactionsLive,
  OnChainLive,
  ConsoleSignInLive,
  ConsoleLive,
  DeadLettersLive,
  // The MCP gateway's servers and tokens (docs/mcp.md), on their service.
  McpServersLive.pipe(Layer.provide(McpServers.layer)),
  ApprovalsLive
).pipe(
  // The domain services of the routes (services/), on the process's store and repositories
  // (adapters/store/Repositories.ts, provided with the store by Serve.ts or the test harness).
  Layer.provide(
    Layer.mergeAll(
      Teams.layer,
      Webhooks.layer,
      OrgConscience.layer,
      Containment.layer,
      Enforcement.layer,
      Drift.layer,
      Claims.layer,
      Coherence.layer,
      Risk.layer,
      TeamReputation.layer,
      TeamIntelligence.layer,
      EvidenceRedaction.layer,
      Agents.layer,
      Cards.layer,
      TrustEdges.layer,
      Policies.layer,
      Reverify.layer,
      Reclassifications.layer,
      Reputation.layer,
      Organizations.layer,
      Transactions.layer,
      Checkpoints.layer,
      Traces.layer,
      Integrity.layer,
      GovernanceLogs.layer,
      PublicAccess.layer,
      EvidenceExport.layer,
      Verification.layer,
      OnChain.layer,
      Billing.layer,
      DeadLetters.layer,
      Blog.layer,
      SelfSimilarity.layer,
      Licenses.layer,
      Administration.layer,
      ApiKeys.layer
    )
  ),
  // Human approval: its routes (the held side, the MCP proxy, calls the same service).
  Layer.provide(Approvals.layer.pipe(Layer.provide(ProcessApprovalSignal)))
)

/** The access rules and accounts the handlers and the middleware share, on the process's identity repositories. */
export const IdentityLive = Layer.mergeAll(IdentityAccessControl.layer, Accounts.layer)

/**
 * The API's routes (with docs and error bodies), ready for `HttpLayerRouter.serve`. Requires
 * `IdentityLive`'s services (provide it beside the server, so tests can also use them).
 */
export const layer = (options: ApiOptions) =>
  Layer.mergeAll(
    HttpLayerRouter.addHttpApi(CandorApi, { openapiPath: OPENAPI_PATH }).pipe(
      Layer.provide(
        Layer.merge(
          HandlersLive,
          // The live stream re-checks its credential (services/Credentials.ts) for as long as it is open.
          StreamLive(options.stream).pipe(Layer.provide(Credentials.layer))
        )
      ),
      // Per-tenant limits of what costs Candor something: API keys, on-chain sends (issue 24).
      Layer.provide(
        Layer.merge(
          Layer.succeed(
            ApiKeyCaps,
            options.apiKeyCaps ?? { perUser: defaults.apiKeysPerUser, perOrg: defaults.apiKeysPerOrg }
          ),
          ChainSendBudget.layer(options.chainSendsPerHour ?? defaults.chainSendsPerHour)
        )
      )
    ),
    HttpApiSwagger.layerHttpLayerRouter({ api: CandorApi, path: DOCS_PATH }),
    ReputationPageRoute,
    ConsoleRoute,
    ErrorBodiesLive({ maxBodyBytes: options.maxBodyBytes })
  ).pipe(
    // The middleware of the authenticated routes; the public ones ask it too, for private agents.
    Layer.provide(CredentialAuthentication.layer({ planRates: options.planRates })),
    Layer.provide(RateLimiter.layer),
    // Chain verification (the verify route and the reputation page): cached per tree size, one per process.
    Layer.provide(ChainVerifier.layer())
  )
