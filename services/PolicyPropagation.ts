/**
 * Telling the gateways which tool policy an agent is subject to: the organization's and the agent's
 * merged (core/Policy.ts `resolvePolicy`), written to `AgentState` after the change is committed.
 * An agent with neither gets `policy: undefined`, so the gateways stop evaluating. The agent's
 * organization goes with it (`orgId`, for the gateway's events), and the organization's evidence
 * redaction: every claim change pushes the policy, so an agent that joins or leaves an organization
 * takes its redaction with it.
 *
 * Every write is the whole resolved policy, recomputed from the store, so sending a change again
 * (after a 503 from an unreachable bus) converges, whatever was pushed before.
 */
import * as Effect from "effect/Effect"
import { AgentState } from "../adapters/bus/AgentState.js"
import { orgPolicyOwner, PolicyRepo } from "../adapters/store/PolicyRepo.js"
import { resolvePolicy } from "../core/Policy.js"

/** Agents of an organization told at once: enough to be quick, few enough not to flood NATS KV. */
const PUSH_CONCURRENCY = 8

/** The agent's resolved policy, to the gateways. */
export const pushAgentPolicy = (agentId: string) =>
  Effect.gen(function* () {
    const { org, agent, orgId, evidenceRedaction } = yield* (yield* PolicyRepo).forAgent(agentId)
    yield* (yield* AgentState).update(agentId, {
      policy: resolvePolicy(org?.policy, agent?.policy),
      orgId: orgId ?? undefined,
      evidenceRedaction
    })
  })

/** Every agent of the organization (after its policy changed), each with its own policy merged in. */
export const pushOrgPolicy = (orgId: string) =>
  Effect.gen(function* () {
    const repo = yield* PolicyRepo
    const state = yield* AgentState
    const org = yield* repo.current(orgPolicyOwner(orgId))
    const agents = yield* repo.agentsOfOrg(orgId)
    yield* Effect.forEach(
      agents,
      ({ agent, agentId }) => state.update(agentId, { policy: resolvePolicy(org?.policy, agent?.policy), orgId }),
      { concurrency: PUSH_CONCURRENCY, discard: true }
    )
  })
