/** GET /v1/integrity/{agent_id}: trace verification counts, and their ratio as the score (services/Integrity.ts). */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { Integrity } from "../../../services/Integrity.js"
import { CandorApi } from "../Api.js"
import { readAgent } from "./AgentAccess.js"

export const IntegrityLive = HttpApiBuilder.group(CandorApi, "integrity", (handlers) =>
  Effect.map(Integrity, (integrity) =>
    handlers.handle("getIntegrity", ({ path }) =>
      Effect.zipRight(readAgent(path.agent_id), integrity.of(path.agent_id))
    )
  )
)
