/**
 * Risk assessments (docs/risk.md). An assessment reads the agent's published reputation (the stored
 * score, or one computed now when none is stored yet, as GET /v1/reputation does) and its boundary
 * violations of the last 180 days, applies core/Risk.ts, signs the record with the service's active
 * key (core/RiskSignature.ts) and stores it. The key is put in the key ring first, so GET /v1/keys
 * lists it whichever process signed.
 *
 * Who may read which agent is the caller's to say (`read`, `readable`): an unknown agent, or one the
 * caller may not read, is "agent … not found"; a stored record is readable by whoever may read all
 * its agents, and is otherwise "not found" like an unknown id.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { randomUUID } from "node:crypto"
import { NotFound } from "../adapters/http/ApiErrors.js"
import { SigningKeys } from "../adapters/keys/SigningKeys.js"
import { KeyRepo } from "../adapters/store/KeyRepo.js"
import { ReputationRepo } from "../adapters/store/ReputationRepo.js"
import { RiskRepo } from "../adapters/store/RiskRepo.js"
import { toBase64 } from "../core/Bytes.js"
import { assessRisk, assessTeamRisk, RECENCY_WINDOW_DAYS, recencyInputs } from "../core/Risk.js"
import { resultMatches, signRiskRecord, verifyRiskSignature } from "../core/RiskSignature.js"
import { COMPONENT_KEYS } from "../core/schema/Reputation.js"
import {
  RISK_ASSESSMENT_ID_PREFIX,
  type RiskAssessment,
  type RiskContext,
  type RiskInputs,
  TEAM_RISK_ASSESSMENT_ID_PREFIX,
  type TeamRiskAssessment
} from "../core/schema/Risk.js"
import { type RecomputationNeeds, recomputeReputation } from "./ReputationRecompute.js"

const DAY_MS = 86_400_000

const agentNotFound = (agentId: string) => new NotFound({ error: `agent ${agentId} not found` })
const assessmentNotFound = (id: string) => new NotFound({ error: `risk assessment ${id} not found` })

const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

export const make = Effect.gen(function* () {
  const reputations = yield* ReputationRepo
  const risks = yield* RiskRepo
  const keyRing = yield* KeyRepo
  const signing = yield* SigningKeys
  const recomputation = yield* Effect.context<RecomputationNeeds>()

  /** The caller may read the agent (`read`), and it exists (the service-role key reads any id). */
  const readableAgent = <E, R>(agentId: string, read: (agentId: string) => Effect.Effect<void, E, R>) =>
    Effect.gen(function* () {
      yield* read(agentId)
      if ((yield* reputations.visibility(agentId)) === undefined) return yield* Effect.fail(agentNotFound(agentId))
    })

  /** What one agent's assessment is computed from, at `at`. */
  const inputsOf = (agentId: string, at: Date) =>
    Effect.gen(function* () {
      const stored = yield* reputations.stored(agentId)
      const reputation =
        stored?.record ?? (yield* recomputeReputation(agentId).pipe(Effect.provide(recomputation))).record
      const since = new Date(at.getTime() - RECENCY_WINDOW_DAYS * DAY_MS).toISOString()
      const violations = yield* risks.violations(agentId, since)
      const scoreOf = (key: (typeof COMPONENT_KEYS)[number]) => reputation.components.find((c) => c.key === key)?.score
      const inputs: RiskInputs = {
        reputation: {
          score: reputation.score,
          grade: reputation.grade,
          confidence: reputation.confidence,
          components: Object.fromEntries(COMPONENT_KEYS.map((key) => [key, scoreOf(key) ?? 0])) as Record<
            (typeof COMPONENT_KEYS)[number],
            number
          >,
          computed_at: reputation.computed_at,
          computed_over: reputation.computed_over
        },
        recency: recencyInputs(violations, at)
      }
      return inputs
    })

  /** The active key, registered in the key ring (a no-op once it is there). */
  const activeKey = Effect.gen(function* () {
    const { active } = signing
    yield* keyRing.registerActive(active.publicKey)
    return active
  })

  /** The stored record, if the caller may read every agent it names (`readable`); otherwise it does not exist for it. */
  const readRecord = <E, R>(assessmentId: string, readable: (agentId: string) => Effect.Effect<boolean, E, R>) =>
    Effect.gen(function* () {
      const stored = yield* risks.get(assessmentId)
      if (stored === undefined) return yield* Effect.fail(assessmentNotFound(assessmentId))
      const agents = stored.kind === "individual" ? [stored.record.agent_id] : stored.record.agent_ids
      for (const agentId of agents)
        if (!(yield* readable(agentId))) return yield* Effect.fail(assessmentNotFound(assessmentId))
      return stored
    })

  /** Assesses one agent's risk in `context`: the record signed and stored. */
  const assess = <E, R>(agentId: string, context: RiskContext, read: (agentId: string) => Effect.Effect<void, E, R>) =>
    Effect.gen(function* () {
      yield* readableAgent(agentId, read)
      const at = yield* now
      const inputs = yield* inputsOf(agentId, at)
      const key = yield* activeKey
      const record = signRiskRecord<RiskAssessment>(
        {
          assessment_id: `${RISK_ASSESSMENT_ID_PREFIX}${randomUUID()}`,
          agent_id: agentId,
          context,
          inputs,
          result: assessRisk(context, inputs),
          assessed_at: at.toISOString()
        },
        key
      )
      yield* risks.save({ kind: "individual", record })
      return record
    })

  /** Assesses the risk of these agents working together in `context`: the record signed and stored. */
  const assessTeam = <E, R>(
    agentIds: TeamRiskAssessment["agent_ids"],
    context: TeamRiskAssessment["context"],
    read: (agentId: string) => Effect.Effect<void, E, R>
  ) =>
    Effect.gen(function* () {
      for (const agentId of agentIds) yield* readableAgent(agentId, read)
      const at = yield* now
      const members = []
      for (const agentId of agentIds) {
        const inputs = yield* inputsOf(agentId, at)
        members.push({ agent_id: agentId, inputs, result: assessRisk(context, inputs) })
      }
      const result = assessTeamRisk(
        context,
        members.map((m) => ({ agent_id: m.agent_id, reputation_score: m.inputs.reputation.score, result: m.result }))
      )
      const key = yield* activeKey
      const record = signRiskRecord<TeamRiskAssessment>(
        {
          assessment_id: `${TEAM_RISK_ASSESSMENT_ID_PREFIX}${randomUUID()}`,
          agent_ids: agentIds,
          context,
          members,
          result,
          assessed_at: at.toISOString()
        },
        key
      )
      yield* risks.save({ kind: "team", record })
      return record
    })

  /** A stored individual assessment. */
  const get = <E, R>(assessmentId: string, readable: (agentId: string) => Effect.Effect<boolean, E, R>) =>
    Effect.gen(function* () {
      const stored = yield* readRecord(assessmentId, readable)
      if (stored.kind !== "individual") return yield* Effect.fail(assessmentNotFound(assessmentId))
      return stored.record
    })

  /** A stored team assessment. */
  const getTeam = <E, R>(assessmentId: string, readable: (agentId: string) => Effect.Effect<boolean, E, R>) =>
    Effect.gen(function* () {
      const stored = yield* readRecord(assessmentId, readable)
      if (stored.kind !== "team") return yield* Effect.fail(assessmentNotFound(assessmentId))
      return stored.record
    })

  /** A page of the agent's assessments, newest first. */
  const history = <E, R>(
    agentId: string,
    page: { readonly limit: number; readonly offset: number },
    read: (agentId: string) => Effect.Effect<void, E, R>
  ) =>
    Effect.gen(function* () {
      yield* readableAgent(agentId, read)
      const found = yield* risks.history(agentId, page.limit, page.offset)
      return {
        agent_id: agentId,
        assessments: found.items,
        total: found.total,
        limit: page.limit,
        offset: page.offset
      }
    })

  /** A stored assessment with what a third party needs to check it: the key it was signed with, how to recompute it. */
  const proof = <E, R>(assessmentId: string, readable: (agentId: string) => Effect.Effect<boolean, E, R>) =>
    Effect.gen(function* () {
      const stored = yield* readRecord(assessmentId, readable)
      const keys = yield* keyRing.list
      const key = keys.find((k) => k.key_id === stored.record.key_id)
      // Served only when it checks: a record that does not is a defect of ours, never "unverified".
      if (key === undefined || !verifyRiskSignature(stored.record, key.public_key) || !resultMatches(stored.record))
        return yield* Effect.die(new Error(`risk assessment ${assessmentId} does not verify`))
      return {
        assessment_id: assessmentId,
        kind: stored.kind,
        status: "verified" as const,
        record: stored.record,
        verification: {
          algorithm: "Ed25519" as const,
          key_id: key.key_id,
          public_key: toBase64(key.public_key),
          keys_url: "/v1/keys" as const,
          signed_message: 'UTF-8 "candor/v1/risk-assessment" ‖ 0x00 ‖ JCS (RFC 8785) of the record without "signature"',
          recompute:
            stored.kind === "individual"
              ? "result = assessRisk(record.context, record.inputs) (core/Risk.ts, docs/risk.md)"
              : "each members[i].result = assessRisk(record.context, members[i].inputs); result = assessTeamRisk(record.context, members with inputs.reputation.score) (core/Risk.ts, docs/risk.md)"
        }
      }
    })

  return { assess, assessTeam, get, getTeam, history, proof }
})

export class Risk extends Context.Tag("candor/services/Risk")<Risk, Effect.Effect.Success<typeof make>>() {}

export const layer = Layer.effect(Risk, make)
