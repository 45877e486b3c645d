/**
 * The repository conformance suite: the cases of every repository of the store
 * (adapters/store/Repositories.ts), one `describe` per repository, run on PGlite in the fast lane
 * (Repositories.pglite.test.ts) and on PostgreSQL in the server lane (Repositories.postgres.test.ts).
 * A new repository gets its cases here.
 *
 * Each file runs every case on one migrated database, so a case works on ids of its own (organizations,
 * agents, prefixes) and reads back only what it wrote; a case that reads a whole table says so.
 */
import type { Vitest } from "@effect/vitest"
import type * as SqlClient from "@effect/sql/SqlClient"
import { describe } from "vitest"
import type { Repositories } from "../../../adapters/store/Repositories.js"
import type { Store } from "../../../adapters/store/Store.js"
import * as AgentQueries from "./AgentQueriesCases.js"
import * as Agent from "./AgentRepoCases.js"
import * as Chain from "./ChainRepoCases.js"
import * as DeadLetterRepo from "./DeadLetterRepoCases.js"
import * as Identity from "./IdentityRepoCases.js"
import * as KeyRepo from "./KeyRepoCases.js"
import * as Org from "./OrgRepoCases.js"
import * as ProofRepo from "./ProofRepoCases.js"
import * as Score from "./ScoreRepoCases.js"
import * as TeamRepo from "./TeamRepoCases.js"
import * as TrustEdgeRepo from "./TrustEdgeRepoCases.js"
import * as WebhookRepo from "./WebhookRepoCases.js"

export type Services = Repositories | Store | SqlClient.SqlClient

export const repositoryConformance = (it: Vitest.MethodsNonLive<Services>) => {
  describe("AgentNameRepo", () => {
    it.effect("a display name set and removed under the row lock; the first default name stays", () => Agent.agentNames)
  })

  describe("AgentQueries", () => {
    it.effect("summarises agents, unknown ones with the defaults", () => AgentQueries.summaries)
    it.effect(
      "names an agent by the label of its first committed batch, also over a row that came first",
      () => AgentQueries.namesByFirstLabel
    )
    it.effect(
      "pages non-clear checkpoints and violating traces newest first; counts violations",
      () => AgentQueries.pagesAndCounts
    )
    it.effect(
      "re-evaluates verdicts once, keeping the counters in step, under concurrent calls",
      () => AgentQueries.concurrentReevaluation
    )
    it.effect("lists only AIP drift alerts, newest first", () => AgentQueries.aipDriftAlertsOnly)
  })

  describe("AnchorRepo", () => {
    it.effect(
      "anchors written, sent, settled, newest first by cursor and reader; the logs left to anchor",
      () => Chain.anchors
    )
  })

  describe("ApprovalRepo", () => {
    it.effect(
      "read back by id; settled once, unexpired only; due ones expired; pages newest first by status",
      () => Org.approvals
    )
  })

  describe("CatalogRepo", () => {
    it.effect(
      "plans as seeded; a promo by code, any case, replaced; posts newest first; a claimed agent's record",
      () => Identity.catalog
    )
  })

  describe("CoherenceRepo", () => {
    it.effect(
      "an organization's fleet version, moved by every card and claim change of its own (triggers); the fleet's cards and the agents without",
      () => Org.coherenceFleet
    )
  })

  describe("CredentialRepo", () => {
    it.effect(
      "keys under caps, by hash with the creator's role, rotated, revoked; sessions live until ended",
      () => Identity.keysAndSessions
    )
  })

  describe("DeadLetterRepo", () => {
    // Reads every dead letter: the only case that writes any.
    it.effect(
      "stored once by id; bounded pages by cursor; an organization's pages by its agents",
      () => DeadLetterRepo.deadLetterPages
    )
  })

  describe("EvidenceRedactionRepo", () => {
    it.effect(
      "an organization's mode read, locked and set; none for an unknown organization",
      () => Org.evidenceRedaction
    )
  })

  describe("ExportRepo", () => {
    it.effect("pages of a log by position, tree head and time; inclusion proofs", () => Chain.exportPages)
  })

  describe("IdentityRepo", () => {
    it.effect(
      "users, organizations with a unique slug, members and roles, ownership, deletion",
      () => Identity.usersOrgsAndMembers
    )
    it.effect(
      "invites by token until accepted or expired; one claim per agent; who sees which agents",
      () => Identity.invitesAndClaims
    )
  })

  describe("KeyContainmentRepo", () => {
    it.effect(
      "a key's containment written, read and lifted; the agents claimed with it, by id, bounded",
      () => Agent.keyContainment
    )
  })

  describe("KeyRepo", () => {
    it.effect("a new key retires the others; known keys are left alone", () => KeyRepo.newKeyRetiresOthers)
  })

  describe("McpRepo", () => {
    it.effect(
      "servers and tokens written, listed oldest first, updated, deleted once; a token hash is unique",
      () => Org.mcpServersAndTokens
    )
  })

  describe("MemberScores", () => {
    it.effect("each given agent's score, eligibility and status, in the order given", () => Score.memberScores)
  })

  describe("OrgConscienceRepo", () => {
    it.effect(
      "values inserted, reordered, updated, removed; the mode; the log newest first with increasing ids",
      () => Org.orgConscience
    )
    it.effect(
      "an agent's context inputs in one statement equal the four reads they replace",
      () => Org.agentContextInputs
    )
  })

  describe("PolicyRepo", () => {
    it.effect(
      "versions numbered on, in force or taken out of it, the history newest first; an agent's policies",
      () => Agent.policies
    )
  })

  describe("ProofRepo", () => {
    it.effect(
      "proof rows: request, start, fail, ask again, complete (attached outside the signature)",
      () => ProofRepo.proofRows
    )
    it.effect(
      "a failed proof whose job was given up gets a new job when asked again",
      () => ProofRepo.givenUpJobAskedAgain
    )
    it.effect("lists an agent's certificates in chain order, in batches", () => ProofRepo.certificatesInChainOrder)
  })

  describe("ReclassificationRepo", () => {
    it.effect(
      "a checkpoint reclassified once, listed, no longer a violation; card amendments",
      () => Chain.reclassifications
    )
  })

  describe("ReevaluationRepo", () => {
    it.effect(
      "a re-evaluated verdict in the log's prefix, with its governance entry and session",
      () => Chain.reevaluatedVerdicts
    )
  })

  describe("ReputationRepo", () => {
    it.effect(
      "a stored score read back; base scores; an agent's organization and visibility",
      () => Score.reputationScores
    )
    it.effect(
      "history newest first since a time; one weekly snapshot per week; the score at a time",
      () => Score.reputationHistory
    )
    it.effect(
      "a recomputation's reads in one statement equal the six reads they replace; the checks of the four others",
      () => Score.recomputationReads
    )
  })

  describe("RiskRepo", () => {
    it.effect("assessments read back by id; an agent's history newest first, paged", () => Agent.riskAssessments)
    it.effect("an agent's boundary violations since a time, newest first", () => Agent.riskViolations)
  })

  describe("ScopedTransactionRepo", () => {
    it.effect(
      "read back by id; closed once; an agent's listed newest first, by status at a time",
      () => Agent.scopedTransactions
    )
  })

  describe("TeamIntelligenceInputs", () => {
    it.effect("members' verdict counts and traces since a time", () => Score.teamIntelligenceInputs)
  })

  describe("TeamRepo", () => {
    it.effect(
      "concurrent creations of one name: one team, under the organization's lock; the index refuses a second",
      () => TeamRepo.concurrentCreations
    )
    it.effect(
      "membership periods: the roster at any time, the history newest first, an agent in several teams",
      () => TeamRepo.membershipPeriods
    )
    it.effect(
      "card versions: concurrent PUTs under the team's lock are distinct, consecutive, one active; diffs",
      () => TeamRepo.cardVersions
    )
  })

  describe("TeamReputationRepo", () => {
    it.effect(
      "an organization's plan; roster changes; the recomputation's hour; a month's notice sent once",
      () => Score.teamReputationBookkeeping
    )
  })

  describe("TrustEdgeRepo", () => {
    it.effect("one active edge per pair, soft deletes, listing by direction", () => TrustEdgeRepo.lifecycle)
    it.effect("at most 1000 active outgoing edges", () => TrustEdgeRepo.outgoingLimit)
    it.effect("concurrent creates of one pair: one edge", () => TrustEdgeRepo.concurrentCreates)
    it.effect(
      "the recursive-CTE graphs of random graphs give the pure walk the whole graph's answers",
      () => TrustEdgeRepo.graphsOfRandomGraphs
    )
    it.effect(
      "the recursive-CTE graphs where the 50-agent limit cuts a hop",
      () => TrustEdgeRepo.graphsWhereTheLimitCuts
    )
  })

  describe("WebhookRepo", () => {
    it.effect("endpoints, candidates, deliveries, redelivery, disabling", () => WebhookRepo.endpointsAndDeliveries)
    it.effect(
      "the delivery relay's read: delivery, endpoint and live secrets in one statement",
      () => WebhookRepo.attemptContextRead
    )
    // Rewrites every webhook row's event names.
    it.effect(
      "migration 0011 folds the older event names into the catalogue's",
      () => WebhookRepo.legacyEventNamesFolded
    )
  })

  describe("WitnessRepo", () => {
    it.effect(
      "logs due for a witness until cosigned at their size; failures with and without its size",
      () => Chain.witnessCosignatures
    )
  })
}
