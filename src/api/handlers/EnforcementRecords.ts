/**
 * An agent's enforcement records: the paged, filtered list, for whoever may read the agent (Member
 * and up), through the Enforcement service (services/Enforcement.ts).
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { Enforcement } from "../../../services/Enforcement.js"
import { CandorApi } from "../Api.js"
import { readAgent } from "./AgentAccess.js"

export const EnforcementRecordsLive = HttpApiBuilder.group(CandorApi, "enforcementRecords", (handlers) =>
  Effect.map(Enforcement, (enforcement) =>
    handlers.handle("listEnforcementRecords", ({ path, urlParams }) =>
      Effect.zipRight(
        readAgent(path.agent_id),
        enforcement.records({
          agentId: path.agent_id,
          kind: urlParams.kind,
          from: urlParams.from,
          to: urlParams.to,
          limit: urlParams.limit,
          offset: urlParams.offset
        })
      )
    )
  )
)
