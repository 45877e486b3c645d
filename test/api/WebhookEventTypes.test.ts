/**
 * GET /v1/webhooks/event-types: the spec's fifteen events and Candor's own, each with a JSON Schema
 * of its `data` that accepts what Candor sends (a containment change as services/Containment.ts
 * builds it) and refuses what it does not; unknown names are found for a subscription's 400.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { unknownEventTypes, WEBHOOK_EVENT_TYPES, WebhookEnvelope } from "../../core/schema/WebhookEvents.js"
import { ApiHarness, layer as harness } from "./Support.js"

const SPEC_EVENTS = [
  "reputation.score_changed",
  "reputation.grade_changed",
  "team.created",
  "team.archived",
  "team.member_added",
  "team.member_removed",
  "team.card_updated",
  "team_reputation.score_changed",
  "team_reputation.grade_changed",
  "quota.team_reputation_exceeded",
  "quota.team_reputation_warning",
  "conscience.values_updated",
  "agent.paused",
  "agent.resumed",
  "agent.killed"
]

const CANDOR_EVENTS = [
  "verdict.boundary_violation",
  "verdict.review_needed",
  "drift.detected",
  "policy.violation",
  "enforcement.blocked",
  "mcp.tool_changed",
  "proof.failed",
  "pipeline.dead_lettered",
  "approval.requested"
]

layer(harness(), { timeout: "60 seconds" })("webhook event types", (it) => {
  it.effect("lists the catalogue, public, each with a data schema", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const res = yield* api.call("GET", "/v1/webhooks/event-types")
      expect(res.status).toBe(200)
      const types = res.body.event_types.map((entry: { type: string }) => entry.type)
      expect(types).toEqual([...SPEC_EVENTS, ...CANDOR_EVENTS])
      const paused = res.body.event_types.find((entry: { type: string }) => entry.type === "agent.paused")
      expect(paused.status).toBe("active")
      expect(paused.data_schema.required).toEqual(
        expect.arrayContaining(["agent_id", "org_id", "action", "actor", "reason", "previous_status", "new_status"])
      )
      const team = res.body.event_types.find((entry: { type: string }) => entry.type === "team.created")
      expect(team.status).toBe("active")
      const teamScore = res.body.event_types.find(
        (entry: { type: string }) => entry.type === "team_reputation.score_changed"
      )
      expect(teamScore.status).toBe("active")
      const dead = res.body.event_types.find((entry: { type: string }) => entry.type === "pipeline.dead_lettered")
      expect(dead.status).toBe("active")
      // The schema carries its identifier: its definition is under $defs.
      const deadLetter = dead.data_schema.$defs.DeadLetter
      expect(deadLetter.required).toEqual(
        expect.arrayContaining(["dead_letter_id", "subject", "agent_id", "reason", "deliveries", "dead_lettered_at"])
      )
      expect(Object.keys(deadLetter.properties)).not.toContain("payload")
    })
  )

  it("validates data and envelopes, and names unknown types", () => {
    const paused = Schema.decodeUnknownEither(WEBHOOK_EVENT_TYPES["agent.paused"].data)
    expect(
      paused({
        agent_id: "agt-1",
        org_id: null,
        action: "auto_pause",
        actor: "system",
        reason: "Auto-contained: 3 consecutive boundary violations",
        previous_status: "active",
        new_status: "paused",
        scope: "agent"
      })._tag
    ).toBe("Right")
    expect(paused({ agent_id: "agt-1", action: "nap" })._tag).toBe("Left")
    const envelope = Schema.decodeUnknownEither(WebhookEnvelope)
    expect(
      envelope({ id: "evt-1", type: "agent.paused", created_at: "2026-11-24T00:00:00Z", org_id: null, data: {} })._tag
    ).toBe("Right")
    expect(envelope({ id: "1", type: "x", created_at: "now", org_id: null, data: {} })._tag).toBe("Left")
    expect(unknownEventTypes(["agent.paused", "agent.sleeping", "verdict.*"])).toEqual(["agent.sleeping", "verdict.*"])
  })
})
