/**
 * The dead-letter recorder's pieces (issue 24): the reason an undecodable event is given names the
 * fields that failed and never their values (a property over hostile values and keys); a notice
 * becomes a bounded record; recording one is the row, its `pipeline.dead_lettered` event and the
 * metric, together and once, however often the notice comes (a redelivery after a crash), with a
 * log line that carries nothing of the payload.
 */
import { describe, expect, it, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Metric from "effect/Metric"
import * as Schema from "effect/Schema"
import fc from "fast-check"
import { GatewayEvent } from "../../core/schema/Event.js"
import { deadLetters } from "../../adapters/metrics/PipelineMetrics.js"
import * as DeadLetterRepo from "../../adapters/store/DeadLetterRepo.js"
import * as SqlStore from "../../adapters/store/SqlStore.js"
import * as SecretKeys from "../../adapters/keys/SecretKeys.js"
import {
  deadLetterCause,
  deadLetterId,
  deadLetterOf,
  recordDeadLetter,
  undecodableReason
} from "../../streams/DeadLetters.js"
import { outboxEvents } from "../support/EventOutbox.js"
import { gatewayEvent } from "../support/Events.js"
import { fuzzParameters } from "../support/Fuzz.js"
import { migratedPglite } from "../support/PgliteTemplate.js"

const decode = Schema.decodeUnknownEither(GatewayEvent)

/** The reason the worker gives for `payload`; undefined when it decodes. */
const reasonFor = (payload: unknown): string | undefined => {
  const decoded = decode(payload)
  return decoded._tag === "Left" ? undecodableReason(decoded.left) : undefined
}

describe("undecodableReason", () => {
  it("names the fields that failed, never their values", () => {
    const event = gatewayEvent("agt-reason")
    expect(reasonFor({ ...event, session_id: "a b" })).toBe("not a gateway event: session_id (Refinement)")
    expect(reasonFor("a string")).toBe("not a gateway event: (event) (Type)")
    // The event's own check (agent, session and trace agree): no path, no values.
    expect(reasonFor({ ...event, agent_id: "agt-other" })).toBe("not a gateway event: (event) (Refinement)")
  })

  it("quotes nothing of a hostile event, whatever its values and keys (property)", () => {
    const base = gatewayEvent("agt-prop")
    // A marker no schema field name matches: it can only reach the reason from the payload.
    const hostile = fc.string({ minLength: 1, maxLength: 40 }).map((s) => `Zq${s}`)
    fc.assert(
      fc.property(
        hostile,
        fc.constantFrom("session_id", "agent_id", "type", "checkpoint", "trace", "outcome", "key"),
        (value, field) => {
          // Every case fails to decode: a value with a space where an id goes, a string where an
          // object goes, a key the payload chose holding a string where a number goes.
          const payload =
            field === "key"
              ? {
                  ...base,
                  trace: {
                    ...base.trace,
                    decision: {
                      ...base.trace.decision,
                      alternatives_considered: [
                        { option_id: "o", description: "d", scoring_factors: { [value]: value } }
                      ]
                    }
                  }
                }
              : { ...base, [field]: `${value} x` }
          const reason = reasonFor(payload)
          expect(reason?.startsWith("not a gateway event: ")).toBe(true)
          expect(reason).not.toContain(value)
        }
      ),
      fuzzParameters(300)
    )
  })
})

describe("a notice's record", () => {
  it("names the agent of an event subject, bounds what a notice says, and keeps its id stable", () => {
    const notice = {
      id: "CANDOR_DEAD-7",
      subject: "candor.events.3.agt-a.b",
      reason: "delivered 5 times",
      deliveries: 5,
      at: "2026-11-30T10:00:00.000Z"
    }
    const now = new Date("2026-12-01T00:00:00.000Z")
    expect(deadLetterOf(notice, "candor", now)).toEqual({
      dead_letter_id: deadLetterId("CANDOR_DEAD-7"),
      subject: "candor.events.3.agt-a.b",
      agent_id: "agt-a.b",
      reason: "delivered 5 times",
      deliveries: 5,
      dead_lettered_at: "2026-11-30T10:00:00.000Z"
    })
    const odd = deadLetterOf(
      { ...notice, subject: "candor.alerts.x", reason: "r".repeat(5_000), deliveries: -1, at: "yesterday" },
      "candor",
      now
    )
    expect(odd).toMatchObject({ agent_id: null, deliveries: 0, dead_lettered_at: now.toISOString() })
    expect(odd.reason).toHaveLength(512)
    expect(deadLetterId("CANDOR_DEAD-7")).toMatch(/^dl-[0-9a-f]{32}$/)
    expect(deadLetterId("CANDOR_DEAD-7")).toBe(deadLetterId("CANDOR_DEAD-7"))
    expect(deadLetterId("CANDOR_DEAD-8")).not.toBe(deadLetterId("CANDOR_DEAD-7"))
  })

  it("counts by a cause from a fixed list", () => {
    expect(deadLetterCause("not a gateway event: session_id (Type)")).toBe("undecodable")
    expect(deadLetterCause("delivered 5 times")).toBe("delivery_limit")
    expect(deadLetterCause("not JSON")).toBe("not_json")
    expect(deadLetterCause("not a batch")).toBe("not_a_batch")
    expect(deadLetterCause("anything else")).toBe("other")
  })
})

const Pglite = Layer.mergeAll(SqlStore.layer, DeadLetterRepo.layer).pipe(
  Layer.provide(SecretKeys.layerEphemeral),
  Layer.provideMerge(migratedPglite)
)

layer(Pglite, { timeout: "60 seconds" })("recording a dead letter", (it) => {
  it.effect("writes the row, its event and the metric once, however often the notice comes; logs no payload", () =>
    Effect.gen(function* () {
      const logged: Array<string> = []
      const capture = Logger.make(({ annotations, message }) => {
        logged.push(JSON.stringify({ message, annotations: Object.fromEntries(HashMap.toEntries(annotations)) }))
      })
      const entry = deadLetterOf(
        {
          id: "memory-1",
          subject: "candor.events.1.agt-recorded",
          reason: "not a gateway event: session_id (Refinement)",
          deliveries: 1,
          at: "2026-11-30T10:00:00.000Z"
        },
        "candor",
        new Date()
      )
      const counter = deadLetters.pipe(Metric.tagged("cause", "undecodable"))
      const before = (yield* Metric.value(counter)).count
      const record = recordDeadLetter(entry).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, capture)))
      expect(yield* record).toBe(true)
      expect(yield* record).toBe(false)
      expect((yield* Metric.value(counter)).count - before).toBe(1)
      const repo = yield* DeadLetterRepo.DeadLetterRepo
      expect(yield* repo.page({ limit: 10 })).toEqual({ dead_letters: [entry], next_before: null })
      const events = yield* outboxEvents({ agentId: "agt-recorded" })
      expect(events.map((e) => [e.type, e.org_id, e.data])).toEqual([["pipeline.dead_lettered", null, entry]])
      expect(logged).toHaveLength(1)
      expect(logged[0]).toContain(entry.dead_letter_id)
    })
  )
})
