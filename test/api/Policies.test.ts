/**
 * The policy API over HTTP: agent and organization policies in JSON and YAML, errors that say where
 * (YAML line and column, the field's path), versions that only grow, history, DELETE, the resolved
 * (org-floor) policy, evaluate with our semantics (`?` globs, every forbidden rule, no grace for
 * named tools), the role × route matrix, the governance entries of every change, and the resolved
 * policy reaching the gateways' shared state (also after a claim brings an agent into an organization).
 */
import { describe, expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { randomUUID } from "node:crypto"
import { AgentState } from "../../adapters/bus/AgentState.js"
import { agentIdOf } from "../../adapters/gateway/AgentIdentity.js"
import { keyHashOf } from "../../adapters/providers/Identity.js"
import { GovernanceLog } from "../../adapters/store/GovernanceLog.js"
import { IdentityRepo } from "../../adapters/store/identity/IdentityRepo.js"
import { policyHash } from "../../core/Commitments.js"
import { agentGovernanceLog, orgGovernanceLog } from "../../core/Governance.js"
import { decodePolicy } from "../../core/schema/Policy.js"
import { ApiHarness, type CallOptions, layer as harness, type TestUser } from "./Support.js"

const YAML_POLICY = `# the support bot's policy
meta:
  schema_version: "1.0"
  name: support-bot
capability_mappings:
  browsing:
    tools: ["mcp__browser__*"]
    card_actions: [web_fetch]
forbidden:
  - pattern: "shell_*"
    reason: no shell access
    severity: critical
escalation_triggers:
  - condition: "tool_matches('pay_*')"
    action: escalate
    reason: money moves need review
defaults:
  enforcement_mode: enforce
  unmapped_tool_action: warn
`

const JSON_POLICY = {
  meta: { schema_version: "1.0", name: "json policy" },
  forbidden: [{ pattern: "rm_?", reason: "no deletes" }],
  defaults: { enforcement_mode: "warn" }
}

const yaml = (text: string, type = "application/yaml"): CallOptions => ({
  body: text,
  headers: { "content-type": type }
})

/** A user on the Enterprise plan (never throttled), unknown to the API until now. */
const enterpriseUser = Effect.gen(function* () {
  const api = yield* ApiHarness
  const repo = yield* IdentityRepo
  const userId = `user-${randomUUID().slice(0, 8)}`
  yield* Effect.orDie(repo.ensureUser(userId, `${userId}@example.test`))
  yield* Effect.orDie(repo.updateUser(userId, { plan_id: "enterprise" }))
  return { userId, email: `${userId}@example.test`, token: yield* api.token(userId) } satisfies TestUser
})

/** An organization of its own (so its policy concerns no other test), its Owner, and an agent in it. */
const freshOrg = Effect.gen(function* () {
  const api = yield* ApiHarness
  const owner = yield* enterpriseUser
  const created = yield* api.call("POST", "/v1/orgs", {
    token: owner.token,
    body: { name: "Policy team", slug: `pol-${randomUUID().slice(0, 8)}` }
  })
  expect(created.status).toBe(201)
  const orgId: string = created.body.org_id
  const agentId = yield* api.claimAgent({ userId: owner.userId, orgId })
  return { orgId, owner, agentId }
})

const policyOf = (encoded: unknown) => {
  const decoded = decodePolicy(encoded)
  if (decoded._tag === "Left") throw new Error(decoded.left.message)
  return decoded.right
}

layer(harness(), { timeout: "120 seconds" })("policy API", (it) => {
  describe("PUT, GET, DELETE /v1/agents/{agent_id}/policy", () => {
    it.effect(
      "stores JSON and YAML (both media types), normalised, with growing versions, and tells the gateways",
      () =>
        Effect.gen(function* () {
          const api = yield* ApiHarness
          const state = yield* AgentState
          const user = yield* enterpriseUser
          const agentId = yield* api.claimAgent({ userId: user.userId })
          const path = `/v1/agents/${agentId}/policy`
          const auth = { token: user.token }

          expect(yield* api.call("GET", path, auth)).toMatchObject({
            status: 404,
            body: { error: `agent ${agentId} has no policy` }
          })

          const first = yield* api.call("PUT", path, { ...auth, body: JSON_POLICY })
          expect(first.status).toBe(200)
          expect(Object.keys(first.body).sort()).toEqual(
            ["agent_id", "policy", "policy_hash", "policy_id", "scope", "updated_at", "updated_by", "version"].sort()
          )
          expect(first.body).toMatchObject({ scope: "agent", agent_id: agentId, version: 1, updated_by: user.userId })
          expect(first.body.policy_id).toMatch(/^pol-[0-9a-f-]{36}$/)
          expect(first.body.policy).toEqual({
            meta: { schema_version: "1.0", name: "json policy", scope: "agent" },
            capability_mappings: {},
            forbidden: [{ pattern: "rm_?", reason: "no deletes", severity: "high" }],
            escalation_triggers: [],
            defaults: {
              unmapped_tool_action: "warn",
              unmapped_severity: "medium",
              fail_open: true,
              enforcement_mode: "warn",
              grace_period_hours: 24
            }
          })
          expect(first.body.policy_hash).toBe(policyHash(first.body.policy))
          expect(yield* api.call("GET", path, auth)).toMatchObject({ status: 200, body: first.body })
          expect((yield* state.get(agentId)).policy).toEqual(first.body.policy)

          const second = yield* api.call("PUT", path, { ...auth, ...yaml(YAML_POLICY) })
          expect(second).toMatchObject({ status: 200, body: { version: 2 } })
          expect(second.body.policy_id).not.toBe(first.body.policy_id)
          expect(second.body.policy).toMatchObject({
            meta: { schema_version: "1.0", name: "support-bot", scope: "agent" },
            capability_mappings: { browsing: { tools: ["mcp__browser__*"], card_actions: ["web_fetch"] } },
            forbidden: [{ pattern: "shell_*", reason: "no shell access", severity: "critical" }],
            escalation_triggers: [
              { condition: "tool_matches('pay_*')", action: "escalate", reason: "money moves need review" }
            ],
            defaults: { enforcement_mode: "enforce", unmapped_tool_action: "warn", grace_period_hours: 24 }
          })
          expect((yield* state.get(agentId)).policy).toEqual(second.body.policy)

          const third = yield* api.call("PUT", path, {
            ...auth,
            ...yaml(YAML_POLICY, "text/yaml; charset=utf-8")
          })
          expect(third).toMatchObject({ status: 200, body: { version: 3, policy: second.body.policy } })
          expect((yield* api.call("GET", path, auth)).body.version).toBe(3)
        })
    )

    it.effect("DELETE answers 204, then GET and DELETE 404; versions are never reused", () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const state = yield* AgentState
        const user = yield* enterpriseUser
        const agentId = yield* api.claimAgent({ userId: user.userId })
        const path = `/v1/agents/${agentId}/policy`
        const auth = { token: user.token }
        expect((yield* api.call("DELETE", path, auth)).status).toBe(404)
        expect((yield* api.call("PUT", path, { ...auth, body: JSON_POLICY })).body.version).toBe(1)
        expect((yield* api.call("PUT", path, { ...auth, body: JSON_POLICY })).body.version).toBe(2)
        expect((yield* state.get(agentId)).policy).toBeDefined()

        const deleted = yield* api.call("DELETE", path, auth)
        expect(deleted.status).toBe(204)
        expect(deleted.body).toBeUndefined()
        expect((yield* state.get(agentId)).policy).toBeUndefined()
        expect(yield* api.call("GET", path, auth)).toMatchObject({ status: 404, body: { error: expect.any(String) } })
        expect((yield* api.call("DELETE", path, auth)).status).toBe(404)

        const again = yield* api.call("PUT", path, { ...auth, ...yaml(YAML_POLICY) })
        expect(again.body.version).toBe(3)
        expect((yield* state.get(agentId)).policy).toEqual(again.body.policy)
        const history = yield* api.call("GET", `${path}/history`, auth)
        expect(history.body.versions.map((v: any) => [v.version, v.deleted])).toEqual([
          [3, false],
          [2, true],
          [1, false]
        ])
      })
    )

    it.effect("400 naming the YAML line and column, or the field's path; 413 over the body limit", () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const { agentA, userA } = api.fixtures
        const path = `/v1/agents/${agentA}/policy`
        const put = (options: CallOptions) => api.call("PUT", path, { token: userA.token, ...options })
        const cases: ReadonlyArray<readonly [CallOptions, string]> = [
          [
            yaml('meta:\n  schema_version: "1.0"\nforbidden:\n  - pattern: [shell\n    reason: x\n'),
            "line 5, column 5: "
          ],
          [yaml("forbidden:\n\t- pattern: x\n"), "line 2, column 1: "],
          [yaml("a: 1\na: 2\n", "text/yaml"), "line 2, column 1: "],
          [
            yaml("forbidden:\n  - pattern: ''\n    reason: empty\n"),
            "forbidden[0].pattern: tool pattern must not be empty"
          ],
          [
            { body: { forbidden: [{ pattern: "x", reason: "y" }, { reason: "z" }] } },
            "forbidden[1].pattern: is missing"
          ],
          [{ body: { forbiden: [{ pattern: "x", reason: "y" }] } }, "forbiden: is unexpected"],
          [
            { body: { capability_mappings: { web: { tools: ["a"], card_actions: ["b"], action: "c" } } } },
            "capability_mappings.web.action: is unexpected"
          ],
          [
            { body: { capability_mappings: { web: { tools: [], card_actions: [] } } } },
            "capability_mappings.web.tools: "
          ],
          [
            { body: { escalation_triggers: [{ condition: "tool == 'x'", action: "warn", reason: "r" }] } },
            "escalation_triggers[0].condition: must be tool_matches('<glob>')"
          ],
          [{ body: { meta: { schema_version: "2.0" } } }, 'meta.schema_version: must be "1.0"'],
          [{ body: { meta: { schema_version: "1.0", scope: "org" } } }, 'meta.scope: must be "agent"'],
          [{ body: { defaults: { grace_period_hours: 9000 } } }, "defaults.grace_period_hours: "],
          [
            { body: { defaults: { enforcement_mode: "block" } } },
            "defaults.enforcement_mode: must be one of warn, enforce, off"
          ],
          [yaml("- just\n- a list\n"), "the policy must be a YAML mapping"],
          [{ body: "[1, 2]" }, "the policy must be a JSON object"],
          [{ body: "{not json" }, "request body is not valid JSON"],
          [{ body: "forbidden: []", headers: { "content-type": "text/plain" } }, "content-type: must be"],
          [yaml("a: &x [1]\nb: *y\n"), "YAML: "]
        ]
        for (const [options, message] of cases) {
          const res = yield* put(options)
          expect(res.status, message).toBe(400)
          expect(Object.keys(res.body), message).toEqual(["error"])
          expect(res.body.error, message).toContain(message)
        }
        const huge = yield* put(yaml(`meta:\n  schema_version: "1.0"\n  description: "${"x".repeat(1_100_000)}"\n`))
        expect(huge.status).toBe(413)
        expect((yield* api.call("GET", path, { token: userA.token })).status).toBe(404)
      })
    )
  })

  describe("organization policies", () => {
    it.effect("history lists every version newest first, with its meta and hash, deleted ones marked", () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const { orgId, owner } = yield* freshOrg
        const path = `/v1/orgs/${orgId}/policy`
        const auth = { token: owner.token }
        const v1 = yield* api.call("PUT", path, { ...auth, ...yaml(YAML_POLICY.replace("support-bot", "first")) })
        expect(v1).toMatchObject({ status: 200, body: { scope: "org", org_id: orgId, version: 1 } })
        expect(v1.body.policy.meta.scope).toBe("org")
        const v2 = yield* api.call("PUT", path, { ...auth, body: { ...JSON_POLICY, meta: { schema_version: "1.0" } } })
        expect(v2.body.version).toBe(2)
        expect((yield* api.call("DELETE", path, auth)).status).toBe(204)
        expect((yield* api.call("GET", path, auth)).status).toBe(404)
        const v3 = yield* api.call("PUT", path, { ...auth, body: JSON_POLICY })
        expect(v3.body.version).toBe(3)

        const history = yield* api.call("GET", `${path}/history`, auth)
        expect(history.status).toBe(200)
        expect(history.body.org_id).toBe(orgId)
        expect(history.body.versions).toEqual([
          {
            version: 3,
            policy_id: v3.body.policy_id,
            meta: { schema_version: "1.0", name: "json policy", scope: "org" },
            policy_hash: v3.body.policy_hash,
            updated_at: v3.body.updated_at,
            updated_by: owner.userId,
            deleted: false
          },
          expect.objectContaining({ version: 2, policy_id: v2.body.policy_id, deleted: true }),
          expect.objectContaining({
            version: 1,
            meta: { schema_version: "1.0", name: "first", scope: "org" },
            policy_hash: v1.body.policy_hash,
            deleted: false
          })
        ])
      })
    )

    it.effect("resolved: the organization's floor merged with the agent's, and the gateways get exactly that", () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const state = yield* AgentState
        const { agentId, orgId, owner } = yield* freshOrg
        const auth = { token: owner.token }
        const resolved = () => api.call("GET", `/v1/agents/${agentId}/policy/resolved`, auth)
        expect((yield* resolved()).body).toEqual({
          agent_id: agentId,
          resolved_policy: null,
          sources: { org_id: orgId, org_policy_version: null, agent_policy_version: null, merge_strategy: "org_floor" }
        })

        const org = yield* api.call("PUT", `/v1/orgs/${orgId}/policy`, {
          ...auth,
          body: {
            meta: { schema_version: "1.0", name: "org floor" },
            capability_mappings: { files: { tools: ["fs_*"], card_actions: ["delete"] } },
            forbidden: [{ pattern: "shell_*", reason: "org: no shell" }],
            defaults: { enforcement_mode: "enforce", unmapped_tool_action: "warn", grace_period_hours: 6 }
          }
        })
        expect(org.status).toBe(200)
        // The organization's change reaches its agents.
        expect((yield* state.get(agentId)).policy).toEqual(org.body.policy)
        expect((yield* state.get(agentId)).orgId).toBe(orgId)
        expect((yield* resolved()).body).toMatchObject({
          resolved_policy: org.body.policy,
          sources: { org_policy_version: 1, agent_policy_version: null }
        })

        const agent = yield* api.call("PUT", `/v1/agents/${agentId}/policy`, {
          ...auth,
          body: {
            meta: { schema_version: "1.0", name: "agent" },
            capability_mappings: { files: { tools: ["fs_*"], card_actions: ["read"] } },
            forbidden: [{ pattern: "shell_*", reason: "agent: no shell either", severity: "critical" }],
            defaults: { enforcement_mode: "off", unmapped_tool_action: "deny", grace_period_hours: 48 }
          }
        })
        expect(agent.status).toBe(200)
        const merged = yield* resolved()
        expect(merged.body.sources).toEqual({
          org_id: orgId,
          org_policy_version: 1,
          agent_policy_version: 1,
          merge_strategy: "org_floor"
        })
        expect(merged.body.resolved_policy).toEqual({
          meta: { schema_version: "1.0", name: "agent", scope: "agent" },
          capability_mappings: {
            files: { tools: ["fs_*"], card_actions: ["delete"] },
            "agent:files": { tools: ["fs_*"], card_actions: ["read"] }
          },
          forbidden: [
            { pattern: "shell_*", reason: "org: no shell", severity: "high" },
            { pattern: "shell_*", reason: "agent: no shell either", severity: "critical" }
          ],
          escalation_triggers: [],
          defaults: {
            unmapped_tool_action: "deny",
            unmapped_severity: "medium",
            fail_open: true,
            enforcement_mode: "enforce",
            grace_period_hours: 6
          }
        })
        expect((yield* state.get(agentId)).policy).toEqual(merged.body.resolved_policy)

        // The organization's policy deleted: the agent's alone remains in force.
        expect((yield* api.call("DELETE", `/v1/orgs/${orgId}/policy`, auth)).status).toBe(204)
        expect((yield* state.get(agentId)).policy).toEqual(agent.body.policy)
        expect((yield* resolved()).body.sources).toMatchObject({ org_policy_version: null, agent_policy_version: 1 })

        // A personal agent has no organization.
        const { agentA, userA } = api.fixtures
        expect((yield* api.call("GET", `/v1/agents/${agentA}/policy/resolved`, { token: userA.token })).body).toEqual({
          agent_id: agentA,
          resolved_policy: null,
          sources: { org_id: null, org_policy_version: null, agent_policy_version: null, merge_strategy: "org_floor" }
        })
      })
    )

    it.effect(
      "an agent claimed into an organization later is put under its policy (and named by its org) at once; deleting the org lifts it",
      () =>
        Effect.gen(function* () {
          const api = yield* ApiHarness
          const state = yield* AgentState
          const { orgId, owner } = yield* freshOrg
          const org = yield* api.call("PUT", `/v1/orgs/${orgId}/policy`, { token: owner.token, ...yaml(YAML_POLICY) })
          expect(org.status).toBe(200)
          const providerKey = `sk-ant-${randomUUID()}`
          const agentId = agentIdOf(keyHashOf(providerKey)!, undefined)
          const personal = yield* api.call("POST", "/v1/agents/claim", {
            token: owner.token,
            body: { provider_key: providerKey }
          })
          expect(personal.status).toBe(200)
          expect((yield* state.get(agentId)).policy).toBeUndefined()
          expect((yield* state.get(agentId)).orgId).toBeUndefined()
          const claimed = yield* api.call("POST", "/v1/agents/claim", {
            token: owner.token,
            body: { provider_key: providerKey, org_id: orgId }
          })
          expect(claimed).toMatchObject({ status: 200, body: { agent_id: agentId, org_id: orgId } })
          expect((yield* state.get(agentId)).policy).toEqual(org.body.policy)
          // The gateway's events name the organization.
          expect((yield* state.get(agentId)).orgId).toBe(orgId)

          expect((yield* api.call("DELETE", `/v1/orgs/${orgId}`, { token: owner.token })).status).toBe(200)
          expect((yield* state.get(agentId)).policy).toBeUndefined()
          expect((yield* state.get(agentId)).orgId).toBeUndefined()
        })
    )
  })

  describe("limits (issue 24: POLICY_MAX_RULES)", () => {
    const rules = (n: number, prefix: string) => ({
      forbidden: Array.from({ length: n }, (_, i) => ({ pattern: `${prefix}_${i}_*`, reason: "r" }))
    })

    it.effect(
      "a policy over 1,000 rules is 400 naming the cap, for an agent and an organization; 1,000 each is accepted, 2,000 once merged",
      () =>
        Effect.gen(function* () {
          const api = yield* ApiHarness
          const { agentId, orgId, owner } = yield* freshOrg
          // The attack: 5,000 glob rules, accepted before.
          for (const path of [`/v1/agents/${agentId}/policy`, `/v1/orgs/${orgId}/policy`]) {
            for (const body of [rules(5000, "a"), rules(1001, "a")]) {
              const res = yield* api.call("PUT", path, { token: owner.token, body })
              expect(res.status).toBe(400)
              expect(Object.keys(res.body)).toEqual(["error"])
              expect(res.body.error).toMatch(/has \d+ rules .* at most 1000 .*POLICY_MAX_RULES/)
            }
          }
          // Card actions count too: 500 globs and 501 actions is 1,001.
          const mapped = {
            capability_mappings: {
              m: {
                tools: Array.from({ length: 500 }, (_, i) => `t${i}`),
                card_actions: Array.from({ length: 501 }, (_, i) => `a${i}`)
              }
            }
          }
          expect(
            (yield* api.call("PUT", `/v1/agents/${agentId}/policy`, { token: owner.token, body: mapped })).status
          ).toBe(400)
          expect(
            (yield* api.call("PUT", `/v1/orgs/${orgId}/policy`, { token: owner.token, body: rules(1000, "org") }))
              .status
          ).toBe(200)
          expect(
            (yield* api.call("PUT", `/v1/agents/${agentId}/policy`, { token: owner.token, body: rules(1000, "agent") }))
              .status
          ).toBe(200)
          const resolved = yield* api.call("GET", `/v1/agents/${agentId}/policy/resolved`, { token: owner.token })
          expect(resolved.body.resolved_policy.forbidden).toHaveLength(2000)
        })
    )
  })

  describe("POST /v1/policies/evaluate", () => {
    it.effect("reports every matching forbidden rule, matches `?`, and never softens a forbidden tool with grace", () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const user = yield* enterpriseUser
        const agentId = yield* api.claimAgent({ userId: user.userId })
        const auth = { token: user.token }
        const evaluate = (tools: ReadonlyArray<string>) =>
          api.call("POST", "/v1/policies/evaluate", { ...auth, body: { agent_id: agentId, tools } })

        expect((yield* evaluate(["anything"])).body).toMatchObject({
          agent_id: agentId,
          verdict: "pass",
          violations: [],
          warnings: [],
          tools_evaluated: 1,
          policy_id: null,
          policy_version: null,
          enforcement_mode: null,
          would_block: false
        })

        const put = yield* api.call("PUT", `/v1/agents/${agentId}/policy`, {
          ...auth,
          ...yaml(`meta:
  schema_version: "1.0"
forbidden:
  - pattern: "?ash"
    reason: no shells
  - pattern: "bash"
    reason: bash in particular
    severity: critical
  - pattern: "b*"
    reason: nothing starting with b
    severity: low
escalation_triggers:
  - condition: 'tool_matches("pay_*")'
    action: warn
    reason: money
defaults:
  enforcement_mode: enforce
  unmapped_tool_action: deny
  unmapped_severity: high
  grace_period_hours: 8760
`)
        })
        expect(put.status).toBe(200)

        const result = yield* evaluate(["bash", "zsh", "pay_out", "bash"])
        expect(result.status).toBe(200)
        expect(result.body).toMatchObject({
          agent_id: agentId,
          verdict: "fail",
          tools_evaluated: 3,
          policy_id: put.body.policy_id,
          policy_version: 1,
          enforcement_mode: "enforce",
          would_block: true
        })
        expect(result.body.duration_ms).toBeGreaterThanOrEqual(0)
        expect(result.body.violations).toEqual([
          { type: "forbidden", tool: "bash", reason: "no shells", severity: "high" },
          { type: "forbidden", tool: "bash", reason: "bash in particular", severity: "critical" },
          { type: "forbidden", tool: "bash", reason: "nothing starting with b", severity: "low" }
        ])
        // zsh and pay_out are unmapped and, as if first seen now, within their grace: warnings only.
        expect(result.body.warnings).toEqual([
          expect.objectContaining({
            type: "unmapped_denied",
            tool: "zsh",
            severity: "high",
            grace_until: expect.any(String)
          }),
          expect.objectContaining({ type: "unmapped_denied", tool: "pay_out", grace_until: expect.any(String) }),
          { type: "escalation", tool: "pay_out", reason: "money", severity: "medium" }
        ])

        const soft = yield* evaluate(["pay_out"])
        expect(soft.body).toMatchObject({ verdict: "warn", violations: [], would_block: false })

        for (const [body, message] of [
          [{ agent_id: agentId, tools: [] }, "tools: must list 1 to 256 tool names"],
          [{ agent_id: agentId, tools: Array.from({ length: 257 }, (_, i) => `t${i}`) }, "tools: must list 1 to 256"],
          [{ agent_id: agentId }, "tools"],
          [{ tools: ["x"] }, "agent_id"]
        ] as const) {
          const bad = yield* api.call("POST", "/v1/policies/evaluate", { ...auth, body })
          expect(bad.status).toBe(400)
          expect(bad.body.error).toContain(message)
        }
      })
    )

    it.effect("checks mapped tools against the agent's active card", () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const user = yield* enterpriseUser
        const agentId = yield* api.claimAgent({ userId: user.userId })
        const card = {
          card_id: `ac-${randomUUID()}`,
          agent_id: agentId,
          issued_at: "2026-01-01T00:00:00Z",
          principal: { type: "human", relationship: "delegated_authority" },
          values: { declared: ["honesty"] },
          autonomy_envelope: { bounded_actions: ["read"], forbidden_actions: ["delete"], escalation_triggers: [] },
          audit_commitment: { retention_days: 30, queryable: false }
        }
        const patched = yield* api.call("PATCH", `/v1/agents/${agentId}/card`, {
          token: api.serviceRoleKey,
          body: { card_json: card, conscience_values: [] }
        })
        expect(patched.status).toBe(200)
        yield* api.call("PUT", `/v1/agents/${agentId}/policy`, {
          token: user.token,
          body: {
            capability_mappings: {
              reading: { tools: ["read_*"], card_actions: ["read"] },
              deleting: { tools: ["rm"], card_actions: ["delete"] },
              posting: { tools: ["post"], card_actions: ["send"] }
            }
          }
        })
        const result = yield* api.call("POST", "/v1/policies/evaluate", {
          token: user.token,
          body: { agent_id: agentId, tools: ["read_file", "rm", "post"] }
        })
        expect(result.body).toMatchObject({ verdict: "fail", enforcement_mode: "warn", would_block: false })
        expect(result.body.violations.map((v: any) => [v.type, v.tool, v.severity])).toEqual([
          ["card_forbidden", "rm", "high"],
          ["capability_exceeded", "post", "high"]
        ])
      })
    )
  })

  describe("roles", () => {
    it.effect(
      "agent routes: any role reads, Owner and Admin write; org routes: members read, Owner and Admin write",
      () =>
        Effect.gen(function* () {
          const api = yield* ApiHarness
          const { admin, member, orgAgent, orgId, owner, userB } = api.fixtures
          const adminKey = yield* api.createApiKey(admin.userId, { orgId, role: "admin" })
          const memberKey = yield* api.createApiKey(member.userId, { orgId, role: "member" })
          const otherKey = yield* api.createApiKey(userB.userId, { orgId: api.fixtures.otherOrgId, role: "admin" })
          const service = { token: api.serviceRoleKey }
          const writers: ReadonlyArray<readonly [string, CallOptions, string]> = [
            ["owner", { token: owner.token }, owner.userId],
            ["admin", { token: admin.token }, admin.userId],
            ["admin-role key", { apiKey: adminKey }, admin.userId],
            ["service-role key", service, "service"]
          ]
          const readers: ReadonlyArray<readonly [string, CallOptions]> = [
            ["member", { token: member.token }],
            ["member-role key", { apiKey: memberKey }]
          ]
          const strangers: ReadonlyArray<readonly [string, CallOptions]> = [
            ["another organization's user", { token: userB.token }],
            ["another organization's key", { apiKey: otherKey }]
          ]

          for (const [scope, base] of [
            ["agent", `/v1/agents/${orgAgent}`],
            ["org", `/v1/orgs/${orgId}`]
          ] as const) {
            const path = `${base}/policy`
            const reads = [path, `${path}/history`, ...(scope === "agent" ? [`${path}/resolved`] : [])]
            const restore = () => api.call("PUT", path, { ...service, body: JSON_POLICY })
            expect((yield* restore()).status).toBe(200)
            const evaluate = (options: CallOptions) =>
              api.call("POST", "/v1/policies/evaluate", { ...options, body: { agent_id: orgAgent, tools: ["rm_x"] } })

            for (const [who, credential] of [...writers, ...readers]) {
              for (const read of reads)
                expect((yield* api.call("GET", read, credential)).status, `${who} GET ${read}`).toBe(200)
              expect((yield* evaluate(credential)).status, `${who} evaluate`).toBe(200)
            }
            for (const [who, credential, actor] of writers) {
              const put = yield* api.call("PUT", path, { ...credential, ...yaml(YAML_POLICY) })
              expect(put.status, `${who} PUT ${path}`).toBe(200)
              expect(put.body.updated_by).toBe(actor)
              expect((yield* api.call("DELETE", path, credential)).status, `${who} DELETE ${path}`).toBe(204)
              expect((yield* restore()).status).toBe(200)
            }
            for (const [who, credential] of readers) {
              const put = yield* api.call("PUT", path, { ...credential, ...yaml(YAML_POLICY) })
              expect(put.status, `${who} PUT ${path}`).toBe(403)
              expect(Object.keys(put.body)).toEqual(["error"])
              expect((yield* api.call("DELETE", path, credential)).status, `${who} DELETE ${path}`).toBe(403)
            }
            for (const [who, credential] of strangers) {
              for (const read of reads)
                expect((yield* api.call("GET", read, credential)).status, `${who} GET ${read}`).toBe(404)
              expect((yield* api.call("PUT", path, { ...credential, body: JSON_POLICY })).status, `${who} PUT`).toBe(
                404
              )
              expect((yield* api.call("DELETE", path, credential)).status, `${who} DELETE`).toBe(404)
              expect((yield* evaluate(credential)).status, `${who} evaluate`).toBe(404)
            }
            for (const read of reads) expect((yield* api.call("GET", read)).status).toBe(401)
            expect((yield* api.call("PUT", path, { body: JSON_POLICY })).status).toBe(401)
            expect((yield* api.call("DELETE", path)).status).toBe(401)
            expect((yield* evaluate({})).status).toBe(401)
            // Nothing above changed it: still the version the service-role key restored.
            expect((yield* api.call("GET", path, service)).body.policy.meta.name).toBe("json policy")
          }

          // An organization that does not exist is 404 even for the service-role key.
          expect((yield* api.call("GET", `/v1/orgs/org_${randomUUID()}/policy`, service)).status).toBe(404)
          expect(
            (yield* api.call("PUT", `/v1/orgs/org_${randomUUID()}/policy`, { ...service, body: JSON_POLICY })).status
          ).toBe(404)
        })
    )
  })

  describe("governance log", () => {
    it.effect("every PUT and DELETE is an entry on the agent's or the organization's log, with the policy's hash", () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const governance = yield* GovernanceLog
        const { agentId, orgId, owner } = yield* freshOrg
        const auth = { token: owner.token }
        const a1 = yield* api.call("PUT", `/v1/agents/${agentId}/policy`, { ...auth, ...yaml(YAML_POLICY) })
        const a2 = yield* api.call("PUT", `/v1/agents/${agentId}/policy`, { ...auth, body: JSON_POLICY })
        expect((yield* api.call("DELETE", `/v1/agents/${agentId}/policy`, auth)).status).toBe(204)
        const o1 = yield* api.call("PUT", `/v1/orgs/${orgId}/policy`, { token: api.serviceRoleKey, body: JSON_POLICY })
        expect((yield* api.call("DELETE", `/v1/orgs/${orgId}/policy`, auth)).status).toBe(204)
        // Refused and failed writes leave no entry.
        expect(
          (yield* api.call("PUT", `/v1/agents/${agentId}/policy`, { ...auth, body: { forbiden: [] } })).status
        ).toBe(400)
        expect((yield* api.call("DELETE", `/v1/agents/${agentId}/policy`, auth)).status).toBe(404)

        const agentLog = yield* Effect.orDie(governance.entries(agentGovernanceLog(agentId), 0, 100))
        expect(agentLog.size).toBe(3)
        expect(agentLog.entries.map((e) => e.record)).toEqual([
          expect.objectContaining({
            origin: `candor.test/agents/${agentId}/governance`,
            action: "policy.put",
            actor: owner.userId,
            previous_state: null,
            new_state: { version: 1, policy_id: a1.body.policy_id },
            hashes: { policy_hash: a1.body.policy_hash }
          }),
          expect.objectContaining({
            action: "policy.put",
            previous_state: { version: 1 },
            new_state: { version: 2, policy_id: a2.body.policy_id },
            hashes: { policy_hash: a2.body.policy_hash }
          }),
          expect.objectContaining({
            action: "policy.delete",
            actor: owner.userId,
            previous_state: { version: 2, policy_id: a2.body.policy_id },
            new_state: null,
            hashes: {}
          })
        ])
        expect(a1.body.policy_hash).toBe(policyHash(policyOf(a1.body.policy)))

        const orgLog = yield* Effect.orDie(governance.entries(orgGovernanceLog(orgId), 0, 100))
        expect(orgLog.entries.map((e) => [e.record.action, e.record.actor, e.record.new_state])).toEqual([
          ["policy.put", "service", { version: 1, policy_id: o1.body.policy_id }],
          ["policy.delete", owner.userId, null]
        ])
        expect(orgLog.entries[0]!.record.hashes).toEqual({ policy_hash: o1.body.policy_hash })
        const head = yield* Effect.orDie(governance.treeHead(orgGovernanceLog(orgId)))
        expect(head?.tree_size).toBe(2)
      })
    )
  })

  it.effect("the OpenAPI document describes the JSON and YAML bodies", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const doc = (yield* api.call("GET", "/v1/openapi.json")).body
      const put = doc.paths["/v1/agents/{agent_id}/policy"].put
      expect(Object.keys(put.requestBody.content).sort()).toEqual(["application/json", "application/yaml", "text/yaml"])
      expect(doc.paths["/v1/orgs/{org_id}/policy/history"].get).toBeDefined()
      expect(doc.paths["/v1/policies/evaluate"].post).toBeDefined()
      expect(doc.paths["/v1/agents/{agent_id}/policy"].delete.responses["204"]).toBeDefined()
    })
  )
})
