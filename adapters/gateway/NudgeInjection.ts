/**
 * A pending nudge (the notice a violation leaves for the agent's next request: ResponseEvent.ts
 * `nudgeText`), injected into the request going out, once, and its enforcement record published
 * with the agent's events.
 */
import type * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { randomUUID } from "node:crypto"
import { nudgedRecord } from "../../core/EnforcementRecords.js"
import type { AgentState } from "../bus/AgentState.js"
import { encodeBody } from "./ContentCoding.js"
import type { EventPublisher } from "./EventPublisher.js"
import type { Exchange } from "./ExchangeContext.js"
import type { InspectedRequest } from "./Inspector.js"
import type { RequestBody } from "./RequestBody.js"
import { nudgeCheckpoint } from "./ResponseEvent.js"

/** The body to forward: the client's, or with the agent's pending nudge injected (and its record published). */
export const makeNudgeInjection =
  (state: Pick<AgentState["Type"], "takeNudge" | "setNudge">, publish: EventPublisher["publish"], clock: Clock.Clock) =>
  (request: InspectedRequest, body: RequestBody, exchange: Exchange): Effect.Effect<Uint8Array> =>
    Effect.gen(function* () {
      const { adapter, agentId, sessionId, settings } = exchange
      const nudge = yield* state.takeNudge(agentId)
      if (nudge === undefined) return request.body
      const json = yield* body.json
      const injected = json === undefined ? undefined : adapter.injectNudge(json, nudge)
      if (injected === undefined) {
        yield* state.setNudge(agentId, nudge) // not a request we can rewrite: keep it for the next
        return request.body
      }
      // An encoded body goes back upstream in its own coding, which its Content-Encoding still names.
      const forward = yield* encodeBody(body.coding, Buffer.from(JSON.stringify(injected)))
      yield* publish(agentId, {
        type: "gateway.enforcement",
        mode: settings.mode,
        record: nudgedRecord(
          { agentId, sessionId, mode: settings.mode, checkpointId: nudgeCheckpoint(nudge) },
          randomUUID(),
          new Date(clock.unsafeCurrentTimeMillis())
        )
      })
      return forward
    })
