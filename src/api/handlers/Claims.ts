/**
 * Claiming an agent by proving possession of its provider key: hashed with the gateway's own
 * functions (`keyHashOf`, `agentIdOf`), so the id is the one the gateway derives, and dropped.
 * A claim can bring the agent into an organization (or out of one), and so under its tool policy
 * and its conscience values: the resolved policy and values are pushed to the gateways (and the
 * workers) before answering. A claim naming the `agent_name` gives an agent not seen yet its default
 * name, the label the gateway would have kept from its first checkpoint.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { CurrentPrincipal } from "../../../adapters/auth/Principal.js"
import { agentIdOf } from "../../../adapters/gateway/AgentIdentity.js"
import { BadRequest, Forbidden, NotFound } from "../../../adapters/http/ApiErrors.js"
import { keyHashOf } from "../../../adapters/providers/Identity.js"
import { AgentNameRepo } from "../../../adapters/store/AgentNameRepo.js"
import { IdentityRepo } from "../../../adapters/store/identity/IdentityRepo.js"
import { CandorApi } from "../Api.js"
import { gatewaysUnreachable, internal, personalUser, requireOrgRole, requireWrite } from "./Access.js"
import { pushAgentPolicy } from "../../../services/PolicyPropagation.js"
import { pushResolvedConscience } from "../../../services/ConscienceState.js"

export const ClaimsLive = HttpApiBuilder.group(CandorApi, "claims", (handlers) =>
  handlers.handle("claimAgent", ({ payload }) =>
    Effect.gen(function* () {
      yield* requireWrite
      const userId = yield* personalUser(yield* CurrentPrincipal)
      if (payload.org_id !== undefined) yield* requireOrgRole(payload.org_id, "admin", true)
      const keyHash = keyHashOf(payload.provider_key)
      if (keyHash === undefined) return yield* Effect.fail(new BadRequest({ error: "provider_key: must not be blank" }))
      const agentId = agentIdOf(keyHash, payload.agent_name)
      const repo = yield* IdentityRepo
      const outcome = yield* repo.claimAgent({
        agent_id: agentId,
        agent_hash: keyHash,
        user_id: userId,
        org_id: payload.org_id ?? null
      })
      if (outcome === "claimed_by_another") {
        return yield* Effect.fail(new Forbidden({ error: "this agent is already claimed by another account" }))
      }
      const claim = yield* repo.claimOf(agentId)
      if (claim === undefined) return yield* Effect.fail(new NotFound({ error: `agent ${agentId} not found` }))
      if (payload.agent_name !== undefined) yield* (yield* AgentNameRepo).setDefault(agentId, payload.agent_name)
      // Into, out of or between organizations: the policy and conscience values in force follow the claim.
      yield* pushAgentPolicy(agentId)
      yield* pushResolvedConscience([claim.agent_id])
      return {
        agent_id: claim.agent_id,
        agent_hash: claim.agent_hash,
        user_id: claim.user_id,
        org_id: claim.org_id,
        claimed_at: claim.claimed_at
      }
    }).pipe(Effect.catchTag("StoreError", internal), Effect.catchTag("BusError", gatewaysUnreachable))
  )
)
