/**
 * Auto-containment through the same transition as a person's pause (services/Containment.ts), by the
 * decision relay's handler on PGlite: it pauses an active agent as `system` with the same
 * `agent.paused` event, never overrides a kill or re-pauses, and a decision handled twice does
 * not pause again an agent an admin resumed in between.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { randomUUID } from "node:crypto"
import { AgentState } from "../../adapters/bus/AgentState.js"
import { Bus } from "../../adapters/bus/Bus.js"
import { SigningKeys } from "../../adapters/keys/SigningKeys.js"
import * as GovernanceLog from "../../adapters/store/GovernanceLog.js"
import * as SqlStore from "../../adapters/store/SqlStore.js"
import { type OutboxItem, Store } from "../../adapters/store/Store.js"
import { autoContainment, violationStreakOf } from "../../core/Containment.js"
import { agentGovernanceLog } from "../../core/Governance.js"
import { generateSigningKey } from "../../core/Signing.js"
import { changeContainment } from "../../services/Containment.js"
import { applyDecision, decision, DECISION_OUTBOX } from "../../streams/Decisions.js"
import * as SecretKeys from "../../adapters/keys/SecretKeys.js"
import { eventId } from "../../core/Events.js"
import { outboxEvents } from "../support/EventOutbox.js"
import { migratedPglite } from "../support/PgliteTemplate.js"

const World = GovernanceLog.layer({ logOrigin: "candor.test" }).pipe(
  Layer.provideMerge(
    Layer.mergeAll(
      SqlStore.layer.pipe(Layer.provide(SecretKeys.layerEphemeral), Layer.provideMerge(migratedPglite)),
      SigningKeys.fromKey(generateSigningKey()),
      AgentState.layerMemory,
      Bus.layerMemory
    )
  )
)

const checkpointId = () => `ic-${randomUUID()}`

/** The outbox item the actor writes when the streak reaches the threshold (3 violations). */
const pauseDecision = (agentId: string, lastCheckpoint: string, id = randomUUID()): OutboxItem => {
  const streak = violationStreakOf(
    [checkpointId(), checkpointId(), lastCheckpoint].map((checkpoint_id, n) => ({
      checkpoint_id,
      verdict: "boundary_violation" as const,
      timestamp: `2026-01-01T00:00:0${n}Z`
    }))
  )
  const containment = autoContainment(streak, new Date())
  const draft = decision(
    "candor",
    "containment",
    agentId,
    { agent_id: agentId, ...containment },
    {
      containment,
      checkpoint_id: lastCheckpoint,
      session_id: "sess-1",
      violations: 3
    }
  )
  return { ...draft, id, attempts: 1, created_at: new Date().toISOString() }
}

const manual = (agentId: string, action: "pause" | "resume" | "kill" | "reactivate") =>
  changeContainment({ agentId, action, actor: "user-1", reason: null })

layer(World, { timeout: "60 seconds" })("auto-containment through the containment transition", (it) => {
  it.scoped("pauses an active agent as system, with the agent.paused event of a manual pause", () =>
    Effect.gen(function* () {
      const store = yield* Store
      const agentId = `agt-auto-${randomUUID().slice(0, 8)}`
      const bus = yield* Bus
      const published = yield* bus.subscribe(`candor.containment.${agentId}`)
      const last = checkpointId()
      yield* applyDecision(pauseDecision(agentId, last))

      const settings = yield* store.agentSettings(agentId)
      expect(settings.containment).toMatchObject({
        status: "paused",
        reason: "Auto-contained: 3 consecutive boundary violations",
        contained_by: "system"
      })
      expect((yield* (yield* AgentState).get(agentId)).containment).toEqual(settings.containment)
      expect((yield* published.take).payload).toEqual({ agent_id: agentId, ...settings.containment })
      expect(yield* store.containmentLog(agentId, 10)).toEqual([
        expect.objectContaining({
          action: "auto_pause",
          actor: "system",
          previous_status: "active",
          new_status: "paused",
          metadata: { checkpoint_id: last, violations: 3 }
        })
      ])
      const [entry] = yield* store.containmentLog(agentId, 1)
      expect(yield* outboxEvents({ agentId })).toEqual([
        {
          id: eventId("agent.paused", entry!.id),
          type: "agent.paused",
          created_at: expect.any(String),
          org_id: null,
          agent_id: agentId,
          data: {
            agent_id: agentId,
            org_id: null,
            action: "auto_pause",
            actor: "system",
            reason: "Auto-contained: 3 consecutive boundary violations",
            previous_status: "active",
            new_status: "paused",
            scope: "agent"
          }
        }
      ])
      const governance = yield* (yield* GovernanceLog.GovernanceLog).entries(agentGovernanceLog(agentId), 0, 10)
      expect(governance.entries.map((e) => [e.record.action, e.record.actor])).toEqual([
        ["containment.auto_pause", "system"]
      ])
      expect((yield* store.enforcementRecordPage({ agentId, limit: 10, offset: 0 })).items).toEqual([
        {
          record_id: expect.stringMatching(/^enf-/),
          agent_id: agentId,
          kind: "paused",
          rule: "auto_containment",
          reason: "Auto-contained: 3 consecutive boundary violations",
          checkpoint_id: last,
          session_id: "sess-1",
          actor: "system",
          created_at: entry!.created_at
        }
      ])
    })
  )

  it.effect("every containment change a person makes is an enforcement record, with its actor and reason", () =>
    Effect.gen(function* () {
      const store = yield* Store
      const agentId = `agt-people-${randomUUID().slice(0, 8)}`
      yield* changeContainment({ agentId, action: "pause", actor: "user-1", reason: "investigating" })
      yield* manual(agentId, "resume")
      yield* changeContainment({ agentId, action: "kill", actor: "service", reason: null, keyHash: "ab".repeat(32) })
      yield* manual(agentId, "reactivate") // refused: the agent's own containment is active; nothing recorded
      const page = yield* store.enforcementRecordPage({ agentId, limit: 10, offset: 0 })
      expect(page.items.map((r) => [r.kind, r.rule, r.reason, r.actor])).toEqual([
        ["killed", "key_containment", "containment.kill", "service"],
        ["resumed", "containment", "containment.resume", "user-1"],
        ["paused", "containment", "investigating", "user-1"]
      ])
      expect(page.items.every((r) => r.checkpoint_id === undefined && r.session_id === undefined)).toBe(true)
    })
  )

  it.scoped("never overrides a kill, never re-pauses: nothing written, nothing published", () =>
    Effect.gen(function* () {
      const store = yield* Store
      const bus = yield* Bus
      for (const action of ["kill", "pause"] as const) {
        const agentId = `agt-held-${action}-${randomUUID().slice(0, 8)}`
        yield* manual(agentId, action)
        const before = yield* store.agentSettings(agentId)
        const published = yield* bus.subscribe(`candor.containment.${agentId}`)
        yield* applyDecision(pauseDecision(agentId, checkpointId()))
        expect(yield* store.agentSettings(agentId)).toEqual(before)
        expect((yield* store.containmentLog(agentId, 10)).map((e) => e.action)).toEqual([action])
        // Only the person's own change is an enforcement record.
        expect(
          (yield* store.enforcementRecordPage({ agentId, limit: 10, offset: 0 })).items.map((r) => r.kind)
        ).toEqual([action === "kill" ? "killed" : "paused"])
        // Nothing published before this marker.
        yield* bus.publish(`candor.containment.${agentId}`, { marker: true })
        expect((yield* published.take).payload).toEqual({ marker: true })
        expect((yield* (yield* AgentState).get(agentId)).containment?.status).toBe(before.containment?.status)
      }
    })
  )

  it.effect("a decision handled twice does not pause again an agent resumed in between", () =>
    Effect.gen(function* () {
      const store = yield* Store
      const agentId = `agt-twice-${randomUUID().slice(0, 8)}`
      const item = pauseDecision(agentId, checkpointId())
      yield* applyDecision(item)
      yield* manual(agentId, "resume")
      yield* applyDecision(item)
      expect((yield* store.agentSettings(agentId)).containment).toBeNull()
      expect((yield* (yield* AgentState).get(agentId)).containment).toBeUndefined()
      expect((yield* store.containmentLog(agentId, 10)).map((e) => e.action)).toEqual(["resume", "auto_pause"])
      // A new streak's decision pauses it again.
      yield* applyDecision(pauseDecision(agentId, checkpointId()))
      expect((yield* store.agentSettings(agentId)).containment?.status).toBe("paused")
      expect(item.kind).toBe(DECISION_OUTBOX)
    })
  )
})
