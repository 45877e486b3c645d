/**
 * Telling the gateways and workers an agent's conscience values changed: its values are resolved
 * again from the store (core/ConscienceResolution.ts, as the workers resolve them) and the resolved
 * list is written to `AgentState`, whose update also makes the workers drop the agent's cached
 * context. Called after the change is committed; a `BusError` leaves it stored, and the handler
 * answers 503 (`gatewaysUnreachable`) so the client sends it again.
 */
import * as Effect from "effect/Effect"
import { AgentState } from "../adapters/bus/AgentState.js"
import { resolvedConscienceOf } from "../adapters/store/OrgConscienceRepo.js"
import { Store } from "../adapters/store/Store.js"

/** Agents pushed at once: one KV read and compare-and-set each on NATS. */
const PUSH_CONCURRENCY = 8

export const pushResolvedConscience = (agentIds: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const store = yield* Store
    const state = yield* AgentState
    yield* Effect.forEach(
      agentIds,
      (agentId) =>
        Effect.flatMap(resolvedConscienceOf(store, agentId), (resolved) =>
          state.update(agentId, { conscienceValues: resolved.values })
        ),
      { concurrency: PUSH_CONCURRENCY, discard: true }
    )
  })
