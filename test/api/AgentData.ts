/**
 * Seeding for the agent-data end-to-end tests: real attested checkpoints and traces committed
 * through the store the API runs on (test/adapters/store/Fixtures.ts), appended to the agent's log.
 * Verdicts cycle by log position: clear, review_needed, boundary_violation.
 */
import { expect } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { type CommitInput, Store } from "../../adapters/store/Store.js"
import type { AlignmentCard } from "../../core/schema/Card.js"
import type { APTrace } from "../../core/schema/Trace.js"
import { card, makeInputs, type InputOptions } from "../adapters/store/Fixtures.js"

/** Commits `count` more checkpoints (and their traces) of the agent, each passed through `edit`; returns them. */
export const seed = (
  agentId: string,
  count: number,
  edit: (input: CommitInput, index: number) => CommitInput = (input) => input,
  options: InputOptions = {}
) =>
  Effect.gen(function* () {
    const store = yield* Store
    const { inputs } = makeInputs(agentId, yield* store.loadLogState(agentId), count, options)
    const edited = inputs.map(edit)
    expect(yield* store.commitBatch(edited)).toEqual({ _tag: "Committed" })
    return edited
  })

/** The input with its trace changed. */
export const withTrace = (input: CommitInput, change: (trace: APTrace) => APTrace): CommitInput => ({
  ...input,
  trace: change(input.trace)
})

/** A valid card for the agent, bounding `reply` (the fixtures' action) and whatever else is given. */
export const cardFor = (
  agentId: string,
  cardId: string,
  boundedActions: ReadonlyArray<string> = ["reply"]
): AlignmentCard => {
  const base = card(agentId, 90, cardId)
  return { ...base, autonomy_envelope: { ...base.autonomy_envelope, bounded_actions: boundedActions } }
}
