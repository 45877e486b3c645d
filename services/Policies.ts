/**
 * Tool policies of agents and organizations (docs/api.md, "Policies"): their versions, their
 * resolution and their evaluation, for the API and any other caller.
 *
 * A put or a delete stores the version and appends its governance entry (`policy.put` /
 * `policy.delete`, on the agent's or the organization's log) in one transaction, then pushes the
 * resolved policy of every agent it concerns to the gateways (services/PolicyPropagation.ts): once it
 * has succeeded, the next request through a gateway is judged by it. If the bus cannot be written the
 * change stays stored (a `BusError`); doing it again stores a new version and pushes again. Who may
 * act is the caller's to check; the actor it names is the one recorded.
 */
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { AgentState } from "../adapters/bus/AgentState.js"
import { GovernanceLog } from "../adapters/store/GovernanceLog.js"
import { IdentityRepo } from "../adapters/store/identity/IdentityRepo.js"
import {
  agentPolicyOwner,
  orgPolicyOwner,
  type PolicyOwner,
  PolicyRepo,
  type StoredPolicy
} from "../adapters/store/PolicyRepo.js"
import { Store, StoreError } from "../adapters/store/Store.js"
import { transaction } from "../adapters/store/Transaction.js"
import { policyHash } from "../core/Commitments.js"
import { agentGovernanceLog, type GovernanceLogRef, orgGovernanceLog } from "../core/Governance.js"
import { type PolicyEvaluator, policyEvaluator, resolvePolicy } from "../core/Policy.js"
import type { Policy } from "../core/schema/Policy.js"
import { pushAgentPolicy, pushOrgPolicy } from "./PolicyPropagation.js"

/** No policy in force for the owner, or no such organization. */
export class PolicyNotFound extends Schema.TaggedError<PolicyNotFound>()(
  "PolicyNotFound",
  { error: Schema.String },
  HttpApiSchema.annotations({ status: 404 })
) {}

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
  new PolicyNotFound({ error: `${owner.scope === "org" ? "organization" : "agent"} ${owner.id} has no policy` })

const sqlFailure = (operation: string) => (cause: unknown) => Effect.fail(new StoreError({ operation, cause }))

/** Stores the version and its governance entry together. */
const putPolicy = (owner: PolicyOwner, log: GovernanceLogRef, policy: Policy, actor: string) =>
  Effect.gen(function* () {
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
const deletePolicy = (owner: PolicyOwner, log: GovernanceLogRef, actor: string) =>
  Effect.gen(function* () {
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

/** What the operations read and write through. */
type Needs = PolicyRepo | IdentityRepo | GovernanceLog | Store | AgentState | SqlClient.SqlClient

export const make = Effect.gen(function* () {
  const context = yield* Effect.context<Needs>()
  const run = <A, E>(effect: Effect.Effect<A, E, Needs>) => Effect.provide(effect, context)

  /** The service-role key has every role, also in an organization that does not exist: it must exist. */
  const orgExists = (orgId: string) =>
    run(
      Effect.flatMap(IdentityRepo, (repo) => repo.getOrg(orgId)).pipe(
        Effect.filterOrFail(
          (org) => org !== undefined,
          () => new PolicyNotFound({ error: `organization ${orgId} not found` })
        ),
        Effect.asVoid
      )
    )

  /** The agent's policies as the gateways merge them: the organization's floor, then its own. */
  const resolved = (agentId: string) =>
    run(
      Effect.gen(function* () {
        const { orgId, org, agent } = yield* (yield* PolicyRepo).forAgent(agentId)
        return {
          agent_id: agentId,
          resolved_policy: resolvePolicy(org?.policy, agent?.policy) ?? null,
          sources: {
            org_id: orgId,
            org_policy_version: org?.version ?? null,
            agent_policy_version: agent?.version ?? null,
            merge_strategy: "org_floor" as const
          }
        }
      })
    )

  /** The agent's policy judging a request that offers `toolNames`, as a gateway would, without a request. */
  const evaluate = (agentId: string, toolNames: ReadonlyArray<string>) =>
    run(
      Effect.gen(function* () {
        const { org, agent } = yield* (yield* PolicyRepo).forAgent(agentId)
        const policy = resolvePolicy(org?.policy, agent?.policy)
        const source = agent ?? org
        const card = policy === undefined ? undefined : yield* (yield* Store).activeCard(agentId)
        const now = new Date(yield* Effect.clockWith((clock) => clock.currentTimeMillis))
        const started = performance.now()
        const tools = toolNames.map((name) => ({ name }))
        // As the gateway would see a request offering these tools, each tool new right now (in its grace period).
        const evaluation =
          policy === undefined
            ? { verdict: "pass" as const, violations: [], warnings: [], tools_evaluated: new Set(toolNames).size }
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
      })
    )

  return {
    orgExists,
    resolved,
    evaluate,
    agentPolicy: (agentId: string) => run(Effect.map(current(agentPolicyOwner(agentId)), agentRecord)),
    agentHistory: (agentId: string) => run(history(agentPolicyOwner(agentId))),
    putAgentPolicy: (agentId: string, policy: Policy, actor: string) =>
      run(
        Effect.gen(function* () {
          const stored = yield* putPolicy(agentPolicyOwner(agentId), agentGovernanceLog(agentId), policy, actor)
          yield* pushAgentPolicy(agentId)
          return agentRecord(stored)
        })
      ),
    deleteAgentPolicy: (agentId: string, actor: string) =>
      run(
        Effect.zipRight(
          deletePolicy(agentPolicyOwner(agentId), agentGovernanceLog(agentId), actor),
          pushAgentPolicy(agentId)
        )
      ),
    orgPolicy: (orgId: string) => run(Effect.map(current(orgPolicyOwner(orgId)), orgRecord)),
    orgHistory: (orgId: string) => run(history(orgPolicyOwner(orgId))),
    putOrgPolicy: (orgId: string, policy: Policy, actor: string) =>
      run(
        Effect.gen(function* () {
          const stored = yield* putPolicy(orgPolicyOwner(orgId), orgGovernanceLog(orgId), policy, actor)
          yield* pushOrgPolicy(orgId)
          return orgRecord(stored)
        })
      ),
    deleteOrgPolicy: (orgId: string, actor: string) =>
      run(Effect.zipRight(deletePolicy(orgPolicyOwner(orgId), orgGovernanceLog(orgId), actor), pushOrgPolicy(orgId)))
  }
})

export class Policies extends Context.Tag("candor/services/Policies")<Policies, Effect.Effect.Success<typeof make>>() {}

export const layer = Layer.effect(Policies, make)
