/** An agent's enforcement records: the paged, filtered list, for whoever may read the agent (Member and up). */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { BadRequest } from "../../../adapters/http/ApiErrors.js"
import { Store } from "../../../adapters/store/Store.js"
import { CandorApi } from "../Api.js"
import { readAgent } from "./AgentAccess.js"
import { internal } from "./Access.js"

export const EnforcementRecordsLive = HttpApiBuilder.group(CandorApi, "enforcementRecords", (handlers) =>
  handlers.handle("listEnforcementRecords", ({ path, urlParams }) =>
    Effect.gen(function* () {
      yield* readAgent(path.agent_id)
      const { from, kind, limit, offset, to } = urlParams
      if (from !== undefined && to !== undefined && Date.parse(from) >= Date.parse(to))
        return yield* new BadRequest({ error: "from: must be before to" })
      const page = yield* (yield* Store).enforcementRecordPage({
        agentId: path.agent_id,
        kind,
        from,
        to,
        limit,
        offset
      })
      return { records: page.items, total: page.total, limit, offset }
    }).pipe(Effect.catchTag("StoreError", internal))
  )
)
