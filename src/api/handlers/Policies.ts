/**
 * Tool policies' routes (docs/api.md, "Policies"): whoever may read an agent or an organization
 * reads its policy, whoever may write it (Admin and up, for an organization) puts and deletes it,
 * through the Policies service (services/Policies.ts). A body is decoded here (JSON or YAML,
 * PolicyBody.ts) and held to the process's limits (PolicyLimits.ts). If the gateways cannot be told
 * the change stays stored and the answer is 503; sending it again stores a new version and pushes
 * again.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { actorOf, CurrentPrincipal } from "../../../adapters/auth/Principal.js"
import { Policies } from "../../../services/Policies.js"
import { CandorApi } from "../Api.js"
import { gatewaysUnreachable, orgRole, requireOrgRole } from "./Access.js"
import { readAgent, writeAgent } from "./AgentAccess.js"
import { readPolicyBody } from "./PolicyBody.js"
import { withinPolicyLimits } from "./PolicyLimits.js"

const actor = Effect.map(CurrentPrincipal, actorOf)

export const PoliciesLive = HttpApiBuilder.group(CandorApi, "policies", (handlers) =>
  Effect.map(Policies, (policies) => {
    const readOrg = (orgId: string) => Effect.zipRight(orgRole(orgId), policies.orgExists(orgId))
    const writeOrg = (orgId: string) => Effect.zipRight(requireOrgRole(orgId, "admin", true), policies.orgExists(orgId))
    return handlers
      .handle("getAgentPolicy", ({ path }) =>
        Effect.zipRight(readAgent(path.agent_id), policies.agentPolicy(path.agent_id))
      )
      .handleRaw("putAgentPolicy", ({ path, request }) =>
        Effect.gen(function* () {
          yield* writeAgent(path.agent_id)
          const policy = yield* withinPolicyLimits(yield* readPolicyBody(request, "agent"))
          return yield* policies.putAgentPolicy(path.agent_id, policy, yield* actor)
        }).pipe(Effect.catchTag("BusError", gatewaysUnreachable))
      )
      .handle("deleteAgentPolicy", ({ path }) =>
        Effect.gen(function* () {
          yield* writeAgent(path.agent_id)
          yield* policies.deleteAgentPolicy(path.agent_id, yield* actor)
        }).pipe(Effect.catchTag("BusError", gatewaysUnreachable))
      )
      .handle("getResolvedPolicy", ({ path }) =>
        Effect.zipRight(readAgent(path.agent_id), policies.resolved(path.agent_id))
      )
      .handle("getAgentPolicyHistory", ({ path }) =>
        Effect.zipRight(readAgent(path.agent_id), policies.agentHistory(path.agent_id)).pipe(
          Effect.map((versions) => ({ agent_id: path.agent_id, versions }))
        )
      )
      .handle("getOrgPolicy", ({ path }) => Effect.zipRight(readOrg(path.org_id), policies.orgPolicy(path.org_id)))
      .handleRaw("putOrgPolicy", ({ path, request }) =>
        Effect.gen(function* () {
          yield* writeOrg(path.org_id)
          const policy = yield* withinPolicyLimits(yield* readPolicyBody(request, "org"))
          return yield* policies.putOrgPolicy(path.org_id, policy, yield* actor)
        }).pipe(Effect.catchTag("BusError", gatewaysUnreachable))
      )
      .handle("deleteOrgPolicy", ({ path }) =>
        Effect.gen(function* () {
          yield* writeOrg(path.org_id)
          yield* policies.deleteOrgPolicy(path.org_id, yield* actor)
        }).pipe(Effect.catchTag("BusError", gatewaysUnreachable))
      )
      .handle("getOrgPolicyHistory", ({ path }) =>
        Effect.zipRight(readOrg(path.org_id), policies.orgHistory(path.org_id)).pipe(
          Effect.map((versions) => ({ org_id: path.org_id, versions }))
        )
      )
      .handle("evaluatePolicy", ({ payload }) =>
        Effect.zipRight(readAgent(payload.agent_id), policies.evaluate(payload.agent_id, payload.tools))
      )
  })
)
