/**
 * Team reputation computations (docs/team-reputation.md), shared by the API (first read, on demand,
 * after a roster or team card change) and the workers (the periodic refresh, a member's grade
 * change).
 *
 * One computation: gather the team's inputs (members, their scores and statuses through the
 * MemberScores seam, their active cards, the team card, the roster changes after creation) and
 * hash them; the same hash as the stored result's records nothing and costs nothing (the stored
 * result is answered, `computed: false`). Otherwise, in ONE transaction under the organization's
 * row lock: the plan check, the assessment, the score over every assessment of the team, the
 * quota ledger row (overage beyond the plan's included computations), and the events (quota
 * warning at 80% and exceeded at the first overage, each once a month; score changed
 * from the last notified score; grade changed), all in the outbox with the change.
 *
 * Automatic recomputations (roster and card changes, a member's grade change, the periodic
 * refresh) of one team are coalesced to one per hour: one asked for within the hour after the
 * team's last automatic computation waits (`team_reputation_triggers.pending_since`) and the
 * refresh runs it once the hour has passed. On-demand ones (and the first read) run at once.
 *
 * The `TeamReputation` service is what the API asks of it: a team's score (computed on its first
 * read), an on-demand recomputation, the assessments, the organization's quota, each refused
 * (`TeamReputationRefused`) when the organization's plan lacks the feature. Who may see the team,
 * and recompute it, is the caller's to check.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { randomUUID } from "node:crypto"
import { MemberScores } from "../adapters/store/MemberScores.js"
import { Store, StoreError } from "../adapters/store/Store.js"
import { TeamRepo } from "../adapters/store/TeamRepo.js"
import { type StoredTeamReputation, TeamReputationRepo } from "../adapters/store/TeamReputationRepo.js"
import { transaction } from "../adapters/store/Transaction.js"
import { teamGradeChangedEvent, teamQuotaEvent, teamScoreChangedEvent } from "../core/EventData.js"
import { type EventOccurrence, newEnvelope } from "../core/Events.js"
import { TEAM_ASSESSMENT_ID_PREFIX, type TeamReputation as TeamScore } from "../core/schema/TeamReputation.js"
import type { Team, TeamWithMembers } from "../core/schema/Team.js"
import { assessTeam, type TeamInputs, teamInputsHash } from "../core/TeamAssessment.js"
import { computeTeamReputation } from "../core/TeamReputation.js"
import {
  includedComputations,
  PLAN_REFUSAL,
  periodOf,
  planAllowsTeamReputation,
  quotaStep,
  usagePercent
} from "../core/TeamReputationQuota.js"
import { eventDraft } from "../adapters/store/EventOutbox.js"

/** Automatic recomputations of one team: at most one per this window. */
export const AUTOMATIC_WINDOW_MS = 3_600_000
/** The periodic refresh looks again at a team whose inputs were last compared longer ago than this. */
export const STALE_AFTER_MS = 24 * 3_600_000
const TREND_WINDOW_MS = 30 * 24 * 3_600_000

/** Why a team's reputation cannot be computed (the API answers 404, 409 and 403). */
export class TeamReputationRefused extends Data.TaggedError("TeamReputationRefused")<{
  readonly reason: "not_found" | "archived" | "plan"
  readonly message: string
}> {}

export type ComputeMode = "on_demand" | "automatic"

export interface Computed {
  readonly reputation: TeamScore
  /** false: the inputs were unchanged, nothing recorded. */
  readonly computed: boolean
}

const refused = (reason: TeamReputationRefused["reason"], message: string) =>
  Effect.fail(new TeamReputationRefused({ reason, message }))

/** The organization's plan allows team reputation; 403's reason otherwise. */
export const requirePlan = (orgId: string) =>
  Effect.gen(function* () {
    const plan = yield* (yield* TeamReputationRepo).plan(orgId)
    if (plan === undefined || !planAllowsTeamReputation(plan)) return yield* refused("plan", PLAN_REFUSAL)
    return plan
  })

/** Everything a computation reads of the team, as hashed. */
const gatherInputs = (found: TeamWithMembers) =>
  Effect.gen(function* () {
    const teams = yield* TeamRepo
    const teamId = found.team.team_id
    const members = yield* (yield* MemberScores).memberScoresOf(found.members.map((m) => m.agent_id))
    const memberCards = yield* teams.memberCards(teamId)
    const teamCard = yield* teams.activeCard(teamId)
    const rosterChanges = yield* (yield* TeamReputationRepo).rosterChanges(teamId)
    return {
      members,
      member_cards: memberCards,
      team_card: teamCard?.card_json,
      roster_changes: rosterChanges
    } satisfies TeamInputs
  })

const scoreEvents = (
  reputation: TeamScore,
  stored: StoredTeamReputation | undefined,
  assessmentId: string,
  at: Date
): {
  readonly events: ReadonlyArray<EventOccurrence>
  readonly score: number
  readonly grade: TeamScore["grade"]
} => {
  // The first computation sets what was notified: nothing moved yet.
  if (stored === undefined) return { events: [], score: reputation.score, grade: reputation.grade }
  const events: Array<EventOccurrence> = []
  let score = stored.last_notified_score
  let grade = stored.last_notified_grade
  const ids = { team_id: reputation.team_id, org_id: reputation.org_id, assessment_id: assessmentId }
  // Any change of the team's score, as the spec's event table says ("a team score changes"); the
  // agents' score event keeps the 10-point rule its own row gives (core/ReputationIncrement.ts).
  if (reputation.score !== score) {
    events.push(
      teamScoreChangedEvent(
        {
          ...ids,
          score_before: score,
          score_after: reputation.score,
          grade: reputation.grade,
          components: reputation.components
        },
        at
      )
    )
    score = reputation.score
  }
  if (reputation.grade !== grade) {
    events.push(
      teamGradeChangedEvent({ ...ids, grade_before: grade, grade_after: reputation.grade, score: reputation.score }, at)
    )
    grade = reputation.grade
  }
  return { events, score, grade }
}

/**
 * Computes the team's reputation if its inputs moved since the stored result (see the module
 * comment); answers the stored result, `computed: false`, when they did not.
 */
export const computeTeam = (teamId: string, mode: ComputeMode) =>
  Effect.gen(function* () {
    const teams = yield* TeamRepo
    const repo = yield* TeamReputationRepo
    const store = yield* Store
    const sql = yield* SqlClient.SqlClient
    const now = new Date(yield* Clock.currentTimeMillis)
    const at = now.toISOString()

    const found = yield* teams.get(teamId)
    if (found === undefined) return yield* refused("not_found", `team ${teamId} not found`)
    if (found.team.status === "archived") return yield* refused("archived", `team ${teamId} is archived`)
    const orgId = found.team.org_id
    const inputs = yield* gatherInputs(found)
    const hash = teamInputsHash(inputs)

    const unchanged = (stored: StoredTeamReputation) =>
      Effect.gen(function* () {
        yield* repo.touch(teamId, at)
        if (mode === "automatic") yield* repo.clearPending(teamId)
        return { reputation: stored.reputation, computed: false } satisfies Computed
      })

    const before = yield* repo.stored(teamId)
    if (before !== undefined && before.inputs_hash === hash) return yield* unchanged(before)

    return yield* transaction(
      sql,
      Effect.gen(function* () {
        yield* teams.lockOrg(orgId)
        const plan = yield* requirePlan(orgId)
        // Another computation may have committed these inputs while this one gathered them.
        const stored = yield* repo.stored(teamId)
        if (stored !== undefined && stored.inputs_hash === hash) return yield* unchanged(stored)

        const assessmentId = `${TEAM_ASSESSMENT_ID_PREFIX}${randomUUID()}`
        const assessment = assessTeam(inputs)
        yield* repo.recordAssessment({
          assessment_id: assessmentId,
          team_id: teamId,
          org_id: orgId,
          assessed_at: at,
          ...assessment,
          inputs_hash: hash,
          source: "computation"
        })
        const history = yield* repo.assessmentInputs(teamId)
        const result = computeTeamReputation(
          {
            assessments: history,
            member_scores: assessment.member_scores.map((m) => m.score),
            roster_changes: inputs.roster_changes
          },
          now
        )
        const past = yield* repo.scoreAt(teamId, new Date(now.getTime() - TREND_WINDOW_MS).toISOString())
        const reputation: TeamScore = {
          team_id: teamId,
          org_id: orgId,
          score: result.score,
          grade: result.grade,
          tier: result.tier,
          is_eligible: result.is_eligible,
          total_assessments: result.total_assessments,
          last_assessed: history.reduce<string | null>(
            (newest, a) => (newest === null || a.assessed_at > newest ? a.assessed_at : newest),
            null
          ),
          member_count: inputs.members.length,
          confidence: result.confidence,
          components: result.components.map((c) => ({ ...c, inputs: { ...c.inputs } })),
          computed_at: at,
          trend_30d: past === undefined ? null : result.score - past
        }

        const period = periodOf(now)
        const included = includedComputations(plan)
        const usage = yield* repo.usage(orgId, period)
        const step = quotaStep(included, usage.used)
        yield* repo.recordComputation({
          org_id: orgId,
          team_id: teamId,
          assessment_id: assessmentId,
          score: reputation.score,
          computed_at: at,
          period,
          overage: step.overage,
          cost: step.cost
        })

        const events: Array<EventOccurrence> = []
        if (included !== null) {
          const notice = {
            org_id: orgId,
            period,
            usage_percent: usagePercent(step.used, included),
            computations_used: step.used,
            computations_included: included
          }
          if (step.warning && (yield* repo.claimNotice(orgId, period, "warning", at)))
            events.push(teamQuotaEvent("quota.team_reputation_warning", notice, now))
          if (step.exceeded && (yield* repo.claimNotice(orgId, period, "exceeded", at)))
            events.push(teamQuotaEvent("quota.team_reputation_exceeded", notice, now))
        }
        const notified = scoreEvents(reputation, stored, assessmentId, now)
        events.push(...notified.events)

        yield* repo.putScore({
          reputation,
          inputs_hash: hash,
          last_notified_score: notified.score,
          last_notified_grade: notified.grade
        })
        if (mode === "automatic") yield* repo.markAutomatic(teamId, at)
        if (events.length > 0) yield* store.enqueueOutbox(events.map((e) => eventDraft(newEnvelope(e))))
        return { reputation, computed: true } satisfies Computed
      })
    ).pipe(
      Effect.catchTag("SqlError", (cause) => Effect.fail(new StoreError({ operation: "computeTeamReputation", cause })))
    )
  })

export type AutomaticOutcome = "computed" | "unchanged" | "deferred"

/**
 * An automatic recomputation: at once when the team's last automatic computation is an hour old
 * (or there is none), else left waiting for the refresh to run it when the hour has passed.
 */
export const recomputeAutomatically = (teamId: string) =>
  Effect.gen(function* () {
    const repo = yield* TeamReputationRepo
    const now = yield* Clock.currentTimeMillis
    const { last_automatic_at } = yield* repo.triggerState(teamId)
    if (last_automatic_at !== null && now - Date.parse(last_automatic_at) < AUTOMATIC_WINDOW_MS) {
      yield* repo.markPending(teamId, new Date(now).toISOString())
      return "deferred" as AutomaticOutcome
    }
    const { computed } = yield* computeTeam(teamId, "automatic")
    return (computed ? "computed" : "unchanged") as AutomaticOutcome
  })

/**
 * An automatic recomputation that never fails its caller (a committed roster or card change, a
 * worker's pass): a refusal is expected (an organization without the feature, a team archived
 * meanwhile) and logged at debug level; anything else is logged as a warning.
 */
export const recomputeQuietly = (teamId: string) =>
  recomputeAutomatically(teamId).pipe(
    Effect.catchTag("TeamReputationRefused", (refusal) =>
      Effect.as(
        Effect.logDebug("team reputation not recomputed").pipe(
          Effect.annotateLogs({ team_id: teamId, reason: refusal.reason })
        ),
        "refused" as const
      )
    ),
    Effect.catchAllCause((cause) =>
      Effect.as(
        Effect.logWarning("team reputation recomputation failed").pipe(
          Effect.annotateLogs({ team_id: teamId, cause: String(cause) })
        ),
        "failed" as const
      )
    )
  )

/**
 * An agent's grade changed: its current active teams are recomputed, each coalesced to once per
 * hour (the coordinator's entry point from agent reputation).
 */
export const markMemberChanged = (agentId: string) =>
  Effect.gen(function* () {
    const teams = yield* TeamRepo
    const teamIds = yield* teams.teamsOfAgent(agentId)
    for (const teamId of teamIds) yield* recomputeQuietly(teamId)
    return teamIds
  })

/** What the API's reads and computations go through. */
type Needs = Effect.Effect.Context<ReturnType<typeof computeTeam>> | TeamReputationRepo

export const make = Effect.gen(function* () {
  const repo = yield* TeamReputationRepo
  const context = yield* Effect.context<Needs>()

  /** The team's stored score; the first read of an active team computes it. */
  const reputation = (team: Team) =>
    Effect.gen(function* () {
      yield* requirePlan(team.org_id)
      const stored = yield* repo.stored(team.team_id)
      if (stored !== undefined) return stored.reputation
      if (team.status === "archived") {
        return yield* refused(
          "not_found",
          `team ${team.team_id} has no reputation: it was archived before its first computation`
        )
      }
      return (yield* computeTeam(team.team_id, "on_demand")).reputation
    }).pipe(Effect.provide(context))

  /** Recomputes the team's score now; `computed: false` when its inputs were unchanged. */
  const recompute = (team: Team) =>
    Effect.gen(function* () {
      yield* requirePlan(team.org_id)
      const { computed, reputation } = yield* computeTeam(team.team_id, "on_demand")
      return { ...reputation, computed }
    }).pipe(Effect.provide(context))

  /** A page of the team's assessments. */
  const assessments = (team: Team, page: { readonly limit: number; readonly offset: number }) =>
    Effect.gen(function* () {
      yield* requirePlan(team.org_id)
      const found = yield* repo.assessments(team.team_id, page.limit, page.offset)
      return {
        team_id: team.team_id,
        assessments: found.items,
        total: found.total,
        limit: page.limit,
        offset: page.offset
      }
    }).pipe(Effect.provide(context))

  /** The organization's computations this month against what its plan includes. */
  const quota = (orgId: string) =>
    Effect.gen(function* () {
      const plan = yield* requirePlan(orgId)
      const period = periodOf(new Date(yield* Clock.currentTimeMillis))
      const usage = yield* repo.usage(orgId, period)
      const included = includedComputations(plan)
      return {
        org_id: orgId,
        period,
        plan_id: plan.plan_id,
        included,
        used: usage.used,
        overage: usage.overage,
        overage_cost: usage.overage_cost,
        unlimited: included === null
      }
    }).pipe(Effect.provide(context))

  /** The team's score as last stored, if any (what its public badge shows: no plan check, nothing computed). */
  const stored = (teamId: string) => Effect.map(repo.stored(teamId), (found) => found?.reputation)

  return { reputation, recompute, assessments, quota, stored }
})

export class TeamReputation extends Context.Tag("candor/services/TeamReputation")<
  TeamReputation,
  Effect.Effect.Success<typeof make>
>() {}

export const layer = Layer.effect(TeamReputation, make)
