/**
 * Tool policies of agents and organizations (docs/api.md, "Policies").
 *
 * A PUT or DELETE stores the version and appends its governance entry (`policy.put` /
 * `policy.delete`, on the agent's or the organization's log) in one transaction, then pushes the
 * resolved policy of every agent it concerns to the gateways (services/PolicyPropagation.ts): once the API
 * has answered, the next request through a gateway is judged by it. If the bus cannot be written the
 * change stays stored and the answer is 503; sending it again stores a new version and pushes again.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import { actorOf, CurrentPrincipal } from "../../../adapters/auth/Principal.js"
import { NotFound } from "../../../adapters/http/ApiErrors.js"
import { GovernanceLog } from "../../../adapters/store/GovernanceLog.js"
import { IdentityRepo } from "../../../adapters/store/identity/IdentityRepo.js"
import {
  agentPolicyOwner,
  orgPolicyOwner,
  type PolicyOwner,
  PolicyRepo,
  type StoredPolicy
} from "../../../adapters/store/PolicyRepo.js"
import { Store, StoreError } from "../../../adapters/store/Store.js"
import { transaction } from "../../../adapters/store/Transaction.js"
import { policyHash } from "../../../core/Commitments.js"
import { agentGovernanceLog, type GovernanceLogRef, orgGovernanceLog } from "../../../core/Governance.js"
import { type PolicyEvaluator, policyEvaluator, resolvePolicy } from "../../../core/Policy.js"
import type { Policy } from "../../../core/schema/Policy.js"
import { CandorApi } from "../Api.js"
import { gatewaysUnreachable, internal, orgRole, requireOrgRole } from "./Access.js"
import { readAgent, writeAgent } from "./AgentAccess.js"
import { readPolicyBody } from "./PolicyBody.js"
import { withinPolicyLimits } from "./PolicyLimits.js"
import { pushAgentPolicy, pushOrgPolicy } from "../../../services/PolicyPropagation.js"

const agentRecord = (stored: StoredPolicy) => ({
  policy_id: stored.policy_id,
  scope: "agent" as const,
  agent_id: stored.owner_id,
  version: stored.version,
  policy: stored.policy,
  policy_hash: stored.policy_hash,
  updated_at: stored.updated_at,
  updated_by: stored.updated_by
})

const orgRecord = (stored: StoredPolicy) => ({
  policy_id: stored.policy_id,
  scope: "org" as const,
  org_id: stored.owner_id,
  version: stored.version,
  policy: stored.policy,
  policy_hash: stored.policy_hash,
  updated_at: stored.updated_at,
  updated_by: stored.updated_by
})

const noPolicy = (owner: PolicyOwner) =>
  new NotFound({ error: `${owner.scope === "org" ? "organization" : "agent"} ${owner.id} has no policy` })

/** The service-role key has every role, also in an organization that does not exist. */
const orgExists = (orgId: string) =>
  Effect.flatMap(IdentityRepo, (repo) => repo.getOrg(orgId)).pipe(
    Effect.filterOrFail(
      (org) => org !== undefined,
      () => new NotFound({ error: `organization ${orgId} not found` })
    )
  )

const readOrg = (orgId: string) => Effect.zipRight(orgRole(orgId), orgExists(orgId))
const writeOrg = (orgId: string) => Effect.zipRight(requireOrgRole(orgId, "admin", true), orgExists(orgId))

const sqlFailure = (operation: string) => (cause: unknown) => Effect.fail(new StoreError({ operation, cause }))

/** Stores the version and its governance entry together. */
const putPolicy = (owner: PolicyOwner, log: GovernanceLogRef, policy: Policy) =>
  Effect.gen(function* () {
    const actor = actorOf(yield* CurrentPrincipal)
    const repo = yield* PolicyRepo
    const governance = yield* GovernanceLog
    const hash = policyHash(policy)
    return yield* transaction(
      yield* SqlClient.SqlClient,
      Effect.gen(function* () {
        const { stored, previous } = yield* repo.put(owner, { policy, policyHash: hash, actor })
        yield* governance.append(log, {
          action: "policy.put",
          actor,
          previous_state: previous === undefined ? null : { version: previous.version },
          new_state: { version: stored.version, policy_id: stored.policy_id },
          hashes: { policy_hash: hash }
        })
        return stored
      })
    ).pipe(Effect.catchTag("SqlError", sqlFailure("put policy")))
  })

/** Takes the version in force out of force and records it; NotFound when there is none. */
const deletePolicy = (owner: PolicyOwner, log: GovernanceLogRef) =>
  Effect.gen(function* () {
    const actor = actorOf(yield* CurrentPrincipal)
    const repo = yield* PolicyRepo
    const governance = yield* GovernanceLog
    yield* transaction(
      yield* SqlClient.SqlClient,
      Effect.gen(function* () {
        const removed = yield* repo.remove(owner, actor)
        if (removed === undefined) return yield* noPolicy(owner)
        yield* governance.append(log, {
          action: "policy.delete",
          actor,
          previous_state: { version: removed.version, policy_id: removed.policy_id },
          new_state: null
        })
      })
    ).pipe(Effect.catchTag("SqlError", sqlFailure("delete policy")))
  })

const current = (owner: PolicyOwner) =>
  Effect.flatMap(PolicyRepo, (repo) => repo.current(owner)).pipe(
    Effect.filterOrFail(
      (stored): stored is StoredPolicy => stored !== undefined,
      () => noPolicy(owner)
    )
  )

const history = (owner: PolicyOwner) => Effect.flatMap(PolicyRepo, (repo) => repo.history(owner))

/** Steps of an evaluation per turn of the event loop (about half a millisecond: core/GlobSet.ts). */
const EVALUATION_SLICE_STEPS = 50_000

/**
 * An evaluation run a slice per turn of the event loop: a policy of costly globs against 256 long
 * names would otherwise hold this thread (the API's, and on the embedded default the workers') for
 * a tenant's whole evaluation (issue 24).
 */
const inSlices = (evaluator: PolicyEvaluator) =>
  Effect.gen(function* () {
    for (;;) {
      const done = evaluator.run(EVALUATION_SLICE_STEPS)
      if (done !== undefined) return done
      yield* Effect.async<void>((resume) => {
        const turn = setImmediate(() => resume(Effect.void))
        return Effect.sync(() => clearImmediate(turn))
      })
    }
  })

export const PoliciesLive = HttpApiBuilder.group(CandorApi, "policies", (handlers) =>
  handlers
    .handle("getAgentPolicy", ({ path }) =>
      Effect.gen(function* () {
        yield* readAgent(path.agent_id)
        return agentRecord(yield* current(agentPolicyOwner(path.agent_id)))
      }).pipe(Effect.catchTag("StoreError", internal))
    )
    .handleRaw("putAgentPolicy", ({ path, request }) =>
      Effect.gen(function* () {
        yield* writeAgent(path.agent_id)
        const policy = yield* withinPolicyLimits(yield* readPolicyBody(request, "agent"))
        const stored = yield* putPolicy(agentPolicyOwner(path.agent_id), agentGovernanceLog(path.agent_id), policy)
        yield* pushAgentPolicy(path.agent_id)
        return agentRecord(stored)
      }).pipe(Effect.catchTag("StoreError", internal), Effect.catchTag("BusError", gatewaysUnreachable))
    )
    .handle("deleteAgentPolicy", ({ path }) =>
      Effect.gen(function* () {
        yield* writeAgent(path.agent_id)
        yield* deletePolicy(agentPolicyOwner(path.agent_id), agentGovernanceLog(path.agent_id))
        yield* pushAgentPolicy(path.agent_id)
      }).pipe(Effect.catchTag("StoreError", internal), Effect.catchTag("BusError", gatewaysUnreachable))
    )
    .handle("getResolvedPolicy", ({ path }) =>
      Effect.gen(function* () {
        yield* readAgent(path.agent_id)
        const { orgId, org, agent } = yield* (yield* PolicyRepo).forAgent(path.agent_id)
        return {
          agent_id: path.agent_id,
          resolved_policy: resolvePolicy(org?.policy, agent?.policy) ?? null,
          sources: {
            org_id: orgId,
            org_policy_version: org?.version ?? null,
            agent_policy_version: agent?.version ?? null,
            merge_strategy: "org_floor" as const
          }
        }
      }).pipe(Effect.catchTag("StoreError", internal))
    )
    .handle("getAgentPolicyHistory", ({ path }) =>
      Effect.gen(function* () {
        yield* readAgent(path.agent_id)
        return { agent_id: path.agent_id, versions: yield* history(agentPolicyOwner(path.agent_id)) }
      }).pipe(Effect.catchTag("StoreError", internal))
    )
    .handle("getOrgPolicy", ({ path }) =>
      Effect.gen(function* () {
        yield* readOrg(path.org_id)
        return orgRecord(yield* current(orgPolicyOwner(path.org_id)))
      }).pipe(Effect.catchTag("StoreError", internal))
    )
    .handleRaw("putOrgPolicy", ({ path, request }) =>
      Effect.gen(function* () {
        yield* writeOrg(path.org_id)
        const policy = yield* withinPolicyLimits(yield* readPolicyBody(request, "org"))
        const stored = yield* putPolicy(orgPolicyOwner(path.org_id), orgGovernanceLog(path.org_id), policy)
        yield* pushOrgPolicy(path.org_id)
        return orgRecord(stored)
      }).pipe(Effect.catchTag("StoreError", internal), Effect.catchTag("BusError", gatewaysUnreachable))
    )
    .handle("deleteOrgPolicy", ({ path }) =>
      Effect.gen(function* () {
        yield* writeOrg(path.org_id)
        yield* deletePolicy(orgPolicyOwner(path.org_id), orgGovernanceLog(path.org_id))
        yield* pushOrgPolicy(path.org_id)
      }).pipe(Effect.catchTag("StoreError", internal), Effect.catchTag("BusError", gatewaysUnreachable))
    )
    .handle("getOrgPolicyHistory", ({ path }) =>
      Effect.gen(function* () {
        yield* readOrg(path.org_id)
        return { org_id: path.org_id, versions: yield* history(orgPolicyOwner(path.org_id)) }
      }).pipe(Effect.catchTag("StoreError", internal))
    )
    .handle("evaluatePolicy", ({ payload }) =>
      Effect.gen(function* () {
        const agentId = payload.agent_id
        yield* readAgent(agentId)
        const { org, agent } = yield* (yield* PolicyRepo).forAgent(agentId)
        const policy = resolvePolicy(org?.policy, agent?.policy)
        const source = agent ?? org
        const card = policy === undefined ? undefined : yield* (yield* Store).activeCard(agentId)
        const now = new Date(yield* Effect.clockWith((clock) => clock.currentTimeMillis))
        const started = performance.now()
        const tools = payload.tools.map((name) => ({ name }))
        // As the gateway would see a request offering these tools, each tool new right now (in its grace period).
        const evaluation =
          policy === undefined
            ? { verdict: "pass" as const, violations: [], warnings: [], tools_evaluated: new Set(payload.tools).size }
            : yield* inSlices(policyEvaluator(policy, card?.card, tools, () => undefined, now))
        const duration = performance.now() - started
        const mode = policy?.defaults.enforcement_mode
        return {
          agent_id: agentId,
          ...evaluation,
          policy_id: source?.policy_id ?? null,
          policy_version: source?.version ?? null,
          enforcement_mode: mode ?? null,
          would_block: mode === "enforce" && evaluation.verdict === "fail",
          duration_ms: Math.round(duration * 1000) / 1000
        }
      }).pipe(Effect.catchTag("StoreError", internal))
    )
)
