/** GET /v1/integrity/{agent_id}: trace verification counts, and their ratio as the score. */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { AgentQueries } from "../../../adapters/store/AgentQueries.js"
import { CandorApi } from "../Api.js"
import { readAgent } from "./AgentAccess.js"
import { internal } from "./Access.js"

export const IntegrityLive = HttpApiBuilder.group(CandorApi, "integrity", (handlers) =>
  handlers.handle("getIntegrity", ({ path }) =>
    Effect.gen(function* () {
      yield* readAgent(path.agent_id)
      const counts = yield* (yield* AgentQueries).traceCounts(path.agent_id)
      const verified = counts.total - counts.violating
      return {
        agent_id: path.agent_id,
        total_traces: counts.total,
        verified_traces: verified,
        violation_count: counts.violations,
        // Nothing recorded is nothing inconsistent: a new agent starts at 1.
        integrity_score: counts.total === 0 ? 1 : verified / counts.total
      }
    }).pipe(Effect.catchTag("StoreError", internal))
  )
)
