/**
 * Every repository of the store, provided in one place: one Tag per repository (`XRepo`, written
 * `Tag` + `make` + `layer` over `SqlClient`), merged here into one layer. The store's layer
 * (SqlStore.ts) carries it, so a process opens its database once at its composition root
 * (src/Serve.ts) and every domain service, route and worker of that process reads the same
 * repositories from its context; none provides one of its own.
 *
 * A repository holds no state of its own (each `make` only takes the process's `SqlClient`, and
 * the key-encryption key for those that seal fields): which repositories a process builds changes
 * no behaviour, and the ones it never reads cost a closure each. Its statements run in the
 * caller's transaction when there is one (@effect/sql finds it in the fiber's context).
 *
 * Not here, by design: `Store` (Store.ts, SqlStore.ts), the checkpoint log's service; the services
 * configured per process (`GovernanceLog`, with its log origin; `ChainVerifier`, with its cache);
 * `CoherenceInputs.ts`, a computation over two repositories with its cache; `EventOutbox.ts` and
 * `WebhookDeliveryOutbox.ts`, which only shape outbox items.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import * as Layer from "effect/Layer"
import type { SecretKeys } from "../keys/SecretKeys.js"
import * as AgentNameRepo from "./AgentNameRepo.js"
import * as AgentQueries from "./AgentQueries.js"
import * as AnchorRepo from "./AnchorRepo.js"
import * as ApprovalRepo from "./ApprovalRepo.js"
import * as CoherenceRepo from "./CoherenceRepo.js"
import * as DeadLetterRepo from "./DeadLetterRepo.js"
import * as EvidenceRedactionRepo from "./EvidenceRedactionRepo.js"
import * as ExportRepo from "./ExportRepo.js"
import * as CatalogRepo from "./identity/CatalogRepo.js"
import * as CredentialRepo from "./identity/CredentialRepo.js"
import * as IdentityRepo from "./identity/IdentityRepo.js"
import * as KeyContainmentRepo from "./KeyContainmentRepo.js"
import * as KeyRepo from "./KeyRepo.js"
import * as McpRepo from "./McpRepo.js"
import * as MemberScores from "./MemberScores.js"
import * as OrgConscienceRepo from "./OrgConscienceRepo.js"
import * as PolicyRepo from "./PolicyRepo.js"
import * as ProofRepo from "./ProofRepo.js"
import * as ReclassificationRepo from "./ReclassificationRepo.js"
import * as ReevaluationRepo from "./ReevaluationRepo.js"
import * as ReputationRepo from "./ReputationRepo.js"
import * as RiskRepo from "./RiskRepo.js"
import * as ScopedTransactionRepo from "./ScopedTransactionRepo.js"
import * as TeamIntelligenceInputs from "./TeamIntelligenceInputs.js"
import * as TeamRepo from "./TeamRepo.js"
import * as TeamReputationRepo from "./TeamReputationRepo.js"
import * as TrustEdgeRepo from "./TrustEdgeRepo.js"
import * as WebhookRepo from "./WebhookRepo.js"
import * as WitnessRepo from "./WitnessRepo.js"

/** Every repository's Tag. */
export type Repositories =
  | AgentNameRepo.AgentNameRepo
  | AgentQueries.AgentQueries
  | AnchorRepo.AnchorRepo
  | ApprovalRepo.ApprovalRepo
  | CatalogRepo.CatalogRepo
  | CoherenceRepo.CoherenceRepo
  | CredentialRepo.CredentialRepo
  | DeadLetterRepo.DeadLetterRepo
  | EvidenceRedactionRepo.EvidenceRedactionRepo
  | ExportRepo.ExportRepo
  | IdentityRepo.IdentityRepo
  | KeyContainmentRepo.KeyContainmentRepo
  | KeyRepo.KeyRepo
  | McpRepo.McpRepo
  | MemberScores.MemberScores
  | OrgConscienceRepo.OrgConscienceRepo
  | PolicyRepo.PolicyRepo
  | ProofRepo.ProofRepo
  | ReclassificationRepo.ReclassificationRepo
  | ReevaluationRepo.ReevaluationRepo
  | ReputationRepo.ReputationRepo
  | RiskRepo.RiskRepo
  | ScopedTransactionRepo.ScopedTransactionRepo
  | TeamIntelligenceInputs.TeamIntelligenceInputs
  | TeamRepo.TeamRepo
  | TeamReputationRepo.TeamReputationRepo
  | TrustEdgeRepo.TrustEdgeRepo
  | WebhookRepo.WebhookRepo
  | WitnessRepo.WitnessRepo

/** Every repository, on the process's SqlClient and key-encryption key (sealed fields and webhook secrets). */
export const layer: Layer.Layer<Repositories, never, SqlClient.SqlClient | SecretKeys> = Layer.mergeAll(
  AgentNameRepo.layer,
  AgentQueries.layer,
  AnchorRepo.layer,
  ApprovalRepo.layer,
  CatalogRepo.layer,
  CoherenceRepo.layer,
  CredentialRepo.layer,
  DeadLetterRepo.layer,
  EvidenceRedactionRepo.layer,
  ExportRepo.layer,
  IdentityRepo.layer,
  KeyContainmentRepo.layer,
  KeyRepo.layer,
  McpRepo.layer,
  MemberScores.layer,
  OrgConscienceRepo.layer,
  PolicyRepo.layer,
  ProofRepo.layer,
  ReclassificationRepo.layer,
  ReevaluationRepo.layer,
  ReputationRepo.layer,
  RiskRepo.layer,
  ScopedTransactionRepo.layer,
  TeamIntelligenceInputs.layer,
  TeamRepo.layer,
  TeamReputationRepo.layer,
  TrustEdgeRepo.layer,
  WebhookRepo.layer,
  WitnessRepo.layer
)
