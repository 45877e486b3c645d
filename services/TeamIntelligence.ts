/**
 * Team intelligence (docs/intelligence.md): what the pure computations (core/FaultLines.ts,
 * core/Forecast.ts, core/PolicyRecommendation.ts) make of the recorded data of a team's current
 * members. Nothing is stored: the same records give the same answer but `computed_at`. The
 * forecast adds the narrative of the deployment's model (ANALYSIS_MODEL) when there is one.
 *
 * The caller reads the team (and checks who may ask: the forecast may spend a model's tokens).
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { ForecastNarrator } from "../adapters/analysis/ForecastNarrator.js"
import { ReputationRepo } from "../adapters/store/ReputationRepo.js"
import * as TeamIntelligenceInputs from "../adapters/store/TeamIntelligenceInputs.js"
import { TeamRepo } from "../adapters/store/TeamRepo.js"
import { faultLinesOf, teamValuesOf } from "../core/FaultLines.js"
import { forecastOf, type MemberRecord, ratesOf } from "../core/Forecast.js"
import { recommendPolicy } from "../core/PolicyRecommendation.js"
import type { ComponentKey } from "../core/schema/Reputation.js"
import type { TeamWithMembers } from "../core/schema/Team.js"

/** Drift alerts and policy outcomes are counted over this many days before the request. */
export const FORECAST_WINDOW_DAYS = 30

const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

type MemberValuesCard = Parameters<typeof faultLinesOf>[0][number]["values"]

const faultLinesFor = (
  cards: ReadonlyArray<{ readonly agent_id: string; readonly card: { readonly values: MemberValuesCard } }>,
  teamCard: Parameters<typeof teamValuesOf>[0]
) =>
  faultLinesOf(
    cards.map(({ agent_id, card }) => ({ agent_id, values: card.values })),
    teamValuesOf(teamCard)
  )

export const make = Effect.gen(function* () {
  const teams = yield* TeamRepo
  const reputations = yield* ReputationRepo
  const inputs = yield* TeamIntelligenceInputs.TeamIntelligenceInputs
  const narrator = yield* Effect.serviceOption(ForecastNarrator)

  /** The team's members, their cards and its card. */
  const teamCards = (found: TeamWithMembers) =>
    Effect.gen(function* () {
      const teamId = found.team.team_id
      const cards = yield* teams.memberCards(teamId)
      const teamCard = yield* teams.activeCard(teamId)
      const members = found.members.map((member) => member.agent_id)
      return { members, cards, teamCard: teamCard?.card_json }
    })

  /** Where the members' values pull against each other or against the team's. */
  const faultLines = (found: TeamWithMembers) =>
    Effect.gen(function* () {
      const { members, cards, teamCard } = yield* teamCards(found)
      return {
        team_id: found.team.team_id,
        fault_lines: faultLinesFor(cards, teamCard),
        member_count: members.length,
        members_with_cards: cards.length,
        computed_at: (yield* now).toISOString()
      }
    })

  /** The team's likely failure modes, from its members' records of the last `FORECAST_WINDOW_DAYS` days. */
  const forecast = (found: TeamWithMembers) =>
    Effect.gen(function* () {
      const teamId = found.team.team_id
      const { members, cards, teamCard } = yield* teamCards(found)
      const at = yield* now
      const since = new Date(at.getTime() - FORECAST_WINDOW_DAYS * 86_400_000).toISOString()
      const verdicts = yield* inputs.verdictCounts(members)
      const drift = yield* inputs.driftAlertsSince(members, since)
      const policy = yield* inputs.policyOutcomesSince(members, since)
      // The members' stored scores in one read.
      const scores = yield* reputations.lookup(members)
      const records: Array<MemberRecord> = []
      for (const agentId of members) {
        const stored = scores.get(agentId)?.record
        records.push({
          agent_id: agentId,
          verdicts: verdicts.get(agentId) ?? { clear: 0, review_needed: 0, boundary_violation: 0 },
          drift_alerts: drift.get(agentId) ?? 0,
          traces: policy.get(agentId)?.traces ?? 0,
          policy_failures: policy.get(agentId)?.failures ?? 0,
          components:
            stored === undefined
              ? undefined
              : (Object.fromEntries(stored.components.map((c) => [c.key, c.score])) as Partial<
                  Record<ComponentKey, number>
                >)
        })
      }
      const rates = ratesOf(records, faultLinesFor(cards, teamCard))
      const deterministic = {
        team_id: teamId,
        window_days: FORECAST_WINDOW_DAYS,
        failure_modes: forecastOf(rates),
        inputs: rates,
        member_count: members.length,
        members_with_cards: cards.length,
        members_with_scores: records.filter((r) => r.components !== undefined).length,
        computed_at: at.toISOString()
      }
      if (Option.isNone(narrator))
        return {
          ...deterministic,
          method: "deterministic" as const,
          model: null,
          model_contribution: null,
          model_error: null
        }
      // The model reads the deterministic forecast and adds its narrative; a failure leaves the forecast as it is.
      return yield* narrator.value.narrate(deterministic).pipe(
        Effect.map((narrative) => ({
          ...deterministic,
          method: "model" as const,
          model: narrator.value.model,
          model_contribution: { narrative },
          model_error: null
        })),
        Effect.catchTag("NarrationFailed", (error) =>
          Effect.as(
            Effect.logWarning("forecast narrative failed; deterministic forecast answered").pipe(
              Effect.annotateLogs({ model: narrator.value.model, reason: error.reason })
            ),
            {
              ...deterministic,
              method: "deterministic" as const,
              model: narrator.value.model,
              model_contribution: null,
              model_error: error.reason
            }
          )
        )
      )
    })

  /** A tool policy for the team: its members' autonomy envelopes and the team's, and the tools they were seen using. */
  const recommendation = (found: TeamWithMembers) =>
    Effect.gen(function* () {
      const teamId = found.team.team_id
      const { members, cards, teamCard } = yield* teamCards(found)
      const recommended = recommendPolicy({
        team_id: teamId,
        team_name: found.team.name,
        members: cards.map(({ agent_id, card }) => ({ agent_id, envelope: card.autonomy_envelope })),
        team_envelope: teamCard?.autonomy_envelope,
        tools_seen: yield* inputs.toolsSeen(members)
      })
      return { team_id: teamId, ...recommended, computed_at: (yield* now).toISOString() }
    })

  return { faultLines, forecast, recommendation }
})

export class TeamIntelligence extends Context.Tag("candor/services/TeamIntelligence")<
  TeamIntelligence,
  Effect.Effect.Success<typeof make>
>() {}

export const layer = Layer.effect(TeamIntelligence, make)
