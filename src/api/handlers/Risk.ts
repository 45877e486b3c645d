/**
 * The risk routes (groups/Risk.ts). An assessment reads the agent's published reputation (the
 * stored score, or one computed now when none is stored yet, as GET /v1/reputation does) and its
 * boundary violations of the last 180 days, applies core/Risk.ts, signs the record with the
 * service's active key (core/RiskSignature.ts) and stores it. The key is put in the key ring first,
 * so GET /v1/keys lists it whichever process signed.
 *
 * Access: the caller must be able to read every agent named (an unknown agent, or one it may not
 * read, is "agent … not found"); a stored record is readable by whoever may read all its agents,
 * and is otherwise "not found" like an unknown id.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { SigningKeys } from "../../../adapters/keys/SigningKeys.js"
import { NotFound } from "../../../adapters/http/ApiErrors.js"
import { KeyRepo } from "../../../adapters/store/KeyRepo.js"
import { ReputationRepo } from "../../../adapters/store/ReputationRepo.js"
import { RiskRepo } from "../../../adapters/store/RiskRepo.js"
import { toBase64 } from "../../../core/Bytes.js"
import { assessRisk, assessTeamRisk, RECENCY_WINDOW_DAYS, recencyInputs } from "../../../core/Risk.js"
import { resultMatches, signRiskRecord, verifyRiskSignature } from "../../../core/RiskSignature.js"
import { COMPONENT_KEYS } from "../../../core/schema/Reputation.js"
import {
  RISK_ASSESSMENT_ID_PREFIX,
  type RiskAssessment,
  type RiskContext,
  type RiskInputs,
  TEAM_RISK_ASSESSMENT_ID_PREFIX,
  type TeamRiskAssessment
} from "../../../core/schema/Risk.js"
import { recomputeReputation } from "../../../services/ReputationRecompute.js"
import { randomUUID } from "node:crypto"
import { CandorApi } from "../Api.js"
import { internal } from "./Access.js"
import { readAgent } from "./AgentAccess.js"

const DAY_MS = 86_400_000

const agentNotFound = (agentId: string) => new NotFound({ error: `agent ${agentId} not found` })
const assessmentNotFound = (id: string) => new NotFound({ error: `risk assessment ${id} not found` })

/** The caller may read the agent, and it exists (the service-role key reads any id). */
const readableAgent = (agentId: string) =>
  Effect.gen(function* () {
    yield* readAgent(agentId)
    if ((yield* (yield* ReputationRepo).visibility(agentId)) === undefined)
      return yield* Effect.fail(agentNotFound(agentId))
  })

/** What one agent's assessment is computed from, at `now`. */
const inputsOf = (agentId: string, now: Date) =>
  Effect.gen(function* () {
    const reputations = yield* ReputationRepo
    const stored = yield* reputations.stored(agentId)
    const reputation = stored?.record ?? (yield* recomputeReputation(agentId)).record
    const since = new Date(now.getTime() - RECENCY_WINDOW_DAYS * DAY_MS).toISOString()
    const violations = yield* (yield* RiskRepo).violations(agentId, since)
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
      recency: recencyInputs(violations, now)
    }
    return inputs
  })

/** The active key, registered in the key ring (a no-op once it is there). */
const activeKey = Effect.gen(function* () {
  const { active } = yield* SigningKeys
  yield* (yield* KeyRepo).registerActive(active.publicKey)
  return active
})

const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

/** The caller may read every agent the record names; otherwise the record does not exist for it. */
const readRecord = (assessmentId: string) =>
  Effect.gen(function* () {
    const stored = yield* (yield* RiskRepo).get(assessmentId)
    if (stored === undefined) return yield* Effect.fail(assessmentNotFound(assessmentId))
    const agents = stored.kind === "individual" ? [stored.record.agent_id] : stored.record.agent_ids
    for (const agentId of agents)
      yield* readAgent(agentId).pipe(Effect.catchTag("NotFound", () => Effect.fail(assessmentNotFound(assessmentId))))
    return stored
  })

export const RiskLive = HttpApiBuilder.group(CandorApi, "risk", (handlers) =>
  handlers
    .handle("assessRisk", ({ payload }) =>
      Effect.gen(function* () {
        yield* readableAgent(payload.agent_id)
        const at = yield* now
        const context: RiskContext = payload.context
        const inputs = yield* inputsOf(payload.agent_id, at)
        const key = yield* activeKey
        const record = signRiskRecord<RiskAssessment>(
          {
            assessment_id: `${RISK_ASSESSMENT_ID_PREFIX}${randomUUID()}`,
            agent_id: payload.agent_id,
            context,
            inputs,
            result: assessRisk(context, inputs),
            assessed_at: at.toISOString()
          },
          key
        )
        yield* (yield* RiskRepo).save({ kind: "individual", record })
        return record
      }).pipe(Effect.catchTag("StoreError", internal))
    )
    .handle("assessTeamRisk", ({ payload }) =>
      Effect.gen(function* () {
        for (const agentId of payload.agent_ids) yield* readableAgent(agentId)
        const at = yield* now
        const context = payload.context
        const members = []
        for (const agentId of payload.agent_ids) {
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
            agent_ids: payload.agent_ids,
            context,
            members,
            result,
            assessed_at: at.toISOString()
          },
          key
        )
        yield* (yield* RiskRepo).save({ kind: "team", record })
        return record
      }).pipe(Effect.catchTag("StoreError", internal))
    )
    .handle("getRiskAssessment", ({ path }) =>
      Effect.gen(function* () {
        const stored = yield* readRecord(path.assessment_id)
        if (stored.kind !== "individual") return yield* Effect.fail(assessmentNotFound(path.assessment_id))
        return stored.record
      }).pipe(Effect.catchTag("StoreError", internal))
    )
    .handle("getTeamRiskAssessment", ({ path }) =>
      Effect.gen(function* () {
        const stored = yield* readRecord(path.assessment_id)
        if (stored.kind !== "team") return yield* Effect.fail(assessmentNotFound(path.assessment_id))
        return stored.record
      }).pipe(Effect.catchTag("StoreError", internal))
    )
    .handle("getRiskHistory", ({ path, urlParams }) =>
      Effect.gen(function* () {
        yield* readableAgent(path.agent_id)
        const page = yield* (yield* RiskRepo).history(path.agent_id, urlParams.limit, urlParams.offset)
        return {
          agent_id: path.agent_id,
          assessments: page.items,
          total: page.total,
          limit: urlParams.limit,
          offset: urlParams.offset
        }
      }).pipe(Effect.catchTag("StoreError", internal))
    )
    .handle("getRiskProof", ({ path }) =>
      Effect.gen(function* () {
        const stored = yield* readRecord(path.assessment_id)
        const keys = yield* (yield* KeyRepo).list
        const key = keys.find((k) => k.key_id === stored.record.key_id)
        // Served only when it checks: a record that does not is a defect of ours, never "unverified".
        if (key === undefined || !verifyRiskSignature(stored.record, key.public_key) || !resultMatches(stored.record))
          return yield* Effect.die(new Error(`risk assessment ${path.assessment_id} does not verify`))
        return {
          assessment_id: path.assessment_id,
          kind: stored.kind,
          status: "verified" as const,
          record: stored.record,
          verification: {
            algorithm: "Ed25519" as const,
            key_id: key.key_id,
            public_key: toBase64(key.public_key),
            keys_url: "/v1/keys" as const,
            signed_message:
              'UTF-8 "candor/v1/risk-assessment" ‖ 0x00 ‖ JCS (RFC 8785) of the record without "signature"',
            recompute:
              stored.kind === "individual"
                ? "result = assessRisk(record.context, record.inputs) (core/Risk.ts, docs/risk.md)"
                : "each members[i].result = assessRisk(record.context, members[i].inputs); result = assessTeamRisk(record.context, members with inputs.reputation.score) (core/Risk.ts, docs/risk.md)"
          }
        }
      }).pipe(Effect.catchTag("StoreError", internal))
    )
)
