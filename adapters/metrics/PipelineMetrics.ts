/**
 * Metrics of the pipeline's dead letters, in the process's Effect metrics so `/metrics` shows them
 * with the others: every gateway event the workers record as given up (streams/DeadLetters.ts), by
 * a cause from a fixed list (never the reason's text, which names fields), so an alert rule can fire
 * on any increase.
 */
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"

export type DeadLetterCause = "undecodable" | "delivery_limit" | "not_json" | "not_a_batch" | "other"

export const deadLetters = Metric.counter("candor_dead_letters_total", {
  description: "Gateway events the pipeline gave up on (dead letters recorded), by cause",
  incremental: true
})

export const countDeadLetter = (cause: DeadLetterCause): Effect.Effect<void> =>
  Metric.update(deadLetters.pipe(Metric.tagged("cause", cause)), 1)
