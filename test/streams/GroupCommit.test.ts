/**
 * The group commit on a recording `commitBatch`: batches waiting together go in one call, a merged
 * conflict is split so only the batch that lost its race sees it, so is a failure while the database
 * answers; a failure while it is unreachable reaches every batch of its group, and a group stops
 * growing at `maxInputs`.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as TestClock from "effect/TestClock"
import { type CommitInput, type CommitResult, StoreError } from "../../adapters/store/Store.js"
import { type Commit, makeGroupCommit } from "../../streams/GroupCommit.js"
import { fresh, makeInputs } from "../adapters/store/Fixtures.js"

const batchOf = (agentId: string, count = 1): ReadonlyArray<CommitInput> =>
  makeInputs(agentId, fresh(agentId), count).inputs
const agentsOf = (inputs: ReadonlyArray<CommitInput>) => [...new Set(inputs.map((input) => input.checkpoint.agent_id))]

/**
 * A `commitBatch` that records the agents of each call, holds the first call until `release`, and
 * answers with `answer` (by default: committed).
 */
const recording = (
  answer: (inputs: ReadonlyArray<CommitInput>) => Effect.Effect<CommitResult, StoreError> = () =>
    Effect.succeed({ _tag: "Committed" })
) =>
  Effect.gen(function* () {
    const calls: Array<ReadonlyArray<string>> = []
    const release = yield* Deferred.make<void>()
    const commit: Commit = (inputs) =>
      Effect.suspend(() => {
        calls.push(agentsOf(inputs))
        return calls.length === 1 ? Effect.zipRight(Deferred.await(release), answer(inputs)) : answer(inputs)
      })
    return { calls, commit, release: Deferred.succeed(release, undefined) }
  })

/** Forks `submit` for each batch once the first call is held, so the others queue behind it. */
const submitBehindFirst = (
  group: Commit,
  batches: ReadonlyArray<ReadonlyArray<CommitInput>>,
  calls: ReadonlyArray<unknown>
) =>
  Effect.gen(function* () {
    const first = yield* Effect.fork(group(batches[0]!))
    while (calls.length === 0) yield* Effect.yieldNow()
    const rest = yield* Effect.forEach(batches.slice(1), (batch) => Effect.fork(group(batch)))
    // A fork has queued its batch once it is suspended, waiting for its answer.
    for (const fiber of rest) {
      while ((yield* Fiber.status(fiber))._tag !== "Suspended") yield* Effect.yieldNow()
    }
    return [first, ...rest]
  })

describe("GroupCommit", () => {
  it.scoped("with gatherMs, a lone small batch waits that long for others to share its call", () =>
    Effect.gen(function* () {
      const calls: Array<ReadonlyArray<string>> = []
      const commit: Commit = (inputs) =>
        Effect.sync(() => void calls.push(agentsOf(inputs))).pipe(Effect.as({ _tag: "Committed" } as const))
      const group = yield* makeGroupCommit(commit, { concurrency: 1, maxInputs: 1_000, gatherMs: 5, gatherInputs: 2 })
      const first = yield* Effect.fork(group(batchOf("gc-g1")))
      while ((yield* Fiber.status(first))._tag !== "Suspended") yield* Effect.yieldNow()
      const second = yield* Effect.fork(group(batchOf("gc-g2")))
      while ((yield* Fiber.status(second))._tag !== "Suspended") yield* Effect.yieldNow()
      expect(calls).toEqual([])
      yield* TestClock.adjust("5 millis")
      yield* Fiber.join(first)
      yield* Fiber.join(second)
      expect(calls).toEqual([["gc-g1", "gc-g2"]])
      // Enough inputs waiting (here: 2 at once): committed without waiting.
      const both = yield* Effect.fork(group([...batchOf("gc-g3"), ...batchOf("gc-g4")]))
      yield* Fiber.join(both)
      expect(calls).toEqual([
        ["gc-g1", "gc-g2"],
        ["gc-g3", "gc-g4"]
      ])
    })
  )

  it.scoped("commits the batches that waited together in one call", () =>
    Effect.gen(function* () {
      const { calls, commit, release } = yield* recording()
      const group = yield* makeGroupCommit(commit, { concurrency: 1, maxInputs: 1_000 })
      const batches = ["a", "b", "c", "d"].map((agent) => batchOf(`gc-${agent}`, 2))
      const fibers = yield* submitBehindFirst(group, batches, calls)
      yield* release
      const results = yield* Fiber.joinAll(fibers)
      expect(results).toEqual(batches.map(() => ({ _tag: "Committed" })))
      expect(calls).toEqual([["gc-a"], ["gc-b", "gc-c", "gc-d"]])
      expect(yield* group([])).toEqual({ _tag: "Committed" })
      expect(calls).toHaveLength(2)
    })
  )

  it.scoped("splits a merged conflict: only the batch that lost its race sees it", () =>
    Effect.gen(function* () {
      const loser = "gc-loser"
      const { calls, commit, release } = yield* recording((inputs) =>
        Effect.succeed(
          agentsOf(inputs).includes(loser) ? { _tag: "Conflict", agentIds: [loser] } : { _tag: "Committed" }
        )
      )
      const group = yield* makeGroupCommit(commit, { concurrency: 1, maxInputs: 1_000 })
      const batches = [batchOf("gc-first"), batchOf("gc-x"), batchOf(loser), batchOf("gc-y")]
      const fibers = yield* submitBehindFirst(group, batches, calls)
      yield* release
      const results = yield* Fiber.joinAll(fibers)
      expect(results).toEqual([
        { _tag: "Committed" },
        { _tag: "Committed" },
        { _tag: "Conflict", agentIds: [loser] },
        { _tag: "Committed" }
      ])
      // The merged call, then each of its batches alone.
      expect(calls).toEqual([["gc-first"], ["gc-x", loser, "gc-y"], ["gc-x"], [loser], ["gc-y"]])
    })
  )

  it.scoped("fails every batch of a group whose commit failed while the database was unreachable", () =>
    Effect.gen(function* () {
      const { calls, commit, release } = yield* recording((inputs) =>
        agentsOf(inputs).includes("gc-first")
          ? Effect.succeed({ _tag: "Committed" })
          : Effect.fail(new StoreError({ operation: "commitBatch", cause: "connection lost" }))
      )
      const unreachable = Effect.fail(new StoreError({ operation: "ping", cause: "connection refused" }))
      const group = yield* makeGroupCommit(commit, { concurrency: 1, maxInputs: 1_000 }, unreachable)
      const fibers = yield* submitBehindFirst(group, [batchOf("gc-first"), batchOf("gc-p"), batchOf("gc-q")], calls)
      yield* release
      const results = yield* Effect.forEach(fibers, (fiber) => Effect.either(Fiber.join(fiber)))
      expect(results.map((result) => result._tag)).toEqual(["Right", "Left", "Left"])
      expect(calls).toEqual([["gc-first"], ["gc-p", "gc-q"]])
    })
  )

  it.scoped("splits a merged failure while the database answers: only the refused batch fails", () =>
    Effect.gen(function* () {
      const poison = "gc-poison"
      const { calls, commit, release } = yield* recording((inputs) =>
        agentsOf(inputs).includes(poison)
          ? Effect.fail(new StoreError({ operation: "commitBatch", cause: "invalid input" }))
          : Effect.succeed({ _tag: "Committed" })
      )
      const group = yield* makeGroupCommit(commit, { concurrency: 1, maxInputs: 1_000 }, Effect.void)
      const fibers = yield* submitBehindFirst(
        group,
        [batchOf("gc-first"), batchOf("gc-p"), batchOf(poison), batchOf("gc-q")],
        calls
      )
      yield* release
      const results = yield* Effect.forEach(fibers, (fiber) => Effect.either(Fiber.join(fiber)))
      expect(results.map((result) => result._tag)).toEqual(["Right", "Right", "Left", "Right"])
      expect(calls).toEqual([["gc-first"], ["gc-p", poison, "gc-q"], ["gc-p"], [poison], ["gc-q"]])
    })
  )

  it.scoped("stops adding batches to a group at maxInputs", () =>
    Effect.gen(function* () {
      const { calls, commit, release } = yield* recording()
      const group = yield* makeGroupCommit(commit, { concurrency: 1, maxInputs: 4 })
      const batches = ["first", "a", "b", "c", "d"].map((agent) => batchOf(`gc-${agent}`, 2))
      const fibers = yield* submitBehindFirst(group, batches, calls)
      yield* release
      yield* Fiber.joinAll(fibers)
      expect(calls).toEqual([["gc-first"], ["gc-a", "gc-b"], ["gc-c", "gc-d"]])
    })
  )

  it.scoped("runs `concurrency` commits at once", () =>
    Effect.gen(function* () {
      let running = 0
      let most = 0
      const gate = yield* Deferred.make<void>()
      const commit: Commit = () =>
        Effect.acquireUseRelease(
          Effect.sync(() => (most = Math.max(most, ++running))),
          () => Effect.as(Deferred.await(gate), { _tag: "Committed" } as const),
          () => Effect.sync(() => running--)
        )
      const group = yield* makeGroupCommit(commit, { concurrency: 2, maxInputs: 1 })
      const fibers = yield* Effect.forEach(["a", "b", "c"], (agent) => Effect.fork(group(batchOf(`gc-${agent}`))))
      while (running < 2) yield* Effect.yieldNow()
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.joinAll(fibers)
      expect(most).toBe(2)
    })
  )
})
