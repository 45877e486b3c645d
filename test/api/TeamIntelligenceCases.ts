/**
 * Team intelligence over HTTP (the cases of TeamIntelligence.test.ts on PGlite and
 * TeamIntelligence.postgres.test.ts on PostgreSQL): fault lines of the members' cards (a worked example),
 * the forecast from recorded verdict counts, drift alerts and policy outcomes (numbers checked),
 * the policy recommended from recorded tool calls and the cards (decoded by the policy schema and
 * accepted by PUT /v1/orgs/{org_id}/policy), determinism, who may read, and the 400s.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { expect, type Vitest } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Clock from "effect/Clock"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/TestClock"
import { randomUUID } from "node:crypto"
import { Store } from "../../adapters/store/Store.js"
import type { AlignmentCard } from "../../core/schema/Card.js"
import { TeamFaultLines, TeamForecast, TeamPolicyRecommendation } from "../../core/schema/Intelligence.js"
import { decodePolicy } from "../../core/schema/Policy.js"
import { card as baseCard } from "../adapters/store/Fixtures.js"
import type * as Layer from "effect/Layer"
import { ApiHarness, freshOrganization, type layer as harness } from "./Support.js"

const setCard = (agentId: string, values: AlignmentCard["values"], forbidden: ReadonlyArray<string> = []) =>
  Effect.flatMap(Store, (store) => {
    const base = baseCard(agentId, 90, `card-${randomUUID().slice(0, 8)}`)
    return Effect.orDie(
      store.putCard(agentId, {
        ...base,
        values,
        autonomy_envelope: {
          bounded_actions: ["reply"],
          escalation_triggers: [
            { condition: "tool_matches('payments_*')", action: "escalate", reason: "money moves" },
            { condition: "amount > 100", action: "deny", reason: "not about tools" }
          ],
          ...(forbidden.length > 0 ? { forbidden_actions: forbidden } : {})
        }
      })
    )
  })

/**
 * A new organization of the fixtures' owner, admin and member, and a team of three carded agents:
 * a and b declare privacy, c conflicts with it; b lacks transparency. Pairs: 3.
 * privacy: incompatible, pairs a-c, b-c → 0.6667, critical; transparency: resolvable, a-b, b-c → 0.6667, medium.
 */
export const freshTeam = Effect.gen(function* () {
  const api = yield* ApiHarness
  const { owner } = api.fixtures
  const orgId = yield* freshOrganization("Intelligence")
  const [a, b, c] = [
    yield* api.claimAgent({ userId: owner.userId, orgId }),
    yield* api.claimAgent({ userId: owner.userId, orgId }),
    yield* api.claimAgent({ userId: owner.userId, orgId })
  ] as const
  yield* setCard(a, { declared: ["privacy", "transparency"] }, ["delete_database"])
  yield* setCard(b, { declared: ["privacy"] }, ["delete_database", "send_email"])
  yield* setCard(c, { declared: ["transparency"], conflicts_with: ["privacy"] })
  const created = yield* api.call("POST", "/v1/teams", {
    token: owner.token,
    body: { org_id: orgId, name: `team-${randomUUID().slice(0, 8)}`, agent_ids: [a, b, c] }
  })
  expect(created.status, JSON.stringify(created.body)).toBe(201)
  return { orgId, teamId: created.body.team.team_id as string, agents: [a, b, c] as const }
})

const post = (route: string, body: unknown, token?: string) =>
  Effect.flatMap(ApiHarness, (api) =>
    api.call("POST", `/v1/teams/${route}`, { token: token ?? api.fixtures.member.token, body })
  )

const trace = (agentId: string, tool: string | undefined, policyVerdict?: "pass" | "fail", at = new Date()) => ({
  trace_id: `tr-${randomUUID()}`,
  agent_id: agentId,
  timestamp: at.toISOString(),
  action:
    tool === undefined
      ? { type: "recommend", name: "respond", category: "bounded" }
      : { type: "execute", name: tool, category: "bounded" },
  decision: { selected: "x", selection_reasoning: "", values_applied: [] },
  ...(policyVerdict === undefined ? {} : { context: { metadata: { policy_verdict: policyVerdict } } })
})

const record = (
  agentId: string,
  data: {
    readonly verdicts?: Readonly<Record<string, number>>
    readonly drift?: ReadonlyArray<Date>
    readonly traces?: ReadonlyArray<ReturnType<typeof trace>>
  }
) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    for (const [verdict, count] of Object.entries(data.verdicts ?? {}))
      yield* sql`insert into checkpoint_counts (agent_id, verdict, count) values (${agentId}, ${verdict}, ${count})`
    for (const at of data.drift ?? [])
      yield* sql`insert into drift_alerts (alert_id, agent_id, session_id, detected_at, body)
        values (${`da-${randomUUID()}`}, ${agentId}, 'sess-1', ${at.toISOString()}, '{}')`
    for (const t of data.traces ?? [])
      yield* sql`insert into traces (trace_id, agent_id, occurred_at, body)
        values (${t.trace_id}, ${agentId}, ${t.timestamp}, ${JSON.stringify(t)}::json)`
  }).pipe(Effect.orDie)

const DAY = 86_400_000

/** The test clock at least at the real time (the server reads it: the forecast's window ends there). */
const realTime = Effect.flatMap(Clock.currentTimeMillis, (at) => TestClock.setTime(Math.max(at, Date.now())))

/** The cases, on whichever database the harness `it` runs on. */
export const teamIntelligenceCases = (it: Vitest.MethodsNonLive<Layer.Layer.Success<ReturnType<typeof harness>>>) => {
  it.effect("fault lines: a worked example from the members' cards, the same on every request", () =>
    Effect.gen(function* () {
      const { agents, teamId } = yield* freshTeam
      const [a, b, c] = agents
      const res = yield* post("fault-lines", { team_id: teamId })
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      const body = Schema.decodeUnknownSync(TeamFaultLines)(res.body)
      expect(body).toMatchObject({ team_id: teamId, member_count: 3, members_with_cards: 3 })
      expect(body.fault_lines.map((l) => [l.value, l.classification, l.severity, l.impact_score])).toEqual([
        ["privacy", "incompatible", "critical", 0.6667],
        ["transparency", "resolvable", "medium", 0.6667]
      ])
      expect(body.fault_lines[0]!.agents_declaring).toEqual([a, b].sort())
      expect(body.fault_lines[0]!.agents_conflicting).toEqual([c])
      expect(body.fault_lines[1]!.agents_missing).toEqual([b])

      const again = yield* post("fault-lines", { team_id: teamId })
      expect({ ...again.body, computed_at: null }).toEqual({ ...res.body, computed_at: null })
    })
  )

  it.effect(
    "forecast: every probability from the recorded verdicts, drift alerts, policy outcomes and fault lines",
    () =>
      Effect.gen(function* () {
        yield* realTime
        const { agents, teamId } = yield* freshTeam
        const [a, b, c] = agents
        const now = Date.now()
        // 40 checkpoints: 4 review_needed (0.1), 2 boundary_violation (0.05).
        yield* record(a, {
          verdicts: { clear: 14, review_needed: 4, boundary_violation: 2 },
          drift: [new Date(now - 2 * DAY)],
          traces: [trace(a, "search", "fail"), trace(a, "search", "pass"), trace(a, undefined)]
        })
        // A drift alert and a failed trace older than the window count for nothing.
        yield* record(b, {
          verdicts: { clear: 20 },
          drift: [new Date(now - 40 * DAY)],
          traces: [trace(b, "search", "fail", new Date(now - 40 * DAY)), trace(b, "read_file", "pass")]
        })
        yield* record(c, {})
        const api = yield* ApiHarness
        const admin = api.fixtures.admin.token
        const res = yield* post("forecast", { team_id: teamId }, admin)
        expect(res.status, JSON.stringify(res.body)).toBe(200)
        const body = Schema.decodeUnknownSync(TeamForecast)(res.body)
        expect(body).toMatchObject({
          method: "deterministic",
          window_days: 30,
          member_count: 3,
          members_with_scores: 0
        })
        // Traces in the window: 4, one failed → 0.25; drift: 1 of 3 members → 0.3333; no stored scores → risks 0.
        expect(body.inputs).toMatchObject({
          incompatible_impact: 0.6667,
          priority_impact: 0,
          resolvable_impact: 0.6667,
          review_rate: 0.1,
          violation_rate: 0.05,
          policy_fail_rate: 0.25,
          drift_share: 0.3333,
          risk_compliance: 0
        })
        expect(Object.fromEntries(body.failure_modes.map((f) => [f.mode, f.probability]))).toEqual({
          escalation_conflict: 0.3634, // .5·.6667 + .2·0 + .3·.1
          capability_gap: 0.3334, // .5·.6667
          value_override: 0.095, // .4·.05 + .3·.25
          coordination_deadlock: 0.2, // .3·.6667
          trust_erosion: 0.1483 // .4·.3333 + .3·.05
        })
        const again = yield* post("forecast", { team_id: teamId }, admin)
        expect({ ...again.body, computed_at: null }).toEqual({ ...res.body, computed_at: null })
      })
  )

  it.effect("recommend-policy: observed tools allowed, the cards' forbidden actions forbidden, accepted by PUT", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { agents, orgId, teamId } = yield* freshTeam
      const [a, b] = agents
      yield* record(a, { traces: [trace(a, "search"), trace(a, "send_email"), trace(a, undefined)] })
      yield* record(b, { traces: [trace(b, "search"), trace(b, "read_file")] })
      const res = yield* post("recommend-policy", { team_id: teamId })
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      const body = Schema.decodeUnknownSync(TeamPolicyRecommendation)(res.body)
      expect(Either.isRight(decodePolicy(res.body.policy))).toBe(true)
      expect(body.policy.capability_mappings).toEqual({
        observed_tools: {
          tools: ["read_file", "search"],
          card_actions: [],
          description: "Tools the team's members were seen to use"
        }
      })
      expect(body.policy.forbidden.map((rule) => rule.pattern)).toEqual(["delete_database", "send_email"])
      expect(body.policy.escalation_triggers).toEqual([
        { condition: "tool_matches('payments_*')", action: "escalate", reason: "money moves" }
      ])
      expect(body.policy.defaults.enforcement_mode).toBe("warn")
      expect(body.reasoning.map((r) => r.rule)).toEqual([
        "forbidden[0]",
        "forbidden[1]",
        "escalation_triggers[0]",
        "capability_mappings.observed_tools",
        "capability_mappings.observed_tools",
        "capability_mappings.observed_tools",
        "defaults"
      ])
      expect(body.reasoning.find((r) => r.source.startsWith("send_email"))!.source).toContain("left out")

      const put = yield* api.call("PUT", `/v1/orgs/${orgId}/policy`, {
        token: api.fixtures.owner.token,
        body: body.policy
      })
      expect(put.status, JSON.stringify(put.body)).toBe(200)
      const agentPut = yield* api.call("PUT", `/v1/agents/${a}/policy`, {
        token: api.fixtures.owner.token,
        body: { ...body.policy, meta: { ...body.policy.meta, scope: "agent" } }
      })
      expect(agentPut.status, JSON.stringify(agentPut.body)).toBe(200)
    })
  )

  it.effect(
    "every member of the organization reads (the forecast: Admin and up); another organization's user gets 404; no credential 401",
    () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const { teamId } = yield* freshTeam
        for (const route of ["fault-lines", "forecast", "recommend-policy"]) {
          for (const who of [api.fixtures.owner, api.fixtures.admin, api.fixtures.member]) {
            const res = yield* post(route, { team_id: teamId }, who.token)
            // The forecast may call a model (ANALYSIS_MODEL): a Member may not make Candor spend on one.
            if (route === "forecast" && who === api.fixtures.member) {
              expect(res.status).toBe(403)
              expect(res.body.error).toContain("admin role")
            } else expect(res.status).toBe(200)
          }
          const outsider = yield* post(route, { team_id: teamId }, api.fixtures.userB.token)
          expect(outsider.status).toBe(404)
          expect(outsider.body.error).toContain(teamId)
          const unknown = yield* post(route, { team_id: `team-${randomUUID()}` }, api.fixtures.admin.token)
          expect(unknown.status).toBe(404)
          expect(Object.keys(unknown.body)).toEqual(["error"])
          const anonymous = yield* api.call("POST", `/v1/teams/${route}`, { body: { team_id: teamId } })
          expect(anonymous.status).toBe(401)
        }
      })
  )

  it.effect("400 naming team_id: missing, not a string, not an id", () =>
    Effect.gen(function* () {
      const admin = (yield* ApiHarness).fixtures.admin.token
      for (const route of ["fault-lines", "forecast", "recommend-policy"]) {
        for (const body of [{}, { team_id: 7 }, { team_id: "no spaces allowed" }]) {
          const res = yield* post(route, body, admin)
          expect(res.status, JSON.stringify(res.body)).toBe(400)
          expect(res.body.error).toContain("team_id")
        }
      }
    })
  )
}
