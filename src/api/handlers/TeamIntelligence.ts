/**
 * Team intelligence routes (docs/intelligence.md). Each reads the team (a member of its
 * organization, else 404), the recorded data of its current members, and answers what the pure
 * computations (core/FaultLines.ts, core/Forecast.ts, core/PolicyRecommendation.ts) make of it.
 * Nothing is stored: the same records give the same answer but `computed_at`. The forecast, which
 * may add a model's narrative, needs Admin; the other two any member.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { ForecastNarrator } from "../../../adapters/analysis/ForecastNarrator.js"
import type { Role } from "../../../adapters/auth/Principal.js"
import { ReputationRepo } from "../../../adapters/store/ReputationRepo.js"
import * as TeamIntelligenceInputs from "../../../adapters/store/TeamIntelligenceInputs.js"
import { TeamRepo } from "../../../adapters/store/TeamRepo.js"
import { faultLinesOf, teamValuesOf } from "../../../core/FaultLines.js"
import { forecastOf, type MemberRecord, ratesOf } from "../../../core/Forecast.js"
import { recommendPolicy } from "../../../core/PolicyRecommendation.js"
import type { ComponentKey } from "../../../core/schema/Reputation.js"
import { CandorApi } from "../Api.js"
import { Forbidden } from "../../../adapters/http/ApiErrors.js"
import { internal, requireOrgRole } from "./Access.js"
import { readTeam } from "./Teams.js"

/** Drift alerts and policy outcomes are counted over this many days before the request. */
export const FORECAST_WINDOW_DAYS = 30

const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

/**
 * The team (404 unless the caller is a member of its organization; 403 below `needs` there), its
 * members' cards and its card.
 */
const teamCards = (teamId: string, needs: Role = "member") =>
  Effect.gen(function* () {
    const found = yield* readTeam(teamId)
    if (needs !== "member") {
      yield* requireOrgRole(found.team.org_id, needs, false).pipe(
        Effect.catchTag("Forbidden", ({ error }) =>
          Effect.fail(new Forbidden({ error: `the team forecast may call a model: ${error}` }))
        )
      )
    }
    const teams = yield* TeamRepo
    const cards = yield* teams.memberCards(teamId)
    const teamCard = yield* teams.activeCard(teamId)
    const members = found.members.map((member) => member.agent_id)
    return { found, members, cards, teamCard: teamCard?.card_json }
  })

const faultLinesFor = (
  cards: ReadonlyArray<{ readonly agent_id: string; readonly card: { readonly values: MemberValuesCard } }>,
  teamCard: Parameters<typeof teamValuesOf>[0]
) =>
  faultLinesOf(
    cards.map(({ agent_id, card }) => ({ agent_id, values: card.values })),
    teamValuesOf(teamCard)
  )
type MemberValuesCard = Parameters<typeof faultLinesOf>[0][number]["values"]

export const TeamIntelligenceLive = HttpApiBuilder.group(CandorApi, "teamIntelligence", (handlers) =>
  handlers
    .handle("teamFaultLines", ({ payload }) =>
      Effect.gen(function* () {
        const { members, cards, teamCard } = yield* teamCards(payload.team_id)
        return {
          team_id: payload.team_id,
          fault_lines: faultLinesFor(cards, teamCard),
          member_count: members.length,
          members_with_cards: cards.length,
          computed_at: (yield* now).toISOString()
        }
      }).pipe(Effect.catchTag("StoreError", internal))
    )
    .handle("teamForecast", ({ payload }) =>
      Effect.gen(function* () {
        // The forecast is the one intelligence call that may spend a model's tokens (ANALYSIS_MODEL):
        // Admin and up, whatever the deployment's model, so setting one never widens who may spend it.
        const { members, cards, teamCard } = yield* teamCards(payload.team_id, "admin")
        const at = yield* now
        const since = new Date(at.getTime() - FORECAST_WINDOW_DAYS * 86_400_000).toISOString()
        const inputs = yield* TeamIntelligenceInputs.make
        const verdicts = yield* inputs.verdictCounts(members)
        const drift = yield* inputs.driftAlertsSince(members, since)
        const policy = yield* inputs.policyOutcomesSince(members, since)
        // The members' stored scores in one read.
        const scores = yield* (yield* ReputationRepo).lookup(members)
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
        const forecast = {
          team_id: payload.team_id,
          window_days: FORECAST_WINDOW_DAYS,
          failure_modes: forecastOf(rates),
          inputs: rates,
          member_count: members.length,
          members_with_cards: cards.length,
          members_with_scores: records.filter((r) => r.components !== undefined).length,
          computed_at: at.toISOString()
        }
        const narrator = yield* Effect.serviceOption(ForecastNarrator)
        if (Option.isNone(narrator))
          return {
            ...forecast,
            method: "deterministic" as const,
            model: null,
            model_contribution: null,
            model_error: null
          }
        // The model reads the deterministic forecast and adds its narrative; a failure leaves the forecast as it is.
        return yield* narrator.value.narrate(forecast).pipe(
          Effect.map((narrative) => ({
            ...forecast,
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
                ...forecast,
                method: "deterministic" as const,
                model: narrator.value.model,
                model_contribution: null,
                model_error: error.reason
              }
            )
          )
        )
      }).pipe(Effect.catchTag("StoreError", internal))
    )
    .handle("recommendTeamPolicy", ({ payload }) =>
      Effect.gen(function* () {
        const { found, members, cards, teamCard } = yield* teamCards(payload.team_id)
        const inputs = yield* TeamIntelligenceInputs.make
        const recommendation = recommendPolicy({
          team_id: payload.team_id,
          team_name: found.team.name,
          members: cards.map(({ agent_id, card }) => ({ agent_id, envelope: card.autonomy_envelope })),
          team_envelope: teamCard?.autonomy_envelope,
          tools_seen: yield* inputs.toolsSeen(members)
        })
        return { team_id: payload.team_id, ...recommendation, computed_at: (yield* now).toISOString() }
      }).pipe(Effect.catchTag("StoreError", internal))
    )
)
