/**
 * The actors' reads of the store (PGlite): an agent's context is read again within the usual five
 * minutes, but agents created together do not all refresh at the same moment; an agent whose
 * settings changed is read again before its next event; an agent the store has never seen costs no
 * replay of its history; an agent's AIP window in a session is rebuilt from its own checkpoints
 * there, never from another agent's that named the same session (issue 24).
 */
import { layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import { expect } from "vitest"
import * as SqlStore from "../../adapters/store/SqlStore.js"
import { Store } from "../../adapters/store/Store.js"
import { defaultActorsOptions, makeAgentActors, sessionKey } from "../../streams/AgentActors.js"
import { CONTEXT_TTL_MS } from "../../streams/AgentContext.js"
import { fresh, makeInputs } from "../adapters/store/Fixtures.js"
import * as SecretKeys from "../../adapters/keys/SecretKeys.js"
import { migratedPglite } from "../support/PgliteTemplate.js"

const Pglite = SqlStore.layer.pipe(Layer.provide(SecretKeys.layerEphemeral), Layer.provideMerge(migratedPglite))

/** The store, counting the reads the actors make by kind. */
const counting = Effect.map(Store, (store) => {
  const reads = { context: 0, history: 0 }
  const counted = Store.of({
    ...store,
    agentContextInputs: (agentId) =>
      Effect.zipRight(
        Effect.sync(() => void reads.context++),
        store.agentContextInputs(agentId)
      ),
    recentTraces: (agentId, limit) =>
      Effect.zipRight(
        Effect.sync(() => void reads.history++),
        store.recentTraces(agentId, limit)
      )
  })
  return { reads, counted }
})

layer(Pglite, { timeout: "60 seconds" })("AgentActors", (it) => {
  it.scoped("reads contexts again within the TTL, spread over its second half", () =>
    Effect.gen(function* () {
      const { counted, reads } = yield* counting
      const actors = yield* makeAgentActors(defaultActorsOptions).pipe(Effect.provideService(Store, counted))
      const agents = Array.from({ length: 200 }, (_, i) => `agt-ttl-${i}`)
      yield* actors.getAll(agents, 0)
      expect(reads).toEqual({ context: 200, history: 0 })
      // Nothing is refreshed in the first half of the TTL.
      yield* actors.getAll(agents, CONTEXT_TTL_MS / 2 - 1)
      expect(reads.context).toBe(200)
      // Some, not all, by three quarters of it.
      yield* actors.getAll(agents, (CONTEXT_TTL_MS * 3) / 4)
      expect(reads.context - 200).toBeGreaterThan(40)
      expect(reads.context - 200).toBeLessThan(160)
      // Every one by the TTL, and each once.
      yield* actors.getAll(agents, CONTEXT_TTL_MS)
      expect(reads.context).toBe(400)
    })
  )

  it.scoped("reads the context of an agent whose settings changed again, before its next event, and only its", () =>
    Effect.gen(function* () {
      const { counted, reads } = yield* counting
      const changes = yield* Queue.unbounded<string>()
      const actors = yield* makeAgentActors(defaultActorsOptions, changes).pipe(Effect.provideService(Store, counted))
      const agents = ["agt-changed", "agt-unchanged"]
      yield* actors.getAll(agents, 0)
      expect(reads.context).toBe(2)
      // A change of an agent not in memory is nothing to drop (it is read when it first comes).
      yield* Queue.offerAll(changes, ["agt-changed", "agt-elsewhere"])
      yield* actors.getAll(agents, 1)
      expect(reads.context).toBe(3)
      yield* actors.getAll(agents, 2)
      expect(reads.context).toBe(3)
      yield* Queue.offer(changes, "agt-changed")
      yield* actors.get("agt-changed", 3)
      expect(reads.context).toBe(4)
    })
  )

  it.scoped("replays the history of an agent the store has seen, and only then", () =>
    Effect.gen(function* () {
      const { counted, reads } = yield* counting
      const seen = "agt-replay-seen"
      expect(yield* counted.commitBatch(makeInputs(seen, fresh(seen), 3).inputs)).toEqual({ _tag: "Committed" })
      const actors = yield* makeAgentActors(defaultActorsOptions).pipe(Effect.provideService(Store, counted))
      const states = yield* actors.getAll([seen, "agt-replay-new"], 0)
      expect(reads.history).toBe(1)
      expect(states.get(seen)?.log.head.position).toBe(3)
      expect(states.get("agt-replay-new")?.log.head.position).toBe(0)
    })
  )

  it.scoped(
    "rebuilds an agent's session window from its own checkpoints, not another agent's in the same session",
    () =>
      Effect.gen(function* () {
        const store = yield* Store
        const [x, y] = ["agt-window-x", "agt-window-y"]
        const session = "ses-window-shared"
        const xs = makeInputs(x, fresh(x), 2, { sessionId: () => session })
        const ys = makeInputs(y, fresh(y), 3, { sessionId: () => session })
        expect(yield* store.commitBatch([...xs.inputs, ...ys.inputs])).toEqual({ _tag: "Committed" })
        // A worker that did not see them (a restart, a rebalance): the windows come from the store.
        const actors = yield* makeAgentActors(defaultActorsOptions)
        const idsIn = (window: ReadonlyArray<{ readonly checkpoint_id: string }>) => window.map((e) => e.checkpoint_id)
        const windowOfX = yield* actors.session(x, session, 0)
        expect(idsIn(windowOfX.window)).toEqual(xs.inputs.map((input) => input.checkpoint.checkpoint_id))
        const both = yield* actors.sessionAll(
          [
            { agent_id: x, session_id: session },
            { agent_id: y, session_id: session }
          ],
          0
        )
        expect(idsIn(both.get(sessionKey(y, session))!.window)).toEqual(
          ys.inputs.map((input) => input.checkpoint.checkpoint_id)
        )
        expect(both.get(sessionKey(x, session))).toBe(windowOfX)
      })
  )
})
