/**
 * The security table (issue 5, "Bar"): every authenticated route called with no credentials, a
 * Member token, a token of another organization, an API key of lower role (a member-role key of
 * the organization) and the service-role key; only the intended callers succeed. Then
 * impersonation: read-only, one hour, admins cannot be impersonated, every write refused.
 *
 * Targets are the organization's agent and the organization itself, so a Member can read them, the
 * other organization cannot see them (404) and writes need Admin (403). Destructive routes get a
 * fresh target per call.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { anchorChainLayer } from "../support/AnchorChainFixture.js"
import { randomUUID } from "node:crypto"
import { IdentityRepo } from "../../adapters/store/identity/IdentityRepo.js"
import { GovernanceLog } from "../../adapters/store/GovernanceLog.js"
import * as ApprovalRepo from "../../adapters/store/ApprovalRepo.js"
import { Store } from "../../adapters/store/Store.js"
import { AgentState } from "../../adapters/bus/AgentState.js"
import { agentEndpointOwner, orgEndpointOwner, WebhookRepo } from "../../adapters/store/WebhookRepo.js"
import { newEnvelope } from "../../core/Events.js"
import { fanOutEvent } from "../../streams/WebhookFanOut.js"
import { agentGovernanceLog, type GovernanceLogRef, orgGovernanceLog } from "../../core/Governance.js"
import { CandorApi } from "../../src/api/Api.js"
import { makeOperatorSignIn, OperatorSignIn } from "../../adapters/auth/OperatorSignIn.js"
import { cardFor, seed } from "./AgentData.js"
import * as Harness from "./Support.js"
import { ApiHarness } from "./Support.js"

type Caller = "member" | "otherOrg" | "memberKey" | "service" | "operator"
const CALLERS: ReadonlyArray<Caller> = ["member", "otherOrg", "memberKey", "service", "operator"]

interface Target {
  readonly path: string
  readonly body?: unknown
}

interface Row {
  readonly method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE"
  /** The declared route template, to check every route of the API is in the table. */
  readonly route: string
  /** A fresh target per call for routes that change what they touch. */
  readonly target: Effect.Effect<
    Target,
    never,
    ApiHarness | IdentityRepo | SqlClient.SqlClient | Store | GovernanceLog | WebhookRepo | AgentState
  >
  /**
   * Callers that must succeed (2xx); every other one must get 403 or 404. The console operator
   * session (`cos_`) has the service-role key's rights unless `operator` says otherwise.
   */
  readonly allowed: ReadonlyArray<Caller>
  /** The operator session, when it differs from the service-role key (the routes reserved to the key). */
  readonly operator?: boolean
  /** The intended caller, which must succeed too. */
  readonly intended: "owner" | "admin" | "member" | "service"
  /** A stream that never ends: only the status and headers of a success are read. */
  readonly headersOnly?: true
}

const fixtures = Effect.map(ApiHarness, (api) => api.fixtures)
const fixed = (path: (f: Harness.Fixtures) => string, body?: (f: Harness.Fixtures) => unknown) =>
  Effect.map(fixtures, (f): Target => ({ path: path(f), ...(body === undefined ? {} : { body: body(f) }) }))

/** A new organization owned by the fixtures' owner, with the fixtures' admin and member in it. */
const freshOrg = Effect.gen(function* () {
  const { admin, member, owner } = yield* fixtures
  const orgId = `org_${randomUUID()}`
  const repo = yield* IdentityRepo
  yield* Effect.orDie(
    repo.createOrg({
      org_id: orgId,
      name: "Fresh",
      slug: `fresh-${randomUUID().slice(0, 8)}`,
      billing_account_id: `ba_${randomUUID()}`,
      owner_user_id: owner.userId
    })
  )
  yield* Effect.orDie(repo.putMember(orgId, admin.userId, "admin"))
  yield* Effect.orDie(repo.putMember(orgId, member.userId, "member"))
  return orgId
})

/** A pending approval (issue 28) of the fixtures' organization, made on the store: its id. */
const freshApproval = Effect.gen(function* () {
  const { orgId, orgAgent } = yield* fixtures
  const repo = yield* ApprovalRepo.make
  const approvalId = `apr-${randomUUID()}`
  const now = Date.now()
  yield* Effect.orDie(
    repo.insert({
      approval_id: approvalId,
      org_id: orgId,
      agent_id: orgAgent,
      server_id: null,
      tool: "read_file",
      arguments_hash: "ab".repeat(32),
      reason: "needs a person",
      requested_at: new Date(now).toISOString(),
      expires_at: new Date(now + 3_600_000).toISOString(),
      status: "pending",
      decided_at: null,
      decided_by: null,
      decision_reason: null
    })
  )
  return approvalId
})

/** A log with at least one entry, so its proofs exist. */
const withEntry = (log: GovernanceLogRef, path: string) =>
  Effect.flatMap(GovernanceLog, (logs) =>
    logs.append(log, { action: "enforcement.mode", actor: "service", previous_state: null, new_state: null })
  ).pipe(Effect.orDie, Effect.as({ path }))
/**
 * A tool policy put in force at `path` (of the fixtures, or of a fresh organization or agent for the
 * routes that delete it) with the service-role key, for the routes that need one to read or delete.
 */
const POLICY = { forbidden: [{ pattern: "shell_*", reason: "no shell" }] }
const withPolicy = (
  path: ((f: Harness.Fixtures) => string) | Effect.Effect<string, never, ApiHarness | IdentityRepo>
) =>
  Effect.gen(function* () {
    const api = yield* ApiHarness
    const target = typeof path === "function" ? path(api.fixtures) : yield* path
    const put = yield* api.call("PUT", target, { token: api.serviceRoleKey, body: POLICY })
    if (put.status !== 200) return yield* Effect.dieMessage(`PUT ${target}: ${put.status}`)
    return { path: target }
  })

/** A conscience value in a fresh organization (created with the service-role key): its path. */
const freshConscienceValue = Effect.gen(function* () {
  const api = yield* ApiHarness
  const orgId = yield* freshOrg
  const created = yield* api.call("POST", `/v1/orgs/${orgId}/conscience-values`, {
    token: api.serviceRoleKey,
    body: { type: "HOPE", name: "hope", content: "That agents are useful." }
  })
  return `/v1/orgs/${orgId}/conscience-values/${created.body.value_id}`
})

/** A webhook endpoint (made with the service-role key) of a fresh organization or a fresh agent of the fixtures' one, with one delivery. */
const freshWebhook = (scope: "org" | "agent") =>
  Effect.gen(function* () {
    const api = yield* ApiHarness
    const { orgId, owner } = api.fixtures
    const fresh = scope === "org" ? yield* freshOrg : yield* api.claimAgent({ userId: owner.userId, orgId })
    const root = scope === "org" ? `/v1/orgs/${fresh}` : `/v1/agents/${fresh}`
    const created = yield* api.call("POST", `${root}/webhooks`, {
      token: api.serviceRoleKey,
      body: { url: "http://127.0.0.1:9/hook", event_types: [] }
    })
    if (created.status !== 201) return yield* Effect.dieMessage(`POST ${root}/webhooks: ${created.status}`)
    yield* Effect.orDie(
      fanOutEvent(
        newEnvelope({
          type: "agent.paused",
          source: randomUUID(),
          org_id: scope === "org" ? fresh : orgId,
          ...(scope === "agent" ? { agent_id: fresh } : {}),
          created_at: new Date(),
          data: {}
        })
      )
    )
    const owned = scope === "org" ? orgEndpointOwner(fresh) : agentEndpointOwner(fresh)
    const page = yield* Effect.orDie((yield* WebhookRepo).deliveries(owned, { limit: 1, offset: 0 }))
    return { root, endpoint: `${root}/webhooks/${created.body.endpoint_id}`, delivery: page.items[0]!.delivery_id }
  })

/** The webhook routes of one owner: Owner and Admin (and the service-role key) only. */
const webhookRows = (scope: "org" | "agent"): ReadonlyArray<Row> => {
  const root = scope === "org" ? "/v1/orgs/:org_id" : "/v1/agents/:agent_id"
  const fixedRoot = (f: Harness.Fixtures) => (scope === "org" ? `/v1/orgs/${f.orgId}` : `/v1/agents/${f.orgAgent}`)
  const onFresh = (path: (w: { root: string; endpoint: string; delivery: string }) => string, body?: unknown) =>
    Effect.map(freshWebhook(scope), (w): Target => ({ path: path(w), ...(body === undefined ? {} : { body }) }))
  const row = (method: Row["method"], route: string, target: Row["target"]): Row => ({
    method,
    route: `${root}${route}`,
    target,
    allowed: ["service"],
    intended: "admin"
  })
  return [
    row(
      "GET",
      "/webhooks",
      fixed((f) => `${fixedRoot(f)}/webhooks`)
    ),
    row(
      "POST",
      "/webhooks",
      Effect.map(freshWebhook(scope), (w) => ({
        path: `${w.root}/webhooks`,
        body: { url: "http://127.0.0.1:9/hook", event_types: ["agent.paused"] }
      }))
    ),
    row(
      "GET",
      "/webhooks/deliveries",
      fixed((f) => `${fixedRoot(f)}/webhooks/deliveries`)
    ),
    row(
      "POST",
      "/webhooks/deliveries/:delivery_id/redeliver",
      onFresh((w) => `${w.root}/webhooks/deliveries/${w.delivery}/redeliver`)
    ),
    row(
      "GET",
      "/webhooks/:endpoint_id",
      onFresh((w) => w.endpoint)
    ),
    row(
      "PATCH",
      "/webhooks/:endpoint_id",
      onFresh((w) => w.endpoint, { description: "changed" })
    ),
    row(
      "DELETE",
      "/webhooks/:endpoint_id",
      onFresh((w) => w.endpoint)
    ),
    row(
      "POST",
      "/webhooks/:endpoint_id/rotate-secret",
      onFresh((w) => `${w.endpoint}/rotate-secret`)
    ),
    row(
      "POST",
      "/webhooks/:endpoint_id/test",
      onFresh((w) => `${w.endpoint}/test`)
    )
  ]
}

/** A team of two fresh agents of the fixtures' organization (created with the service-role key): its path. */
const freshTeam = (withCard: boolean) =>
  Effect.gen(function* () {
    const api = yield* ApiHarness
    const { orgId, owner } = api.fixtures
    const agents = [
      yield* api.claimAgent({ userId: owner.userId, orgId }),
      yield* api.claimAgent({ userId: owner.userId, orgId })
    ]
    const created = yield* api.call("POST", "/v1/teams", {
      token: api.serviceRoleKey,
      body: { org_id: orgId, name: `team-${randomUUID()}`, agent_ids: agents }
    })
    if (created.status !== 201) return yield* Effect.dieMessage(`POST /v1/teams: ${created.status}`)
    const path = `/v1/teams/${created.body.team.team_id}`
    if (withCard) {
      const put = yield* api.call("PUT", `${path}/card`, { token: api.serviceRoleKey, body: { card_json: TEAM_CARD } })
      if (put.status !== 200) return yield* Effect.dieMessage(`PUT ${path}/card: ${put.status}`)
      const store = yield* Store
      for (const agentId of agents)
        yield* Effect.orDie(store.putCard(agentId, cardFor(agentId, `card-${randomUUID().slice(0, 8)}`)))
    }
    return { path, agents }
  })
const TEAM_CARD = {
  principal: { type: "organization", relationship: "delegated_authority" },
  values: { declared: ["honesty"] },
  autonomy_envelope: { bounded_actions: ["reply"], escalation_triggers: [] },
  audit_commitment: { retention_days: 30, queryable: true }
}
/** A trust edge from the organization's agent to a fresh agent of the organization (service-role key): its path. */
const freshTrustEdge = Effect.gen(function* () {
  const api = yield* ApiHarness
  const { orgAgent, orgId, owner } = api.fixtures
  const target = yield* api.claimAgent({ userId: owner.userId, orgId })
  const created = yield* api.call("POST", `/v1/agents/${orgAgent}/trust-edges`, {
    token: api.serviceRoleKey,
    body: { target_agent_id: target, trust_level: "medium", reason: "security table" }
  })
  if (created.status !== 201) return yield* Effect.dieMessage(`POST trust-edges: ${created.status}`)
  return `/v1/agents/${orgAgent}/trust-edges/${created.body.id}`
})

const ALL: ReadonlyArray<Caller> = CALLERS

/** The organization's agent and a second agent of the organization: a team to assess. */
const riskTeamAgents = Effect.gen(function* () {
  const api = yield* ApiHarness
  const { orgAgent, orgId, owner } = api.fixtures
  return [orgAgent, yield* api.claimAgent({ userId: owner.userId, orgId })]
})

/** A new agent of the fixtures' organization. */
const freshOrgAgent = Effect.flatMap(ApiHarness, (api) =>
  api.claimAgent({ userId: api.fixtures.owner.userId, orgId: api.fixtures.orgId })
)

/** A scoped transaction opened (with the service-role key) for a new agent of the fixtures' organization. */
const freshTransaction = Effect.gen(function* () {
  const api = yield* ApiHarness
  const res = yield* api.call("POST", "/v1/transactions", {
    token: api.serviceRoleKey,
    body: { agent_id: yield* freshOrgAgent, action_type: "refund", tools: ["issue_refund"], duration_hours: 1 }
  })
  if (res.status !== 201) return yield* Effect.dieMessage(`POST /v1/transactions: ${res.status}`)
  return res.body.transaction_id as string
})

/** A recorded assessment (by the Owner) of the organization's agent, individual or team. */
const riskAssessment = (kind: "individual" | "team") =>
  Effect.gen(function* () {
    const api = yield* ApiHarness
    const res =
      kind === "individual"
        ? yield* api.call("POST", "/v1/risk/assess", {
            token: api.fixtures.owner.token,
            body: { agent_id: api.fixtures.orgAgent, context: { action_type: "tool_invocation" } }
          })
        : yield* api.call("POST", "/v1/risk/assess/team", {
            token: api.fixtures.owner.token,
            body: {
              agent_ids: yield* riskTeamAgents,
              context: { action_type: "tool_invocation", coordination_mode: "consensus" }
            }
          })
    expect(res.status).toBe(200)
    return res.body.assessment_id as string
  })
/** A fresh agent of the organization with one checkpoint in its log: something to anchor. */
const loggedOrgAgent = Effect.gen(function* () {
  const api = yield* ApiHarness
  const agentId = yield* api.claimAgent({ userId: api.fixtures.owner.userId, orgId: api.fixtures.orgId })
  yield* Effect.orDie(seed(agentId, 1))
  return agentId
})

/** A tree-head anchor (made with the service-role key) of a fresh agent of the organization. */
const freshAnchor = Effect.gen(function* () {
  const api = yield* ApiHarness
  const agentId = yield* loggedOrgAgent
  const res = yield* api.call("POST", "/v1/on-chain/anchor-root", {
    token: api.serviceRoleKey,
    body: { agent_ids: [agentId] }
  })
  if (res.status !== 200) return yield* Effect.dieMessage(`POST /v1/on-chain/anchor-root: ${res.status}`)
  return { anchorId: res.body.anchor_id as string, agentId }
})

const USERS: ReadonlyArray<Caller> = ["member", "otherOrg"]

/** A public IP literal: the MCP URL guard resolves nothing for it and refuses nothing (no private addresses here). */
const MCP_URL = "https://93.184.216.34/mcp"

/** An MCP server of the fixtures' organization (made with the service-role key): its id. */
const freshMcpServer = Effect.gen(function* () {
  const api = yield* ApiHarness
  const res = yield* api.call("POST", `/v1/orgs/${api.fixtures.orgId}/mcp-servers`, {
    token: api.serviceRoleKey,
    body: { name: "fresh", url: MCP_URL }
  })
  if (res.status !== 201) return yield* Effect.dieMessage(`POST mcp-servers: ${res.status}`)
  return res.body.server_id as string
})

/** An MCP server with a changed definition of tool `t` waiting for acceptance (as a gateway reports it): its accept path. */
const freshToolChange = Effect.gen(function* () {
  const serverId = yield* freshMcpServer
  yield* Effect.orDie(
    (yield* AgentState).updateKey(serverId, { mcpPins: { pinned: { t: "sha256:aa" }, changed: { t: "sha256:bb" } } })
  )
  return { path: `/v1/mcp-servers/${serverId}/tools/t/accept` }
})

/** The MCP gateway's routes (docs/mcp.md): Owner and Admin (and the service-role key) only. */
const mcpRows: ReadonlyArray<Row> = [
  {
    method: "GET",
    route: "/v1/orgs/:org_id/mcp-servers",
    target: fixed((f) => `/v1/orgs/${f.orgId}/mcp-servers`),
    allowed: ["service"],
    intended: "admin"
  },
  {
    method: "POST",
    route: "/v1/orgs/:org_id/mcp-servers",
    target: Effect.map(freshOrg, (orgId) => ({
      path: `/v1/orgs/${orgId}/mcp-servers`,
      body: { name: "s", url: MCP_URL }
    })),
    allowed: ["service"],
    intended: "admin"
  },
  ...(["GET", "PATCH", "DELETE"] as const).map((method): Row => ({
    method,
    route: "/v1/orgs/:org_id/mcp-servers/:server_id",
    target: Effect.gen(function* () {
      const f = yield* fixtures
      const path = `/v1/orgs/${f.orgId}/mcp-servers/${yield* freshMcpServer}`
      return method === "PATCH" ? { path, body: { name: "renamed" } } : { path }
    }),
    allowed: ["service"],
    intended: "admin"
  })),
  {
    method: "POST",
    route: "/v1/agents/:agent_id/mcp-tokens",
    target: Effect.map(freshOrgAgent, (agentId) => ({ path: `/v1/agents/${agentId}/mcp-tokens` })),
    allowed: ["service"],
    intended: "admin"
  },
  {
    method: "GET",
    route: "/v1/agents/:agent_id/mcp-tokens",
    target: fixed((f) => `/v1/agents/${f.orgAgent}/mcp-tokens`),
    allowed: ["service"],
    intended: "admin"
  },
  {
    method: "DELETE",
    route: "/v1/agents/:agent_id/mcp-tokens/:token_id",
    target: Effect.gen(function* () {
      const api = yield* ApiHarness
      const agentId = yield* freshOrgAgent
      const res = yield* api.call("POST", `/v1/agents/${agentId}/mcp-tokens`, { token: api.serviceRoleKey })
      if (res.status !== 201) return yield* Effect.dieMessage(`POST mcp-tokens: ${res.status}`)
      return { path: `/v1/agents/${agentId}/mcp-tokens/${res.body.token_id}` }
    }),
    allowed: ["service"],
    intended: "admin"
  },
  {
    method: "POST",
    route: "/v1/mcp-servers/:server_id/tools/:tool_name/accept",
    target: freshToolChange,
    allowed: ["service"],
    intended: "admin"
  }
]

const ROWS: ReadonlyArray<Row> = [
  ...mcpRows,
  // ---- identity and commercial routes ----
  { method: "GET", route: "/v1/plans", target: fixed(() => "/v1/plans"), allowed: ALL, intended: "member" },
  {
    method: "POST",
    route: "/v1/orgs",
    target: fixed(
      () => "/v1/orgs",
      () => ({ name: "Org", slug: `s-${randomUUID().slice(0, 8)}` })
    ),
    allowed: USERS,
    intended: "member"
  },
  {
    method: "GET",
    route: "/v1/orgs",
    target: fixed(() => "/v1/orgs"),
    allowed: ["member", "otherOrg", "memberKey"],
    intended: "member"
  },
  {
    method: "GET",
    route: "/v1/orgs/:org_id",
    target: fixed((f) => `/v1/orgs/${f.orgId}`),
    allowed: ["member", "memberKey", "service"],
    intended: "member"
  },
  {
    method: "PATCH",
    route: "/v1/orgs/:org_id",
    target: fixed(
      (f) => `/v1/orgs/${f.orgId}`,
      () => ({ company_name: "Acme Holdings" })
    ),
    allowed: ["service"],
    intended: "owner"
  },
  {
    method: "DELETE",
    route: "/v1/orgs/:org_id",
    target: Effect.map(freshOrg, (orgId) => ({ path: `/v1/orgs/${orgId}` })),
    allowed: ["service"],
    intended: "owner"
  },
  {
    method: "GET",
    route: "/v1/orgs/:org_id/members",
    target: fixed((f) => `/v1/orgs/${f.orgId}/members`),
    allowed: ["member", "memberKey", "service"],
    intended: "member"
  },
  {
    method: "PUT",
    route: "/v1/orgs/:org_id/members/:user_id",
    target: fixed(
      (f) => `/v1/orgs/${f.orgId}/members/${f.member.userId}`,
      () => ({ role: "member" })
    ),
    allowed: ["service"],
    intended: "admin"
  },
  {
    method: "DELETE",
    route: "/v1/orgs/:org_id/members/:user_id",
    target: Effect.gen(function* () {
      const api = yield* ApiHarness
      const { orgId } = api.fixtures
      const leaver = yield* api.freshUser
      yield* Effect.orDie((yield* IdentityRepo).putMember(orgId, leaver.userId, "member"))
      return { path: `/v1/orgs/${orgId}/members/${leaver.userId}` }
    }),
    allowed: ["service"],
    intended: "admin"
  },
  {
    method: "POST",
    route: "/v1/orgs/:org_id/transfer-ownership",
    target: Effect.gen(function* () {
      const { admin } = yield* fixtures
      return { path: `/v1/orgs/${yield* freshOrg}/transfer-ownership`, body: { user_id: admin.userId } }
    }),
    allowed: ["service"],
    intended: "owner"
  },
  {
    method: "POST",
    route: "/v1/orgs/:org_id/invites",
    target: fixed(
      (f) => `/v1/orgs/${f.orgId}/invites`,
      () => ({ email: `${randomUUID()}@example.test`, role: "member" })
    ),
    allowed: ["service"],
    intended: "admin"
  },
  {
    method: "GET",
    route: "/v1/orgs/:org_id/invites",
    target: fixed((f) => `/v1/orgs/${f.orgId}/invites`),
    allowed: ["service"],
    intended: "admin"
  },
  {
    method: "DELETE",
    route: "/v1/orgs/:org_id/invites/:invite_id",
    target: Effect.gen(function* () {
      const api = yield* ApiHarness
      const { admin, orgId } = api.fixtures
      const invite = yield* api.call("POST", `/v1/orgs/${orgId}/invites`, {
        token: admin.token,
        body: { email: `${randomUUID()}@example.test`, role: "member" }
      })
      return { path: `/v1/orgs/${orgId}/invites/${invite.body.invite_id}` }
    }),
    allowed: ["service"],
    intended: "admin"
  },
  {
    method: "POST",
    route: "/v1/invites/accept",
    target: Effect.gen(function* () {
      const api = yield* ApiHarness
      const invite = yield* api.call("POST", `/v1/orgs/${yield* freshOrg}/invites`, {
        token: api.fixtures.owner.token,
        body: { email: api.fixtures.member.email, role: "member" }
      })
      return { path: "/v1/invites/accept", body: { token: invite.body.token } }
    }),
    // Only the invited address accepts: the member (here also the intended caller).
    allowed: ["member"],
    intended: "member"
  },
  {
    method: "POST",
    route: "/v1/api-keys",
    target: fixed(
      () => "/v1/api-keys",
      () => ({ name: "k" })
    ),
    allowed: USERS,
    intended: "member"
  },
  { method: "GET", route: "/v1/api-keys", target: fixed(() => "/v1/api-keys"), allowed: USERS, intended: "member" },
  {
    method: "POST",
    route: "/v1/api-keys/:key_id/rotate",
    target: Effect.gen(function* () {
      const api = yield* ApiHarness
      const key = yield* api.call("POST", "/v1/api-keys", {
        token: api.fixtures.admin.token,
        body: { name: "org", org_id: api.fixtures.orgId }
      })
      return { path: `/v1/api-keys/${key.body.key_id}/rotate` }
    }),
    allowed: [],
    intended: "admin"
  },
  {
    method: "DELETE",
    route: "/v1/api-keys/:key_id",
    target: Effect.gen(function* () {
      const api = yield* ApiHarness
      const key = yield* api.call("POST", "/v1/api-keys", {
        token: api.fixtures.admin.token,
        body: { name: "org", org_id: api.fixtures.orgId }
      })
      return { path: `/v1/api-keys/${key.body.key_id}` }
    }),
    allowed: [],
    intended: "admin"
  },
  {
    method: "POST",
    route: "/v1/agents/claim",
    target: fixed(
      () => "/v1/agents/claim",
      () => ({ provider_key: `sk-${randomUUID()}` })
    ),
    allowed: USERS,
    intended: "member"
  },
  {
    method: "POST",
    route: "/v1/admin/impersonate",
    target: Effect.gen(function* () {
      const api = yield* ApiHarness
      return { path: "/v1/admin/impersonate", body: { user_id: (yield* api.freshUser).userId } }
    }),
    allowed: ["service"],
    // Administration is reserved to the key itself: the browser's operator session is refused.
    operator: false,
    intended: "service"
  },
  {
    method: "PUT",
    route: "/v1/admin/users/:user_id",
    target: Effect.gen(function* () {
      const api = yield* ApiHarness
      return { path: `/v1/admin/users/${(yield* api.freshUser).userId}`, body: { plan_id: "team" } }
    }),
    allowed: ["service"],
    // Administration is reserved to the key itself: the browser's operator session is refused.
    operator: false,
    intended: "service"
  },
  {
    method: "PUT",
    route: "/v1/admin/orgs/:org_id/plan",
    target: Effect.map(freshOrg, (orgId) => ({ path: `/v1/admin/orgs/${orgId}/plan`, body: { plan_id: "team" } })),
    allowed: ["service"],
    // Administration is reserved to the key itself: the browser's operator session is refused.
    operator: false,
    intended: "service"
  },
  {
    method: "PUT",
    route: "/v1/admin/promos/:code",
    target: fixed(
      () => "/v1/admin/promos/SECURITY",
      () => ({ name: "s", discount_percent: 5, discount_amount_cents: 0 })
    ),
    allowed: ["service"],
    // Administration is reserved to the key itself: the browser's operator session is refused.
    operator: false,
    intended: "service"
  },
  {
    method: "PUT",
    route: "/v1/admin/blog/posts/:post_id",
    target: fixed(
      () => `/v1/admin/blog/posts/post-${randomUUID()}`,
      (f) => ({ agent_id: f.orgAgent, title: "t", slug: `s-${randomUUID().slice(0, 8)}` })
    ),
    allowed: ["service"],
    // Administration is reserved to the key itself: the browser's operator session is refused.
    operator: false,
    intended: "service"
  },
  // ---- dead letters (issue 24): every one to the service-role key, an organization's to its Owners ----
  {
    method: "GET",
    route: "/v1/admin/dead-letters",
    target: fixed(() => "/v1/admin/dead-letters"),
    allowed: ["service"],
    // Administration is reserved to the key itself: the browser's operator session is refused.
    operator: false,
    intended: "service"
  },
  {
    method: "GET",
    route: "/v1/orgs/:org_id/dead-letters",
    target: fixed((f) => `/v1/orgs/${f.orgId}/dead-letters`),
    allowed: ["service"],
    intended: "owner"
  },
  // ---- human approval (issue 28): an organization's members read, its Owners and Admins decide ----
  {
    method: "GET",
    route: "/v1/orgs/:org_id/approvals",
    target: fixed((f) => `/v1/orgs/${f.orgId}/approvals?status=pending`),
    allowed: ["member", "memberKey", "service"],
    intended: "member"
  },
  {
    method: "GET",
    route: "/v1/approvals/:approval_id",
    target: Effect.map(freshApproval, (id) => ({ path: `/v1/approvals/${id}` })),
    allowed: ["member", "memberKey", "service"],
    intended: "member"
  },
  ...(["approve", "deny"] as const).map((decision): Row => ({
    method: "POST",
    route: `/v1/approvals/:approval_id/${decision}`,
    target: Effect.map(freshApproval, (id) => ({ path: `/v1/approvals/${id}/${decision}`, body: { reason: "ok" } })),
    allowed: ["service"],
    intended: "admin"
  })),
  {
    method: "POST",
    route: "/v1/license/validate",
    target: fixed(
      () => "/v1/license/validate",
      () => ({ license: "nope", instance_id: "i-1", instance_metadata: {} })
    ),
    allowed: ALL,
    intended: "member"
  },
  {
    method: "POST",
    route: "/v1/billing/validate-promo",
    target: fixed(
      () => "/v1/billing/validate-promo",
      () => ({ code: "LAUNCH20" })
    ),
    allowed: ALL,
    intended: "member"
  },
  {
    method: "POST",
    route: "/v1/enterprise/contact",
    target: fixed(
      () => "/v1/enterprise/contact",
      () => ({
        name: "N",
        email: "n@example.test",
        company: "C",
        role: "CTO",
        company_size: "50-200",
        message: "hi"
      })
    ),
    // A member-role key is read-only.
    allowed: ["member", "otherOrg", "service"],
    intended: "member"
  },
  { method: "GET", route: "/v1/blog/posts", target: fixed(() => "/v1/blog/posts"), allowed: ALL, intended: "member" },
  {
    method: "GET",
    route: "/v1/blog/authors/:agent_id",
    target: fixed((f) => `/v1/blog/authors/${f.orgAgent}`),
    allowed: ["member", "memberKey", "service"],
    intended: "member"
  },

  // ---- agent data (docs/api.md, "Agent data") ----
  { method: "GET", route: "/v1/agents", target: fixed(() => "/v1/agents"), allowed: ALL, intended: "member" },
  ...(
    [
      "/v1/agents/:agent_id/checkpoints",
      "/v1/integrity/:agent_id",
      "/v1/drift/:agent_id",
      "/v1/ssm/:agent_id",
      "/v1/agents/:agent_id/drift/aip",
      "/v1/agents/:agent_id/enforcement",
      "/v1/agents/:agent_id/enforcement-records",
      "/v1/agents/:agent_id/permissions",
      "/v1/agents/:agent_id"
    ] as const
  ).map((route): Row => ({
    method: "GET",
    route,
    target: fixed((f) => route.replace(":agent_id", f.orgAgent)),
    allowed: ["member", "memberKey", "service"],
    intended: "member"
  })),
  {
    method: "GET",
    route: "/v1/agents/:agent_id/checkpoints/:checkpoint_id",
    target: Effect.gen(function* () {
      const { orgAgent } = yield* fixtures
      const [input] = yield* Effect.orDie(seed(orgAgent, 1))
      return { path: `/v1/agents/${orgAgent}/checkpoints/${input!.checkpoint.checkpoint_id}` }
    }),
    allowed: ["member", "memberKey", "service"],
    intended: "member"
  },
  {
    method: "GET",
    route: "/v1/traces/:trace_id",
    target: Effect.gen(function* () {
      const { orgAgent } = yield* fixtures
      const [input] = yield* Effect.orDie(seed(orgAgent, 1))
      return { path: `/v1/traces/${input!.trace.trace_id}` }
    }),
    allowed: ["member", "memberKey", "service"],
    intended: "member"
  },
  {
    method: "GET",
    route: "/v1/agents/:agent_id/export",
    target: Effect.gen(function* () {
      const { orgAgent } = yield* fixtures
      // An agent with a log: one without has nothing to export (404 for everyone).
      yield* Effect.orDie(seed(orgAgent, 1))
      return { path: `/v1/agents/${orgAgent}/export` }
    }),
    allowed: ["member", "memberKey", "service"],
    intended: "member"
  },
  {
    method: "PUT",
    route: "/v1/agents/:agent_id/enforcement",
    target: fixed(
      (f) => `/v1/agents/${f.orgAgent}/enforcement`,
      () => ({ mode: "observe" })
    ),
    allowed: ["service"],
    intended: "admin"
  },
  {
    method: "PATCH",
    route: "/v1/agents/:agent_id",
    target: fixed(
      (f) => `/v1/agents/${f.orgAgent}`,
      () => ({ display_name: "Security table" })
    ),
    allowed: ["service"],
    intended: "admin"
  },
  {
    method: "PUT",
    route: "/v1/agents/:agent_id/failure-policy",
    target: fixed(
      (f) => `/v1/agents/${f.orgAgent}/failure-policy`,
      () => ({ failure_policy: "fail_open" })
    ),
    allowed: ["service"],
    intended: "admin"
  },
  {
    method: "PUT",
    route: "/v1/agents/:agent_id/conscience-values",
    target: fixed(
      (f) => `/v1/agents/${f.orgAgent}/conscience-values`,
      () => ({ conscience_values: [] })
    ),
    allowed: ["service"],
    intended: "admin"
  },
  {
    method: "PATCH",
    route: "/v1/agents/:agent_id/card",
    target: fixed(
      (f) => `/v1/agents/${f.orgAgent}/card`,
      (f) => ({ card_json: cardFor(f.orgAgent, `card-${randomUUID().slice(0, 8)}`), conscience_values: [] })
    ),
    // Service-role key only (docs/api.md, "PATCH /v1/agents/{agent_id}/card"): even the owner is refused,
    // and the console's operator session (it keeps the key's rights but the routes reserved to it).
    allowed: ["service"],
    operator: false,
    intended: "service"
  },
  // ---- webhook endpoints ----
  ...webhookRows("org"),
  ...webhookRows("agent"),
  // ---- tool policies ----
  {
    method: "GET",
    route: "/v1/agents/:agent_id/policy",
    target: withPolicy((f) => `/v1/agents/${f.orgAgent}/policy`),
    allowed: ["member", "memberKey", "service"],
    intended: "member"
  },
  ...(["/v1/agents/:agent_id/policy/resolved", "/v1/agents/:agent_id/policy/history"] as const).map((route): Row => ({
    method: "GET",
    route,
    target: fixed((f) => route.replace(":agent_id", f.orgAgent)),
    allowed: ["member", "memberKey", "service"],
    intended: "member"
  })),
  {
    method: "PUT",
    route: "/v1/agents/:agent_id/policy",
    target: fixed(
      (f) => `/v1/agents/${f.orgAgent}/policy`,
      () => POLICY
    ),
    allowed: ["service"],
    intended: "admin"
  },
  {
    method: "DELETE",
    route: "/v1/agents/:agent_id/policy",
    target: withPolicy(Effect.map(freshOrgAgent, (agentId) => `/v1/agents/${agentId}/policy`)),
    allowed: ["service"],
    intended: "admin"
  },
  {
    method: "GET",
    route: "/v1/orgs/:org_id/policy",
    target: withPolicy((f) => `/v1/orgs/${f.orgId}/policy`),
    allowed: ["member", "memberKey", "service"],
    intended: "member"
  },
  {
    method: "GET",
    route: "/v1/orgs/:org_id/policy/history",
    target: fixed((f) => `/v1/orgs/${f.orgId}/policy/history`),
    allowed: ["member", "memberKey", "service"],
    intended: "member"
  },
  {
    method: "PUT",
    route: "/v1/orgs/:org_id/policy",
    target: fixed(
      (f) => `/v1/orgs/${f.orgId}/policy`,
      () => POLICY
    ),
    allowed: ["service"],
    intended: "admin"
  },
  {
    method: "DELETE",
    route: "/v1/orgs/:org_id/policy",
    target: withPolicy(Effect.map(freshOrg, (orgId) => `/v1/orgs/${orgId}/policy`)),
    allowed: ["service"],
    intended: "admin"
  },
  {
    method: "POST",
    route: "/v1/policies/evaluate",
    target: fixed(
      () => "/v1/policies/evaluate",
      (f) => ({ agent_id: f.orgAgent, tools: ["shell_exec"] })
    ),
    allowed: ["member", "memberKey", "service"],
    intended: "member"
  },
  {
    method: "POST",
    route: "/v1/agents/:agent_id/reverify",
    target: fixed((f) => `/v1/agents/${f.orgAgent}/reverify`),
    allowed: ["service"],
    intended: "admin"
  },
  {
    method: "POST",
    route: "/v1/agents/:agent_id/reverify/aip",
    target: fixed((f) => `/v1/agents/${f.orgAgent}/reverify/aip`),
    allowed: ["service"],
    intended: "admin"
  },
  // ---- governance logs: readers of the agent, members of the organization ----
  {
    method: "GET",
    route: "/v1/agents/:agent_id/governance-log",
    target: fixed((f) => `/v1/agents/${f.orgAgent}/governance-log`),
    allowed: ["member", "memberKey", "service"],
    intended: "member"
  },
  {
    method: "GET",
    route: "/v1/agents/:agent_id/governance-log/:index/inclusion-proof",
    target: Effect.flatMap(fixtures, (f) =>
      withEntry(agentGovernanceLog(f.orgAgent), `/v1/agents/${f.orgAgent}/governance-log/0/inclusion-proof`)
    ),
    allowed: ["member", "memberKey", "service"],
    intended: "member"
  },
  {
    method: "GET",
    route: "/v1/agents/:agent_id/governance-log/consistency-proof",
    target: Effect.flatMap(fixtures, (f) =>
      withEntry(agentGovernanceLog(f.orgAgent), `/v1/agents/${f.orgAgent}/governance-log/consistency-proof?from=1`)
    ),
    allowed: ["member", "memberKey", "service"],
    intended: "member"
  },
  {
    method: "GET",
    route: "/v1/orgs/:org_id/governance-log",
    target: fixed((f) => `/v1/orgs/${f.orgId}/governance-log`),
    allowed: ["member", "memberKey", "service"],
    intended: "member"
  },
  {
    method: "GET",
    route: "/v1/orgs/:org_id/governance-log/:index/inclusion-proof",
    target: Effect.flatMap(fixtures, (f) =>
      withEntry(orgGovernanceLog(f.orgId), `/v1/orgs/${f.orgId}/governance-log/0/inclusion-proof`)
    ),
    allowed: ["member", "memberKey", "service"],
    intended: "member"
  },
  {
    method: "GET",
    route: "/v1/orgs/:org_id/governance-log/consistency-proof",
    target: Effect.flatMap(fixtures, (f) =>
      withEntry(orgGovernanceLog(f.orgId), `/v1/orgs/${f.orgId}/governance-log/consistency-proof?from=1`)
    ),
    allowed: ["member", "memberKey", "service"],
    intended: "member"
  },

  // ---- containment: both path families, a fresh agent of the organization in the state the action leaves ----
  ...(["/v1/agents/:agent_id", "/v1/orgs/:org_id/agents/:agent_id"] as const).flatMap((prefix): ReadonlyArray<Row> => {
    const at = (f: Harness.Fixtures, agentId: string) =>
      prefix.replace(":org_id", f.orgId).replace(":agent_id", agentId)
    const contained = (status: "paused" | "killed" | undefined, action: string) =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const f = api.fixtures
        const agentId = yield* api.claimAgent({ userId: f.owner.userId, orgId: f.orgId })
        if (status !== undefined) {
          const containment = { status, reason: null, contained_at: new Date().toISOString(), contained_by: "system" }
          yield* Effect.orDie((yield* Store).putAgentSettings(agentId, { containment }))
        }
        return { path: `${at(f, agentId)}/${action}`, body: action === "pause" || action === "kill" ? {} : undefined }
      })
    return [
      {
        method: "POST",
        route: `${prefix}/pause`,
        target: contained(undefined, "pause"),
        allowed: ["service"],
        intended: "admin"
      },
      {
        method: "POST",
        route: `${prefix}/resume`,
        target: contained("paused", "resume"),
        allowed: ["service"],
        intended: "admin"
      },
      {
        method: "POST",
        route: `${prefix}/kill`,
        target: contained("paused", "kill"),
        allowed: ["service"],
        intended: "owner"
      },
      {
        method: "POST",
        route: `${prefix}/reactivate`,
        target: contained("killed", "reactivate"),
        allowed: ["service"],
        intended: "owner"
      },
      {
        method: "GET",
        route: `${prefix}/containment`,
        target: fixed((f) => `${at(f, f.orgAgent)}/containment`),
        allowed: ["member", "memberKey", "service"],
        intended: "member"
      },
      {
        method: "PUT",
        route: `${prefix}/containment-policy`,
        target: fixed(
          (f) => `${at(f, f.orgAgent)}/containment-policy`,
          () => ({ auto_containment_threshold: 5 })
        ),
        allowed: ["service"],
        intended: "admin"
      }
    ]
  }),
  // ---- fleet coherence ----
  {
    method: "GET",
    route: "/v1/orgs/:org_id/coherence",
    target: fixed((f) => `/v1/orgs/${f.orgId}/coherence`),
    allowed: ["member", "memberKey", "service"],
    intended: "member"
  },
  // ---- organization conscience values ----
  {
    method: "GET",
    route: "/v1/orgs/:org_id/conscience-values",
    target: fixed((f) => `/v1/orgs/${f.orgId}/conscience-values`),
    allowed: ["member", "memberKey", "service"],
    intended: "member"
  },
  {
    method: "POST",
    route: "/v1/orgs/:org_id/conscience-values",
    target: Effect.map(freshOrg, (orgId) => ({
      path: `/v1/orgs/${orgId}/conscience-values`,
      body: { type: "BELIEF", name: `belief-${randomUUID().slice(0, 8)}`, content: "Users deserve plain answers." }
    })),
    allowed: ["service"],
    intended: "admin"
  },
  {
    method: "PATCH",
    route: "/v1/orgs/:org_id/conscience-values/:value_id",
    target: Effect.map(freshConscienceValue, (path) => ({ path, body: { content: "Changed." } })),
    allowed: ["service"],
    intended: "admin"
  },
  {
    method: "DELETE",
    route: "/v1/orgs/:org_id/conscience-values/:value_id",
    target: Effect.map(freshConscienceValue, (path) => ({ path })),
    allowed: ["service"],
    intended: "admin"
  },
  {
    method: "PUT",
    route: "/v1/orgs/:org_id/conscience-values/order",
    target: Effect.map(freshOrg, (orgId) => ({
      path: `/v1/orgs/${orgId}/conscience-values/order`,
      body: { order: [] }
    })),
    allowed: ["service"],
    intended: "admin"
  },
  {
    method: "PUT",
    route: "/v1/orgs/:org_id/conscience-values/mode",
    target: fixed(
      (f) => `/v1/orgs/${f.orgId}/conscience-values/mode`,
      () => ({ mode: "augment", enabled: true })
    ),
    allowed: ["service"],
    intended: "admin"
  },
  {
    method: "GET",
    route: "/v1/orgs/:org_id/conscience-values/log",
    target: fixed((f) => `/v1/orgs/${f.orgId}/conscience-values/log`),
    // The log is for Owner and Admin: a member (or a member-role key) is refused with 403.
    allowed: ["service"],
    intended: "admin"
  },
  // ---- evidence redaction: members read, Owner and Admin set it ----
  {
    method: "GET",
    route: "/v1/orgs/:org_id/evidence-redaction",
    target: fixed((f) => `/v1/orgs/${f.orgId}/evidence-redaction`),
    allowed: ["member", "memberKey", "service"],
    intended: "member"
  },
  {
    method: "PUT",
    route: "/v1/orgs/:org_id/evidence-redaction",
    // `none`: the shared organization's judging is left as the other tests expect it.
    target: fixed(
      (f) => `/v1/orgs/${f.orgId}/evidence-redaction`,
      () => ({ mode: "none" })
    ),
    allowed: ["service"],
    intended: "admin"
  },
  // ---- teams: members of the organization read, Owner and Admin write ----
  {
    method: "POST",
    route: "/v1/teams",
    target: Effect.gen(function* () {
      const api = yield* ApiHarness
      const { orgId, owner } = api.fixtures
      const agents = [
        yield* api.claimAgent({ userId: owner.userId, orgId }),
        yield* api.claimAgent({ userId: owner.userId, orgId })
      ]
      return { path: "/v1/teams", body: { org_id: orgId, name: `team-${randomUUID()}`, agent_ids: agents } }
    }),
    allowed: ["service"],
    intended: "admin"
  },
  ...(
    [
      ["GET", "/v1/teams/:team_id", ""],
      ["GET", "/v1/teams/:team_id/roster-history", "/roster-history"],
      ["GET", "/v1/teams/:team_id/card", "/card"],
      ["GET", "/v1/teams/:team_id/card/history", "/card/history"],
      // Derive stores nothing: a read of the members' cards.
      ["POST", "/v1/teams/:team_id/card/derive", "/card/derive"]
    ] as const
  ).map(([method, route, suffix]): Row => ({
    method,
    route,
    target: Effect.map(freshTeam(true), (team) => ({ path: `${team.path}${suffix}` })),
    allowed: ["member", "memberKey", "service"],
    intended: "member"
  })),
  {
    method: "GET",
    route: "/v1/orgs/:org_id/teams",
    target: fixed((f) => `/v1/orgs/${f.orgId}/teams`),
    allowed: ["member", "memberKey", "service"],
    intended: "member"
  },
  {
    method: "PATCH",
    route: "/v1/teams/:team_id",
    target: Effect.map(freshTeam(false), (team) => ({ path: team.path, body: { description: "changed" } })),
    allowed: ["service"],
    intended: "admin"
  },
  {
    method: "DELETE",
    route: "/v1/teams/:team_id",
    target: Effect.map(freshTeam(false), (team) => ({ path: team.path })),
    allowed: ["service"],
    intended: "admin"
  },
  {
    method: "POST",
    route: "/v1/teams/:team_id/members",
    target: Effect.gen(function* () {
      const api = yield* ApiHarness
      const team = yield* freshTeam(false)
      const joining = yield* api.claimAgent({ userId: api.fixtures.owner.userId, orgId: api.fixtures.orgId })
      return { path: `${team.path}/members`, body: { agent_ids: [joining] } }
    }),
    allowed: ["service"],
    intended: "admin"
  },
  {
    method: "DELETE",
    route: "/v1/teams/:team_id/members/:agent_id",
    target: Effect.gen(function* () {
      const api = yield* ApiHarness
      const team = yield* freshTeam(false)
      const third = yield* api.claimAgent({ userId: api.fixtures.owner.userId, orgId: api.fixtures.orgId })
      yield* api.call("POST", `${team.path}/members`, { token: api.serviceRoleKey, body: { agent_ids: [third] } })
      return { path: `${team.path}/members/${third}` }
    }),
    allowed: ["service"],
    intended: "admin"
  },
  {
    method: "PUT",
    route: "/v1/teams/:team_id/card",
    target: Effect.map(freshTeam(false), (team) => ({ path: `${team.path}/card`, body: { card_json: TEAM_CARD } })),
    allowed: ["service"],
    intended: "admin"
  },
  // ---- team reputation: members of the organization read (the first read computes), Owner and Admin recompute ----
  ...(
    [
      ["GET", "/v1/teams/:team_id/reputation", "/reputation"],
      ["GET", "/v1/teams/:team_id/assessments", "/assessments"]
    ] as const
  ).map(([method, route, suffix]): Row => ({
    method,
    route,
    target: Effect.map(freshTeam(true), (team) => ({ path: `${team.path}${suffix}` })),
    allowed: ["member", "memberKey", "service"],
    intended: "member"
  })),
  {
    method: "POST",
    route: "/v1/teams/:team_id/reputation/recompute",
    target: Effect.map(freshTeam(true), (team) => ({ path: `${team.path}/reputation/recompute` })),
    allowed: ["service"],
    intended: "admin"
  },
  {
    method: "GET",
    route: "/v1/orgs/:org_id/team-reputation/quota",
    target: fixed((f) => `/v1/orgs/${f.orgId}/team-reputation/quota`),
    allowed: ["member", "memberKey", "service"],
    intended: "member"
  },
  // ---- team intelligence: members of the organization read (nothing is stored); the forecast, which
  // may call a model (ANALYSIS_MODEL), needs Admin ----
  ...(["/v1/teams/fault-lines", "/v1/teams/forecast", "/v1/teams/recommend-policy"] as const).map((route): Row => ({
    method: "POST",
    route,
    target: Effect.map(freshTeam(true), (team) => ({ path: route, body: { team_id: team.path.split("/").pop() } })),
    allowed: route === "/v1/teams/forecast" ? ["service"] : ["member", "memberKey", "service"],
    intended: route === "/v1/teams/forecast" ? "admin" : "member"
  })),
  // ---- the live alert stream: any credential; filters for what the caller may not read are 404 ----
  {
    method: "GET",
    route: "/v1/stream",
    target: fixed((f) => `/v1/stream?org_id=${f.orgId}`),
    allowed: ["member", "memberKey", "service"],
    intended: "member",
    headersOnly: true
  },
  {
    method: "GET",
    route: "/v1/stream",
    target: fixed((f) => `/v1/stream?agent_id=${f.orgAgent}&format=ndjson`),
    allowed: ["member", "memberKey", "service"],
    intended: "member",
    headersOnly: true
  },
  {
    method: "GET",
    route: "/v1/stream",
    target: fixed(() => "/v1/stream?types=agent.*"),
    allowed: ALL,
    intended: "member",
    headersOnly: true
  },
  // ---- risk: readers of every agent concerned assess and read (an assessment records what was read) ----
  {
    method: "POST",
    route: "/v1/risk/assess",
    target: fixed(
      () => "/v1/risk/assess",
      (f) => ({ agent_id: f.orgAgent, context: { action_type: "data_access" } })
    ),
    allowed: ["member", "memberKey", "service"],
    intended: "member"
  },
  {
    method: "POST",
    route: "/v1/risk/assess/team",
    target: Effect.map(riskTeamAgents, (agentIds) => ({
      path: "/v1/risk/assess/team",
      body: { agent_ids: agentIds, context: { action_type: "task_delegation", coordination_mode: "parallel" } }
    })),
    allowed: ["member", "memberKey", "service"],
    intended: "member"
  },
  {
    method: "GET",
    route: "/v1/risk/assessments/:assessment_id",
    target: Effect.map(riskAssessment("individual"), (id) => ({ path: `/v1/risk/assessments/${id}` })),
    allowed: ["member", "memberKey", "service"],
    intended: "member"
  },
  {
    method: "GET",
    route: "/v1/risk/team-assessments/:assessment_id",
    target: Effect.map(riskAssessment("team"), (id) => ({ path: `/v1/risk/team-assessments/${id}` })),
    allowed: ["member", "memberKey", "service"],
    intended: "member"
  },
  {
    method: "GET",
    route: "/v1/risk/history/:agent_id",
    target: fixed((f) => `/v1/risk/history/${f.orgAgent}`),
    allowed: ["member", "memberKey", "service"],
    intended: "member"
  },
  {
    method: "GET",
    route: "/v1/risk/proofs/:assessment_id",
    target: Effect.map(riskAssessment("individual"), (id) => ({ path: `/v1/risk/proofs/${id}` })),
    allowed: ["member", "memberKey", "service"],
    intended: "member"
  },
  // ---- on-chain: Owner/Admin (or the service-role key) anchor and publish; any reader of the agents reads ----
  {
    method: "POST",
    route: "/v1/on-chain/anchor-root",
    target: Effect.map(loggedOrgAgent, (agentId) => ({
      path: "/v1/on-chain/anchor-root",
      body: { agent_ids: [agentId] }
    })),
    allowed: ["service"],
    intended: "admin"
  },
  {
    method: "POST",
    route: "/v1/on-chain/publish-scores",
    target: Effect.map(loggedOrgAgent, (agentId) => ({
      path: "/v1/on-chain/publish-scores",
      body: { agent_ids: [agentId] }
    })),
    allowed: ["service"],
    intended: "owner"
  },
  {
    method: "GET",
    route: "/v1/on-chain/verify-proof",
    target: Effect.map(freshAnchor, ({ agentId, anchorId }) => ({
      path: `/v1/on-chain/verify-proof?anchor_id=${anchorId}&agent_id=${agentId}`
    })),
    allowed: ["member", "memberKey", "service"],
    intended: "member"
  },
  {
    method: "GET",
    route: "/v1/on-chain/status/:anchor_id",
    target: Effect.map(freshAnchor, ({ anchorId }) => ({ path: `/v1/on-chain/status/${anchorId}` })),
    allowed: ["member", "memberKey", "service"],
    intended: "member"
  },
  {
    method: "GET",
    route: "/v1/on-chain/history",
    target: fixed((f) => `/v1/on-chain/history?agent_id=${f.orgAgent}`),
    allowed: ["member", "memberKey", "service"],
    intended: "member"
  },
  // ---- reputation: any credential reads (results limited to what the caller may read); Owner/Admin set visibility ----
  {
    method: "POST",
    route: "/v1/reputation/batch",
    target: fixed(
      () => "/v1/reputation/batch",
      (f) => ({ agent_ids: [f.orgAgent] })
    ),
    allowed: ALL,
    intended: "member"
  },
  {
    method: "GET",
    route: "/v1/reputation/search",
    target: fixed(() => "/v1/reputation/search"),
    allowed: ALL,
    intended: "member"
  },
  {
    method: "GET",
    route: "/v1/reputation/compare",
    target: Effect.gen(function* () {
      const api = yield* ApiHarness
      const { orgAgent, orgId, owner } = api.fixtures
      const peer = yield* api.claimAgent({ userId: owner.userId, orgId })
      return { path: `/v1/reputation/compare?agent_ids=${orgAgent},${peer}` }
    }),
    // Another organization may not read either agent: 404.
    allowed: ["member", "memberKey", "service"],
    intended: "member"
  },
  {
    method: "PUT",
    route: "/v1/agents/:agent_id/visibility",
    target: fixed(
      (f) => `/v1/agents/${f.orgAgent}/visibility`,
      () => ({ visibility: "unlisted" })
    ),
    allowed: ["service"],
    intended: "admin"
  },
  {
    method: "GET",
    route: "/v1/agents/:agent_id/conscience-values/effective",
    target: fixed((f) => `/v1/agents/${f.orgAgent}/conscience-values/effective`),
    allowed: ["member", "memberKey", "service"],
    intended: "member"
  },
  // ---- trust edges: Owner and Admin of the source write, readers of the agent list ----
  {
    method: "POST",
    route: "/v1/agents/:agent_id/trust-edges",
    // A fresh target per call: a second edge of one pair would be 409.
    target: Effect.gen(function* () {
      const api = yield* ApiHarness
      const { orgAgent, orgId, owner } = api.fixtures
      const target = yield* api.claimAgent({ userId: owner.userId, orgId })
      return {
        path: `/v1/agents/${orgAgent}/trust-edges`,
        body: { target_agent_id: target, trust_level: "high", reason: "security table" }
      }
    }),
    allowed: ["service"],
    intended: "admin"
  },
  {
    method: "GET",
    route: "/v1/agents/:agent_id/trust-edges",
    target: fixed((f) => `/v1/agents/${f.orgAgent}/trust-edges?direction=both`),
    allowed: ["member", "memberKey", "service"],
    intended: "member"
  },
  {
    method: "DELETE",
    route: "/v1/agents/:agent_id/trust-edges/:edge_id",
    target: Effect.map(freshTrustEdge, (path) => ({ path })),
    allowed: ["service"],
    intended: "admin"
  },
  // ---- reclassification: Owner and Admin reclassify and recompute, readers of the agent list and export ----
  {
    method: "POST",
    route: "/v1/agents/:agent_id/reclassify",
    // A fresh non-clear checkpoint per call: a second reclassification of one checkpoint is 409.
    target: Effect.gen(function* () {
      const { orgAgent } = yield* fixtures
      const inputs = yield* Effect.orDie(seed(orgAgent, 3))
      const flagged = inputs.find((input) => input.checkpoint.verdict !== "clear")!
      return {
        path: `/v1/agents/${orgAgent}/reclassify`,
        body: { checkpoint_id: flagged.checkpoint.checkpoint_id, reason: "security table", new_type: "behavior_gap" }
      }
    }),
    allowed: ["service"],
    intended: "admin"
  },
  {
    method: "POST",
    route: "/v1/reputation/:agent_id/recompute",
    target: fixed(
      (f) => `/v1/reputation/${f.orgAgent}/recompute`,
      () => ({})
    ),
    allowed: ["service"],
    intended: "admin"
  },
  ...(
    [
      "/v1/agents/:agent_id/reclassifications",
      "/v1/agents/:agent_id/card-amendments",
      "/v1/agents/:agent_id/compliance-export"
    ] as const
  ).map((route): Row => ({
    method: "GET",
    route,
    target: fixed((f) => route.replace(":agent_id", f.orgAgent)),
    allowed: ["member", "memberKey", "service"],
    intended: "member"
  })),
  // ---- scoped transactions: the agent policy's rules (writers open and close, readers read) ----
  {
    method: "POST",
    route: "/v1/transactions",
    // A fresh agent per call: an agent has at most 16 open transactions.
    target: Effect.map(freshOrgAgent, (agentId) => ({
      path: "/v1/transactions",
      body: { agent_id: agentId, action_type: "refund", tools: ["issue_refund"], duration_hours: 1 }
    })),
    allowed: ["service"],
    intended: "admin"
  },
  {
    method: "GET",
    route: "/v1/transactions/:transaction_id",
    target: Effect.map(freshTransaction, (id) => ({ path: `/v1/transactions/${id}` })),
    allowed: ["member", "memberKey", "service"],
    intended: "member"
  },
  {
    method: "DELETE",
    route: "/v1/transactions/:transaction_id",
    target: Effect.map(freshTransaction, (id) => ({ path: `/v1/transactions/${id}` })),
    allowed: ["service"],
    intended: "admin"
  },
  {
    method: "GET",
    route: "/v1/agents/:agent_id/transactions",
    target: fixed((f) => `/v1/agents/${f.orgAgent}/transactions?status=active`),
    allowed: ["member", "memberKey", "service"],
    intended: "member"
  },
  // ---- the console: any credential reads who it is but the service-role key, which must never reach a
  // browser (the operator code exchange is public, test/api/Console.test.ts) ----
  {
    method: "GET",
    route: "/v1/console/session",
    target: fixed(() => "/v1/console/session"),
    allowed: ["member", "otherOrg", "memberKey"],
    operator: true,
    intended: "member"
  }
]

/** Routes outside the table: public (verification) or tested on their own (impersonation sessions below). */
const ELSEWHERE = new Set(["GET /v1/admin/impersonation/:session_id", "POST /v1/admin/impersonation/:session_id/end"])

/** The local operator's console session (`cos_…`), as the embedded default's sign-in link gives it. */
const operatorSignIn = makeOperatorSignIn()
const operatorToken = (() => {
  const session = operatorSignIn.exchange(operatorSignIn.issueCode().code)
  if (session._tag !== "Session") throw new Error(`operator sign-in: ${session._tag}`)
  return session.token
})()

const mayCall = (row: Row, caller: Caller): boolean =>
  caller === "operator" ? (row.operator ?? row.allowed.includes("service")) : row.allowed.includes(caller)

const credentials = (api: ApiHarness["Type"], memberKey: string) => ({
  member: { token: api.fixtures.member.token },
  otherOrg: { token: api.fixtures.userB.token },
  memberKey: { apiKey: memberKey },
  service: { token: api.serviceRoleKey },
  operator: { token: operatorToken },
  owner: { token: api.fixtures.owner.token },
  admin: { token: api.fixtures.admin.token }
})

// Webhook receivers on 127.0.0.1 (CANDOR_WEBHOOK_ALLOW_PRIVATE on), and anchoring on the in-process chain.
layer(
  Layer.merge(
    Harness.layer({
      webhookAllowPrivate: true,
      chain: anchorChainLayer,
      operatorSignIn: Layer.succeed(OperatorSignIn, operatorSignIn)
    }),
    anchorChainLayer
  ),
  {
    timeout: "120 seconds"
  }
)("security", (it) => {
  it.effect("the table covers every authenticated route of the API", () =>
    Effect.sync(() => {
      const inTable = new Set(ROWS.map((row) => `${row.method} ${row.route}`))
      const authenticated = Object.values(CandorApi.groups)
        .filter((group: any) => group.middlewares.size > 0)
        .flatMap((group: any) => Object.values(group.endpoints).map((e: any) => `${e.method} ${e.path}`))
      expect(authenticated.length).toBeGreaterThanOrEqual(ROWS.length)
      const missing = authenticated.filter((route) => !inTable.has(route) && !ELSEWHERE.has(route))
      expect(missing).toStrictEqual([])
    })
  )

  // A member-role API key of the organization, made once: no row changes it.
  let memberKey: string | undefined
  describe.each(ROWS.map((row) => [`${row.method} ${row.route}`, row] as const))("%s", (_, row) => {
    it.effect("refuses no credentials (401) and lets only the intended callers through", () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        memberKey ??= yield* api.createApiKey(api.fixtures.owner.userId, {
          orgId: api.fixtures.orgId,
          role: "member"
        })
        const who = credentials(api, memberKey)

        // One target takes every refusal, then the intended caller's call, which must still succeed:
        // a refusal changed nothing it needs. Each other caller let through gets a fresh target,
        // unless the route only reads (GET).
        const refused = yield* row.target
        const none = yield* api.call(row.method, refused.path, { body: refused.body, headersOnly: row.headersOnly })
        expect(none.status, `${row.method} ${refused.path} without credentials`).toBe(401)
        expect(Object.keys(none.body)).toStrictEqual(["error"])

        for (const caller of CALLERS) {
          const allowed = mayCall(row, caller)
          const target = allowed && row.method !== "GET" ? yield* row.target : refused
          const res = yield* api.call(row.method, target.path, {
            ...who[caller],
            body: target.body,
            headersOnly: row.headersOnly
          })
          const label = `${row.method} ${target.path} as ${caller}: ${JSON.stringify(res.body)}`
          if (allowed) {
            expect(res.status, label).toBeGreaterThanOrEqual(200)
            expect(res.status, label).toBeLessThan(300)
          } else {
            expect([403, 404], label).toContain(res.status)
            expect(Object.keys(res.body)).toStrictEqual(["error"])
          }
        }

        const intended = yield* api.call(row.method, refused.path, {
          ...who[row.intended],
          body: refused.body,
          headersOnly: row.headersOnly
        })
        expect(
          intended.status,
          `${row.method} ${refused.path} as ${row.intended} after the refusals: ${JSON.stringify(intended.body)}`
        ).toBeLessThan(300)
      })
    )
  })

  describe("impersonation", () => {
    const start = (userId: string) =>
      Effect.flatMap(ApiHarness, (api) =>
        api.call("POST", "/v1/admin/impersonate", {
          token: api.serviceRoleKey,
          body: { user_id: userId, reason: "support" }
        })
      )

    it.effect("a session reads as the user for one hour and refuses every write (403)", () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const { agentA, orgAgent, orgId, owner } = api.fixtures
        const started = yield* start(owner.userId)
        expect(started.status).toBe(201)
        expect(started.body).toMatchObject({
          target_user_id: owner.userId,
          active: true,
          read_only: true,
          reason: "support"
        })
        const ttl = Date.parse(started.body.expires_at) - Date.parse(started.body.created_at)
        expect(Math.abs(ttl - 3_600_000)).toBeLessThan(5_000)
        const token: string = started.body.token

        expect((yield* api.call("GET", `/v1/orgs/${orgId}`, { token })).body.role).toBe("owner")
        expect((yield* api.call("GET", `/v1/agents/${orgAgent}/enforcement`, { token })).status).toBe(200)
        expect((yield* api.call("GET", `/v1/orgs/${orgId}/coherence`, { token })).status).toBe(200)
        const team = yield* freshTeam(true)
        expect((yield* api.call("GET", team.path, { token })).status).toBe(200)
        // A read: the first one computes the team's reputation, for an impersonation session too.
        expect((yield* api.call("GET", `${team.path}/reputation`, { token })).status).toBe(200)

        const writes: ReadonlyArray<[string, string, unknown]> = [
          ["POST", "/v1/orgs", { name: "Imp", slug: `imp-${randomUUID().slice(0, 8)}` }],
          ["PUT", `/v1/agents/${orgAgent}/enforcement`, { mode: "enforce" }],
          ["PUT", `/v1/agents/${orgAgent}/conscience-values`, { conscience_values: [] }],
          ["POST", `/v1/orgs/${orgId}/conscience-values`, { type: "HOPE", name: "imp", content: "c" }],
          ["PUT", `/v1/orgs/${orgId}/conscience-values/mode`, { mode: "replace", enabled: true }],
          ["PUT", `/v1/agents/${orgAgent}/policy`, { forbidden: [] }],
          ["DELETE", `/v1/agents/${orgAgent}/policy`, undefined],
          ["PUT", `/v1/orgs/${orgId}/policy`, { forbidden: [] }],
          ["DELETE", `/v1/orgs/${orgId}/policy`, undefined],
          ["PATCH", `/v1/agents/${orgAgent}/card`, { card_json: cardFor(orgAgent, "imp"), conscience_values: [] }],
          ["POST", `/v1/agents/${orgAgent}/reverify`, undefined],
          ["PUT", `/v1/agents/${orgAgent}/visibility`, { visibility: "private" }],
          ["PATCH", `/v1/agents/${orgAgent}`, { display_name: "impersonated" }],
          ["DELETE", `/v1/orgs/${orgId}`, undefined],
          ["POST", "/v1/api-keys", { name: "imp" }],
          [
            "POST",
            "/v1/enterprise/contact",
            { name: "N", email: "n@example.test", company: "C", role: "R", company_size: "1", message: "m" }
          ],
          ["POST", "/v1/billing/validate-promo", { code: "LAUNCH20" }],
          ["POST", "/v1/teams", { org_id: orgId, name: "imp", agent_ids: [orgAgent, orgAgent] }],
          ["PATCH", team.path, { name: "imp" }],
          ["DELETE", team.path, undefined],
          ["POST", `${team.path}/members`, { agent_ids: [orgAgent] }],
          ["DELETE", `${team.path}/members/${team.agents[0]}`, undefined],
          ["PUT", `${team.path}/card`, { card_json: TEAM_CARD }],
          // Derive stores nothing, but a session refuses every POST.
          ["POST", `${team.path}/card/derive`, undefined],
          ["POST", `/v1/agents/${orgAgent}/trust-edges`, { target_agent_id: agentA, trust_level: "low", reason: "r" }],
          ["DELETE", `/v1/agents/${orgAgent}/trust-edges/te-any`, undefined],
          ["POST", `${team.path}/reputation/recompute`, undefined],
          // An assessment records and signs: a session refuses it like every POST.
          ["POST", "/v1/risk/assess", { agent_id: orgAgent, context: { action_type: "data_access" } }],
          ["POST", `/v1/agents/${orgAgent}/reclassify`, { checkpoint_id: "ic-any", reason: "r", new_type: "card_gap" }],
          ["POST", `/v1/reputation/${orgAgent}/recompute`, {}],
          [
            "POST",
            "/v1/transactions",
            { agent_id: orgAgent, action_type: "refund", tools: ["issue_refund"], duration_hours: 1 }
          ],
          ["DELETE", `/v1/transactions/${yield* freshTransaction}`, undefined],
          // Anchoring sends a transaction: a session refuses it like every write.
          ["POST", "/v1/on-chain/anchor-root", { agent_ids: [orgAgent] }],
          ["POST", "/v1/on-chain/publish-scores", { agent_ids: [orgAgent] }]
        ]
        for (const [method, path, body] of writes) {
          const res = yield* api.call(method, path, { token, body })
          expect(res, `${method} ${path}`).toMatchObject({
            status: 403,
            body: { error: "impersonation sessions are read-only" }
          })
        }
        expect((yield* api.call("GET", `/v1/orgs/${orgId}`, { token: owner.token })).status).toBe(200)
      })
    )

    it.effect("admin users cannot be impersonated; only platform admins and the service-role key start sessions", () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const platformAdmin = yield* api.freshUser
        const promoted = yield* api.call("PUT", `/v1/admin/users/${platformAdmin.userId}`, {
          token: api.serviceRoleKey,
          body: { is_admin: true }
        })
        expect(promoted.body.is_admin).toBe(true)
        const otherAdmin = yield* api.freshUser
        yield* api.call("PUT", `/v1/admin/users/${otherAdmin.userId}`, {
          token: api.serviceRoleKey,
          body: { is_admin: true }
        })

        const refused = yield* start(otherAdmin.userId)
        expect(refused).toMatchObject({ status: 403, body: { error: "admin users cannot be impersonated" } })
        const target = yield* api.freshUser
        const byAdmin = yield* api.call("POST", "/v1/admin/impersonate", {
          token: platformAdmin.token,
          body: { user_id: target.userId }
        })
        expect(byAdmin).toMatchObject({ status: 201, body: { admin_user_id: platformAdmin.userId } })
        const byUser = yield* api.call("POST", "/v1/admin/impersonate", {
          token: target.token,
          body: { user_id: platformAdmin.userId }
        })
        expect(byUser.status).toBe(403)
        const unknown = yield* start(`nobody-${randomUUID()}`)
        expect(unknown.status).toBe(404)
      })
    )

    it.effect("a session ends on request (its own token may end it) and its token stops working (401)", () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const target = yield* api.freshUser
        const started = yield* start(target.userId)
        const { session_id, token } = started.body
        const read = yield* api.call("GET", `/v1/admin/impersonation/${session_id}`, { token })
        expect(read).toMatchObject({ status: 200, body: { session_id, active: true, ended_at: null } })
        expect(read.body.token).toBeUndefined()
        expect((yield* api.call("GET", `/v1/admin/impersonation/${session_id}`, { token: target.token })).status).toBe(
          403
        )
        const ended = yield* api.call("POST", `/v1/admin/impersonation/${session_id}/end`, { token })
        expect(ended).toMatchObject({ status: 200, body: { active: false } })
        expect(ended.body.ended_at).not.toBeNull()
        const after = yield* api.call("GET", "/v1/plans", { token })
        expect(after).toMatchObject({ status: 401, body: { error: "impersonation session expired or ended" } })
      })
    )

    it.effect("an expired session's token is refused (401)", () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const target = yield* api.freshUser
        const { session_id, token } = (yield* start(target.userId)).body
        const sql = yield* SqlClient.SqlClient
        yield* Effect.orDie(
          sql`update impersonation_sessions set expires_at = now() - interval '1 second' where session_id = ${session_id}`
        )
        expect((yield* api.call("GET", "/v1/plans", { token })).status).toBe(401)
      })
    )
  })
})
