/** GET /v1/traces/{trace_id}: found, and its agent visible to the caller; else 404 either way (services/Traces.ts). */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { traceNotFound, Traces } from "../../../services/Traces.js"
import { CandorApi } from "../Api.js"
import { readAgent } from "./AgentAccess.js"

export const TracesLive = HttpApiBuilder.group(CandorApi, "traces", (handlers) =>
  Effect.map(Traces, (traces) =>
    handlers.handle("getTrace", ({ path }) =>
      Effect.gen(function* () {
        const trace = yield* traces.get(path.trace_id)
        // The same answer as for a missing trace, so ids of other users' traces do not leak.
        yield* readAgent(trace.agent_id).pipe(Effect.catchTag("NotFound", () => traceNotFound(path.trace_id)))
        return trace
      })
    )
  )
)
