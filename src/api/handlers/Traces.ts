/** GET /v1/traces/{trace_id}: found, and its agent visible to the caller; else 404 either way. */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { NotFound } from "../../../adapters/http/ApiErrors.js"
import { Store } from "../../../adapters/store/Store.js"
import { CandorApi } from "../Api.js"
import { readAgent } from "./AgentAccess.js"
import { internal } from "./Access.js"

export const TracesLive = HttpApiBuilder.group(CandorApi, "traces", (handlers) =>
  handlers.handle("getTrace", ({ path }) =>
    Effect.gen(function* () {
      const notFound = new NotFound({ error: `trace ${path.trace_id} not found` })
      const trace = yield* (yield* Store).getTrace(path.trace_id)
      if (trace === undefined) return yield* notFound
      // The same answer as for a missing trace, so ids of other users' traces do not leak.
      yield* readAgent(trace.agent_id).pipe(Effect.catchTag("NotFound", () => notFound))
      return trace
    }).pipe(Effect.catchTag("StoreError", internal))
  )
)
