/**
 * Drift: the AAP analysis of the agent's newest traces, computed on request, and the stored AIP
 * alerts, for whoever may read the agent, through the Drift service (services/Drift.ts).
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { Drift } from "../../../services/Drift.js"
import { CandorApi } from "../Api.js"
import { readAgent } from "./AgentAccess.js"

export const DriftLive = HttpApiBuilder.group(CandorApi, "drift", (handlers) =>
  Effect.map(Drift, (drift) =>
    handlers
      .handle("getAapDrift", ({ path }) => Effect.zipRight(readAgent(path.agent_id), drift.aap(path.agent_id)))
      .handle("getAipDriftAlerts", ({ path }) =>
        Effect.zipRight(readAgent(path.agent_id), drift.aipAlerts(path.agent_id))
      )
  )
)
