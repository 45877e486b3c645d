/**
 * Tool policies of agents and organizations on the store (migrations/0009_policies.ts): the one in
 * force, every version with who stored it, and what an agent is subject to (its own and its
 * organization's). The policy API is the only writer; the gateways learn the merged policy through
 * `AgentState`, never from here.
 *
 * `put` and `remove` run in the caller's transaction when there is one, so the version and the
 * governance entry that records it are stored together or not at all. The owner's head row is
 * locked while a version is allocated or taken out of force: concurrent writes on one owner are
 * serialised, and version numbers only ever grow.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { randomUUID } from "node:crypto"
import { EvidenceRedactionMode } from "../../core/schema/EvidenceRedaction.js"
import { Policy, type PolicyMeta, type PolicyScope } from "../../core/schema/Policy.js"
import { json, toCount, toIso } from "./Rows.js"
import { StoreError, storeError } from "./Store.js"
import { transaction } from "./Transaction.js"

/** Whose policy: an agent's or an organization's. */
export interface PolicyOwner {
  readonly scope: PolicyScope
  readonly id: string
}

export const agentPolicyOwner = (agentId: string): PolicyOwner => ({ scope: "agent", id: agentId })
export const orgPolicyOwner = (orgId: string): PolicyOwner => ({ scope: "org", id: orgId })

/** One stored version. */
export interface StoredPolicy {
  /** `pol-<uuid>`, one per version. */
  readonly policy_id: string
  readonly scope: PolicyScope
  readonly owner_id: string
  /** 1, 2, … per owner, never reused. */
  readonly version: number
  /** Normalised: decoded with every default filled in. */
  readonly policy: Policy
  /** Hex `policyHash(policy)` (core/Commitments.ts). */
  readonly policy_hash: string
  readonly updated_at: string
  /** `actorOf` of whoever stored it. */
  readonly updated_by: string
}

export interface PolicyVersion {
  readonly version: number
  readonly policy_id: string
  readonly meta: PolicyMeta
  readonly policy_hash: string
  readonly updated_at: string
  readonly updated_by: string
  /** Taken out of force by a DELETE (and not replaced by a later version). */
  readonly deleted: boolean
}

/** What an agent is subject to: its organization (if any) and the policies in force for it and for that organization. */
export interface AgentPolicies {
  readonly orgId: string | null
  /** The organization's evidence redaction, pushed with the policy; `none` without an organization. */
  readonly evidenceRedaction: EvidenceRedactionMode
  readonly org: StoredPolicy | undefined
  readonly agent: StoredPolicy | undefined
}

export class PolicyRepo extends Context.Tag("candor/adapters/store/PolicyRepo")<
  PolicyRepo,
  {
    /** The version in force, or undefined (none stored, or the last one deleted). */
    readonly current: (owner: PolicyOwner) => Effect.Effect<StoredPolicy | undefined, StoreError>
    /** Stores the next version and puts it in force; returns it and the one it replaced. */
    readonly put: (
      owner: PolicyOwner,
      input: { readonly policy: Policy; readonly policyHash: string; readonly actor: string }
    ) => Effect.Effect<{ readonly stored: StoredPolicy; readonly previous: StoredPolicy | undefined }, StoreError>
    /** Takes the version in force out of force (it stays in the history); undefined when there is none. */
    readonly remove: (owner: PolicyOwner, actor: string) => Effect.Effect<StoredPolicy | undefined, StoreError>
    /** Every version, newest first. */
    readonly history: (owner: PolicyOwner) => Effect.Effect<ReadonlyArray<PolicyVersion>, StoreError>
    readonly forAgent: (agentId: string) => Effect.Effect<AgentPolicies, StoreError>
    /** Every agent of the organization, by id, with the policy in force for it (its own, not merged). */
    readonly agentsOfOrg: (
      orgId: string
    ) => Effect.Effect<
      ReadonlyArray<{ readonly agentId: string; readonly agent: StoredPolicy | undefined }>,
      StoreError
    >
  }
>() {}

interface PolicyRow {
  readonly policy_id: string
  readonly scope: PolicyScope
  readonly owner_id: string
  readonly version: unknown
  readonly policy: unknown
  readonly policy_hash: string
  readonly updated_at: unknown
  readonly updated_by: string
  readonly deleted: unknown
}

const decodePolicy = Schema.decodeUnknown(Policy)

const storedOf = (row: PolicyRow) =>
  Effect.map(
    decodePolicy(typeof row.policy === "string" ? JSON.parse(row.policy) : row.policy),
    (policy): StoredPolicy => ({
      policy_id: row.policy_id,
      scope: row.scope,
      owner_id: row.owner_id,
      version: toCount(row.version),
      policy,
      policy_hash: row.policy_hash,
      updated_at: toIso(row.updated_at),
      updated_by: row.updated_by
    })
  )

/** The newest version read, unless it was taken out of force. */
const inForce = (row: PolicyRow | null | undefined) =>
  row == null || row.deleted === true ? Effect.succeed(undefined) : storedOf(row)

export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const current = (owner: PolicyOwner) =>
    Effect.gen(function* () {
      const [row] = yield* sql<PolicyRow>`
        select * from policies where scope = ${owner.scope} and owner_id = ${owner.id}
        order by version desc limit 1`
      return yield* inForce(row)
    })

  return PolicyRepo.of({
    current: (owner) => current(owner).pipe(storeError("current policy")),

    put: (owner, input) =>
      Effect.gen(function* () {
        // Allocates the version and locks the owner's head row until the transaction ends.
        const [head] = yield* sql<{ version: unknown }>`
          insert into policy_heads (scope, owner_id, version) values (${owner.scope}, ${owner.id}, 1)
          on conflict (scope, owner_id) do update set version = policy_heads.version + 1
          returning version`
        const version = toCount(head?.version)
        const previous = yield* current(owner)
        const policyId = `pol-${randomUUID()}`
        const [row] = yield* sql<PolicyRow>`
          insert into policies (policy_id, scope, owner_id, version, policy, policy_hash, updated_by)
          values (${policyId}, ${owner.scope}, ${owner.id}, ${version}, ${json(input.policy)}::json,
                  ${input.policyHash}, ${input.actor})
          returning *`
        return { stored: yield* storedOf(row!), previous }
      }).pipe((effect) => transaction(sql, effect), storeError("put policy")),

    remove: (owner, actor) =>
      Effect.gen(function* () {
        yield* sql`select version from policy_heads where scope = ${owner.scope} and owner_id = ${owner.id} for update`
        const inForce = yield* current(owner)
        if (inForce === undefined) return undefined
        yield* sql`
          update policies set deleted = true, deleted_at = now(), deleted_by = ${actor}
          where policy_id = ${inForce.policy_id}`
        return inForce
      }).pipe((effect) => transaction(sql, effect), storeError("delete policy")),

    history: (owner) =>
      sql<PolicyRow>`
        select * from policies where scope = ${owner.scope} and owner_id = ${owner.id} order by version desc`.pipe(
        Effect.flatMap((rows) =>
          Effect.forEach(rows, (row) =>
            Effect.map(storedOf(row), (stored): PolicyVersion => ({
              version: stored.version,
              policy_id: stored.policy_id,
              meta: stored.policy.meta,
              policy_hash: stored.policy_hash,
              updated_at: stored.updated_at,
              updated_by: stored.updated_by,
              deleted: row.deleted === true
            }))
          )
        ),
        storeError("policy history")
      ),

    forAgent: (agentId) =>
      Effect.gen(function* () {
        // One round trip: the claim, the organization's redaction and both policies in force. Every
        // policy push (each claim change, each agent policy change) reads this, and so does a restart's
        // rebuild of the gateways' state for every agent.
        const [row] = yield* sql<{
          org_id: string | null
          evidence_redaction: unknown
          agent_policy: PolicyRow | null
          org_policy: PolicyRow | null
        }>`
          select c.org_id, o.evidence_redaction,
            (select row_to_json(p) from policies p where p.scope = 'agent' and p.owner_id = a.agent_id
              order by p.version desc limit 1) as agent_policy,
            (select row_to_json(p) from policies p where p.scope = 'org' and p.owner_id = c.org_id
              order by p.version desc limit 1) as org_policy
          from (select ${agentId}::text as agent_id) a
          left join agent_claims c on c.agent_id = a.agent_id
          left join orgs o on o.org_id = c.org_id`
        const orgId = row?.org_id ?? null
        const agent = yield* inForce(row?.agent_policy)
        const org = orgId === null ? undefined : yield* inForce(row?.org_policy)
        const evidenceRedaction =
          orgId === null || row?.evidence_redaction == null
            ? "none"
            : yield* Schema.decodeUnknown(EvidenceRedactionMode)(row.evidence_redaction)
        return { orgId, org, agent, evidenceRedaction }
      }).pipe(storeError("agent policies")),

    // One statement for the whole organization, not one per agent: an organization's policy change
    // is pushed to each of its agents.
    agentsOfOrg: (orgId) =>
      sql<{ agent_id: string; agent_policy: PolicyRow | null }>`
        select c.agent_id,
          (select row_to_json(p) from policies p where p.scope = 'agent' and p.owner_id = c.agent_id
            order by p.version desc limit 1) as agent_policy
        from agent_claims c where c.org_id = ${orgId} order by c.agent_id`.pipe(
        Effect.flatMap((rows) =>
          Effect.forEach(rows, (row) =>
            Effect.map(inForce(row.agent_policy), (agent) => ({ agentId: row.agent_id, agent }))
          )
        ),
        storeError("policies of an organization's agents")
      )
  })
})

export const layer: Layer.Layer<PolicyRepo, never, SqlClient.SqlClient> = Layer.effect(PolicyRepo, make)
