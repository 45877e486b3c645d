/**
 * Claiming an agent by proving possession of its provider key: hashed with the gateway's own
 * functions (`keyHashOf`, `agentIdOf`), so the id is the one the gateway derives, and dropped.
 * A claim can bring the agent into an organization (or out of one), and so under its tool policy
 * and its conscience values: the resolved policy and values are pushed to the gateways (and the
 * workers) before answering (a `BusError` then leaves the claim stored). A claim naming the
 * `agent_name` gives an agent not seen yet its default name, the label the gateway would have kept
 * from its first checkpoint.
 *
 * Who claims (a personal user) and whether they may claim into the organization are the caller's
 * to check.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { AgentState } from "../adapters/bus/AgentState.js"
import { agentIdOf } from "../adapters/gateway/AgentIdentity.js"
import { BadRequest, Forbidden, NotFound } from "../adapters/http/ApiErrors.js"
import { keyHashOf } from "../adapters/providers/Identity.js"
import { AgentNameRepo } from "../adapters/store/AgentNameRepo.js"
import { IdentityRepo } from "../adapters/store/identity/IdentityRepo.js"
import type { PolicyRepo } from "../adapters/store/PolicyRepo.js"
import type { Store } from "../adapters/store/Store.js"
import { pushResolvedConscience } from "./ConscienceState.js"
import { pushAgentPolicy } from "./PolicyPropagation.js"

/** What telling the gateways reads and writes through. */
type Needs = PolicyRepo | Store | AgentState

export interface NewClaim {
  readonly provider_key: string
  readonly agent_name?: string | undefined
  readonly org_id?: string | undefined
}

export const make = Effect.gen(function* () {
  const repo = yield* IdentityRepo
  const names = yield* AgentNameRepo
  const context = yield* Effect.context<Needs>()

  /** Claims the agent whose provider key `input` holds for `userId` (into `org_id`, if named); the claim stored. */
  const claim = (input: NewClaim, userId: string) =>
    Effect.gen(function* () {
      const keyHash = keyHashOf(input.provider_key)
      if (keyHash === undefined) return yield* Effect.fail(new BadRequest({ error: "provider_key: must not be blank" }))
      const agentId = agentIdOf(keyHash, input.agent_name)
      const outcome = yield* repo.claimAgent({
        agent_id: agentId,
        agent_hash: keyHash,
        user_id: userId,
        org_id: input.org_id ?? null
      })
      if (outcome === "claimed_by_another") {
        return yield* Effect.fail(new Forbidden({ error: "this agent is already claimed by another account" }))
      }
      const claim = yield* repo.claimOf(agentId)
      if (claim === undefined) return yield* Effect.fail(new NotFound({ error: `agent ${agentId} not found` }))
      if (input.agent_name !== undefined) yield* names.setDefault(agentId, input.agent_name)
      // Into, out of or between organizations: the policy and conscience values in force follow the claim.
      yield* Effect.provide(pushAgentPolicy(agentId), context)
      yield* Effect.provide(pushResolvedConscience([claim.agent_id]), context)
      return {
        agent_id: claim.agent_id,
        agent_hash: claim.agent_hash,
        user_id: claim.user_id,
        org_id: claim.org_id,
        claimed_at: claim.claimed_at
      }
    })

  return { claim }
})

export class Claims extends Context.Tag("candor/services/Claims")<Claims, Effect.Effect.Success<typeof make>>() {}

export const layer = Layer.effect(Claims, make)
