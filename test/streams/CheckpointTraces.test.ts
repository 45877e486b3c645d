/**
 * The relay's spans (OutboxRelay.ts `tracedHandler`): each outbox item sent is a span, the child of
 * its checkpoint's consume span when this worker committed the checkpoint (CheckpointTraces.ts finds
 * the checkpoint id where each kind of payload carries it), failed when the send fails; without
 * tracing the handler is the one given.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Tracer from "effect/Tracer"
import type { OutboxItem } from "../../adapters/store/Store.js"
import { CheckpointTraces } from "../../streams/CheckpointTraces.js"
import { tracedHandler } from "../../streams/OutboxRelay.js"
import { memoryTracer } from "../support/MemoryTracer.js"

const consumeOf = (n: number) => Tracer.externalSpan({ traceId: "a".repeat(32), spanId: String(n).padStart(16, "0") })

const item = (payload: unknown): OutboxItem => ({ id: "1", kind: "event", payload, attempts: 0, created_at: "" })

describe("relay spans", () => {
  it("finds the checkpoint where each payload carries it; forgets the oldest past its bound", () => {
    const traces = new CheckpointTraces()
    traces.note("ckpt-1", consumeOf(1))
    expect(traces.parentOf({ checkpoint_id: "ckpt-1", agent_id: "a" })?.spanId).toBe(consumeOf(1).spanId) // prover job
    expect(traces.parentOf({ type: "verdict.recorded", data: { checkpoint_id: "ckpt-1" } })).toBeDefined() // catalogue event
    expect(traces.parentOf({ subject: "x", message: {}, state: { checkpoint_id: "ckpt-1" } })).toBeDefined() // containment
    expect(traces.parentOf({ checkpoint_id: "ckpt-2" })).toBeUndefined()
    expect(traces.parentOf("ckpt-1")).toBeUndefined()
    for (let i = 2; i <= 10_001; i++) traces.note(`ckpt-${i}`, consumeOf(i))
    expect(traces.parentOf({ checkpoint_id: "ckpt-1" })).toBeUndefined()
    expect(traces.parentOf({ checkpoint_id: "ckpt-10001" })).toBeDefined()
  })

  it.effect("a span per item sent, under its checkpoint's consume span, failed when the send fails", () =>
    Effect.gen(function* () {
      const { recorder, spans } = memoryTracer()
      const checkpoints = new CheckpointTraces()
      checkpoints.note("ckpt-1", consumeOf(7))
      const send = tracedHandler({ recorder, checkpoints }, "event", (sent: OutboxItem) =>
        (sent.payload as { ok: boolean }).ok ? Effect.void : Effect.fail("refused")
      )
      yield* send(item({ ok: true, data: { checkpoint_id: "ckpt-1" } }))
      expect(Exit.isFailure(yield* Effect.exit(send(item({ ok: false }))))).toBe(true)
      expect(spans.map((s) => [s.name, s.parentId, s.kind, s.failed, s.attributes.get("candor.outbox.kind")])).toEqual([
        ["candor.worker.relay", consumeOf(7).spanId, "producer", false, "event"],
        ["candor.worker.relay", undefined, "producer", true, "event"]
      ])
    })
  )

  it("without tracing the handler is the one given", () => {
    const handle = (_: OutboxItem) => Effect.void
    expect(tracedHandler(undefined, "event", handle)).toBe(handle)
  })
})
