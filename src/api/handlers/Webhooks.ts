/**
 * Webhook endpoints' routes (docs/webhooks.md); the writes are the Webhooks service's
 * (services/Webhooks.ts). Who may act: Owner and Admin of the organization, on its endpoints and on
 * those of its agents; the claimer of an agent outside any organization; the service-role key. Others
 * get 404 (an organization or agent they cannot see) or 403 (a member, a member-role key).
 * Impersonation sessions may not use these routes at all: an endpoint decides where an
 * organization's events go.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { AccessControl } from "../../../adapters/auth/AccessControl.js"
import { actorOf, CurrentPrincipal } from "../../../adapters/auth/Principal.js"
import { Forbidden } from "../../../adapters/http/ApiErrors.js"
import { type Scope, Webhooks } from "../../../services/Webhooks.js"
import { CandorApi } from "../Api.js"
import { requireOrgRole } from "./Access.js"

const noImpersonation = Effect.gen(function* () {
  const principal = yield* CurrentPrincipal
  if (principal.kind === "user" && principal.impersonation !== undefined)
    return yield* new Forbidden({ error: "impersonation sessions may not use the webhook routes" })
})

/** The two kinds of route: each authorises, then runs `run` in its scope, as the caller. */
const scoped = (webhooks: Webhooks["Type"]) => ({
  /** A route under /orgs/{org_id}/webhooks: Admin and up in the organization. */
  inOrg: <A, E, R>(orgId: string, write: boolean, run: (scope: Scope, actor: string) => Effect.Effect<A, E, R>) =>
    Effect.gen(function* () {
      yield* noImpersonation
      yield* requireOrgRole(orgId, "admin", write)
      const scope = yield* webhooks.orgScope(orgId)
      return yield* run(scope, actorOf(yield* CurrentPrincipal))
    }),
  /** The same under /agents/{agent_id}/webhooks: Admin and up on the agent (its claimer, outside any organization). */
  inAgent: <A, E, R>(agentId: string, write: boolean, run: (scope: Scope, actor: string) => Effect.Effect<A, E, R>) =>
    Effect.gen(function* () {
      yield* noImpersonation
      const principal = yield* CurrentPrincipal
      const access = yield* AccessControl
      yield* access.agent(principal, agentId, "write")
      if (write) yield* access.write(principal)
      const scope = yield* webhooks.agentScope(agentId)
      return yield* run(scope, actorOf(principal))
    })
})

export const WebhooksLive = HttpApiBuilder.group(CandorApi, "webhooks", (handlers) =>
  Effect.map(Webhooks, (webhooks) => {
    const { inAgent, inOrg } = scoped(webhooks)
    return handlers
      .handle("orgListWebhooks", ({ path }) => inOrg(path.org_id, false, (scope) => webhooks.list(scope)))
      .handle("orgCreateWebhook", ({ path, payload }) =>
        inOrg(path.org_id, true, (scope, actor) => webhooks.create(scope, payload, actor))
      )
      .handle("orgWebhookDeliveries", ({ path, urlParams }) =>
        inOrg(path.org_id, false, (scope) => webhooks.deliveries(scope, urlParams))
      )
      .handle("orgRedeliverWebhook", ({ path }) =>
        inOrg(path.org_id, true, (scope, actor) => webhooks.redeliver(scope, path.delivery_id, actor))
      )
      .handle("orgGetWebhook", ({ path }) =>
        inOrg(path.org_id, false, (scope) => webhooks.get(scope, path.endpoint_id))
      )
      .handle("orgUpdateWebhook", ({ path, payload }) =>
        inOrg(path.org_id, true, (scope, actor) => webhooks.update(scope, path.endpoint_id, payload, actor))
      )
      .handle("orgDeleteWebhook", ({ path }) =>
        inOrg(path.org_id, true, (scope, actor) => webhooks.remove(scope, path.endpoint_id, actor))
      )
      .handle("orgRotateWebhookSecret", ({ path }) =>
        inOrg(path.org_id, true, (scope, actor) => webhooks.rotate(scope, path.endpoint_id, actor))
      )
      .handle("orgTestWebhook", ({ path }) =>
        inOrg(path.org_id, true, (scope) => webhooks.test(scope, path.endpoint_id))
      )
      .handle("agentListWebhooks", ({ path }) => inAgent(path.agent_id, false, (scope) => webhooks.list(scope)))
      .handle("agentCreateWebhook", ({ path, payload }) =>
        inAgent(path.agent_id, true, (scope, actor) => webhooks.create(scope, payload, actor))
      )
      .handle("agentWebhookDeliveries", ({ path, urlParams }) =>
        inAgent(path.agent_id, false, (scope) => webhooks.deliveries(scope, urlParams))
      )
      .handle("agentRedeliverWebhook", ({ path }) =>
        inAgent(path.agent_id, true, (scope, actor) => webhooks.redeliver(scope, path.delivery_id, actor))
      )
      .handle("agentGetWebhook", ({ path }) =>
        inAgent(path.agent_id, false, (scope) => webhooks.get(scope, path.endpoint_id))
      )
      .handle("agentUpdateWebhook", ({ path, payload }) =>
        inAgent(path.agent_id, true, (scope, actor) => webhooks.update(scope, path.endpoint_id, payload, actor))
      )
      .handle("agentDeleteWebhook", ({ path }) =>
        inAgent(path.agent_id, true, (scope, actor) => webhooks.remove(scope, path.endpoint_id, actor))
      )
      .handle("agentRotateWebhookSecret", ({ path }) =>
        inAgent(path.agent_id, true, (scope, actor) => webhooks.rotate(scope, path.endpoint_id, actor))
      )
      .handle("agentTestWebhook", ({ path }) =>
        inAgent(path.agent_id, true, (scope) => webhooks.test(scope, path.endpoint_id))
      )
  })
)
