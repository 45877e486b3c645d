/**
 * Trust edges' routes (docs/trust.md): whoever may write an agent declares and withdraws its edges,
 * whoever may read it lists them, through the TrustEdges service (services/TrustEdges.ts). A target
 * is one the caller can read, or one whose reputation is not private.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { AccessControl } from "../../../adapters/auth/AccessControl.js"
import { actorOf, CurrentPrincipal } from "../../../adapters/auth/Principal.js"
import { TrustEdges } from "../../../services/TrustEdges.js"
import { CandorApi } from "../Api.js"
import { readAgent, writeAgent } from "./AgentAccess.js"

/** Whether the caller may read the agent (an agent it may not see is no refusal here: its score may be public). */
const readable = (agentId: string) =>
  Effect.gen(function* () {
    const principal = yield* CurrentPrincipal
    return yield* (yield* AccessControl).agent(principal, agentId, "read").pipe(
      Effect.as(true),
      Effect.catchTag("NotFound", () => Effect.succeed(false))
    )
  })

export const TrustEdgesLive = HttpApiBuilder.group(CandorApi, "trustEdges", (handlers) =>
  Effect.map(TrustEdges, (edges) =>
    handlers
      .handle("createTrustEdge", ({ path, payload }) =>
        Effect.gen(function* () {
          yield* writeAgent(path.agent_id)
          const actor = actorOf(yield* CurrentPrincipal)
          return yield* edges.create(path.agent_id, payload, actor, readable)
        })
      )
      .handle("listTrustEdges", ({ path, urlParams }) =>
        Effect.zipRight(
          readAgent(path.agent_id),
          edges.list(path.agent_id, urlParams.direction, { limit: urlParams.limit, offset: urlParams.offset })
        )
      )
      .handle("deleteTrustEdge", ({ path }) =>
        Effect.gen(function* () {
          yield* writeAgent(path.agent_id)
          const actor = actorOf(yield* CurrentPrincipal)
          return yield* edges.remove(path.agent_id, path.edge_id, actor)
        })
      )
  )
)
