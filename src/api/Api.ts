/**
 * The management API (docs/api.md): one `HttpApi`, every path under /v1, one group
 * per area. Declarations only (paths, schemas, errors, the Authentication middleware); handlers
 * live in ./handlers and are wired in ApiLive.ts. The OpenAPI document is derived from this value
 * and served at /v1/openapi.json.
 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as OpenApi from "@effect/platform/OpenApi"
import { InternalError, ServiceUnavailable } from "../../adapters/http/ApiErrors.js"
import { StoreFailureErrors } from "../../adapters/http/StoreFailure.js"
import { rewriteErrorBodies } from "./OpenApiErrors.js"
import { BillingApi } from "./groups/Billing.js"
import { BlogApi } from "./groups/Blog.js"
import { ClaimsApi } from "./groups/Claims.js"
import { EnterpriseApi } from "./groups/Enterprise.js"
import { AdminApi } from "./groups/Admin.js"
import { ApiKeysApi } from "./groups/ApiKeys.js"
import { LicenseApi } from "./groups/License.js"
import { OrgsApi } from "./groups/Orgs.js"
import { PlansApi } from "./groups/Plans.js"
// Agent data (docs/api.md, "Agent data"):
import { AgentsApi } from "./groups/Agents.js"
import { CardsApi } from "./groups/Cards.js"
import { CheckpointsApi } from "./groups/Checkpoints.js"
import { DriftApi } from "./groups/Drift.js"
import { EnforcementApi } from "./groups/Enforcement.js"
import { EnforcementRecordsApi } from "./groups/EnforcementRecords.js"
import { AgentPermissionsApi } from "./groups/AgentPermissions.js"
import { IntegrityApi } from "./groups/Integrity.js"
import { ReverifyApi } from "./groups/Reverify.js"
import { SsmApi } from "./groups/Ssm.js"
import { TracesApi } from "./groups/Traces.js"
import { VerificationApi } from "./groups/Verification.js"
import { GovernanceLogsApi } from "./groups/GovernanceLogs.js"
import { PoliciesApi } from "./groups/Policies.js"
import { WebhookEventTypesApi } from "./groups/WebhookEventTypes.js"
import { ContainmentApi } from "./groups/Containment.js"
import { OrgConscienceApi } from "./groups/OrgConscience.js"
import { ExportApi } from "./groups/Export.js"
import { WebhooksApi } from "./groups/Webhooks.js"
import { McpServersApi } from "./groups/McpServers.js"
import { StreamApi } from "./groups/Stream.js"
import { CoherenceApi } from "./groups/Coherence.js"
import { TeamsApi } from "./groups/Teams.js"
import { TrustEdgesApi } from "./groups/TrustEdges.js"
import { ReclassificationsApi } from "./groups/Reclassifications.js"
import { ReputationApi, ReputationQueriesApi } from "./groups/Reputation.js"
import { TeamReputationApi } from "./groups/TeamReputation.js"
import { TeamIntelligenceApi } from "./groups/TeamIntelligence.js"
import { RiskApi } from "./groups/Risk.js"
import { TransactionsApi } from "./groups/Transactions.js"
import { OnChainApi } from "./groups/OnChain.js"
import { ConsoleApi, ConsoleSignInApi } from "./groups/Console.js"
import { DeadLettersApi } from "./groups/DeadLetters.js"
import { ApprovalsApi } from "./groups/Approvals.js"
import { EvidenceRedactionApi } from "./groups/EvidenceRedaction.js"

export class CandorApi extends HttpApi.make("candor")
  .add(OrgsApi)
  .add(ApiKeysApi)
  .add(ClaimsApi)
  .add(AdminApi)
  .add(PlansApi)
  .add(LicenseApi)
  .add(BillingApi)
  .add(EnterpriseApi)
  .add(BlogApi)
  // Agent data (docs/api.md, "Agent data"):
  .add(AgentsApi)
  .add(CardsApi)
  .add(CheckpointsApi)
  .add(TracesApi)
  .add(ReverifyApi)
  .add(IntegrityApi)
  .add(DriftApi)
  .add(SsmApi)
  .add(EnforcementApi)
  .add(EnforcementRecordsApi)
  .add(AgentPermissionsApi)
  .add(VerificationApi)
  .add(GovernanceLogsApi)
  .add(PoliciesApi)
  .add(WebhooksApi)
  .add(WebhookEventTypesApi)
  .add(ContainmentApi)
  .add(OrgConscienceApi)
  .add(EvidenceRedactionApi)
  .add(ExportApi)
  .add(StreamApi)
  .add(CoherenceApi)
  .add(TeamsApi)
  .add(TrustEdgesApi)
  .add(ReputationApi)
  .add(ReputationQueriesApi)
  .add(TeamReputationApi)
  .add(TeamIntelligenceApi)
  .add(RiskApi)
  .add(ReclassificationsApi)
  .add(TransactionsApi)
  .add(OnChainApi)
  .add(ConsoleSignInApi)
  .add(ConsoleApi)
  .add(DeadLettersApi)
  .add(McpServersApi)
  .add(ApprovalsApi)
  .addError(InternalError)
  .addError(ServiceUnavailable)
  // A domain service's StoreError, answered 503 or 500 here for every route (adapters/http/StoreFailure.ts).
  .addError(StoreFailureErrors[0])
  .addError(StoreFailureErrors[1])
  .prefix("/v1")
  .annotate(OpenApi.Title, "Candor management API")
  .annotate(OpenApi.Version, "v1")
  .annotate(OpenApi.Transform, rewriteErrorBodies)
  .annotate(
    OpenApi.Description,
    'Agent integrity gateway: agents, checkpoints, traces, cards, organizations. Errors are {"error": "..."}.'
  ) {}
