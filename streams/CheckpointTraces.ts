/**
 * The trace of each recently committed checkpoint, by its id, so that the outbox relays' spans
 * (streams/OutboxRelay.ts) join the request's trace: an outbox item is written in the commit's
 * transaction and sent moments later, almost always by the worker that committed it, whose memory is
 * the cheapest place to keep the link (nothing of the trace is stored with the item). An item sent
 * after a restart, or by another worker, starts a trace of its own. Only kept while tracing.
 */
import type * as Tracer from "effect/Tracer"
import type { SpanRecorder } from "../adapters/tracing/Tracing.js"

/** A worker's tracing, when the process exports traces. */
export interface WorkerTracing {
  readonly recorder: SpanRecorder
  /** Where each committed checkpoint's span is left for the outbox relays. */
  readonly checkpoints: CheckpointTraces
}

/** Checkpoints remembered at most: far more than the relays have in hand between a commit and its send. */
const KEPT = 10_000

export class CheckpointTraces {
  private readonly spans = new Map<string, Tracer.AnySpan>()

  /** `span` (the checkpoint's consume span) is the parent of what is sent for it. */
  note(checkpointId: string, span: Tracer.AnySpan): void {
    if (this.spans.size >= KEPT) {
      const oldest = this.spans.keys().next()
      if (oldest.done !== true) this.spans.delete(oldest.value)
    }
    this.spans.set(checkpointId, span)
  }

  /** The span of the checkpoint an outbox payload names (`checkpoint_id` at its top, or in its data, message or state). */
  parentOf(payload: unknown): Tracer.AnySpan | undefined {
    const id = checkpointIdOf(payload)
    return id === undefined ? undefined : this.spans.get(id)
  }
}

const NESTED = ["data", "message", "state", "payload"] as const

const checkpointIdOf = (payload: unknown): string | undefined => {
  if (typeof payload !== "object" || payload === null) return undefined
  const record = payload as Readonly<Record<string, unknown>>
  if (typeof record["checkpoint_id"] === "string") return record["checkpoint_id"]
  for (const key of NESTED) {
    const inner = record[key]
    if (typeof inner === "object" && inner !== null) {
      const id = (inner as Readonly<Record<string, unknown>>)["checkpoint_id"]
      if (typeof id === "string") return id
    }
  }
  return undefined
}
