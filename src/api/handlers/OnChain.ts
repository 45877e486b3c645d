/**
 * The on-chain routes (groups/OnChain.ts, docs/on-chain.md), through the OnChain service
 * (services/OnChain.ts), which builds, sends and reads the batches. This file decides who may do what.
 *
 * Access: anchoring or publishing needs write access to every agent (404 for one the caller may not
 * see, 403 for one it may only read); the default set of POST anchor-root is every agent the caller
 * may write that has a log. An anchor is readable by whoever may read all of its agents, and is
 * otherwise "not found" like an unknown id. The service-role key's sends are not limited.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { AccessControl } from "../../../adapters/auth/AccessControl.js"
import { actorOf, CurrentPrincipal } from "../../../adapters/auth/Principal.js"
import type { ChainError } from "../../../adapters/chain/AnchorChainClient.js"
import { Forbidden, ServiceUnavailable } from "../../../adapters/http/ApiErrors.js"
import type { Readers } from "../../../adapters/store/AnchorRepo.js"
import { OnChain } from "../../../services/OnChain.js"
import { CandorApi } from "../Api.js"
import { readAgent, writeAgent } from "./AgentAccess.js"

const unavailable = (error: ChainError) =>
  Effect.fail(
    new ServiceUnavailable({ error: `the chain could not be reached or refused the request: ${error.message}` })
  )

/** The agents the caller may write, of those it may see (POST anchor-root without agent_ids); 403 when none. */
const writableAgents = Effect.gen(function* () {
  const principal = yield* CurrentPrincipal
  const access = yield* AccessControl
  yield* access.write(principal)
  const visible = yield* access.visibleAgents(principal)
  const writable: Array<string> = []
  for (const agentId of visible)
    if ((yield* Effect.either(access.agent(principal, agentId, "write")))._tag === "Right") writable.push(agentId)
  if (visible.length > 0 && writable.length === 0)
    return yield* new Forbidden({ error: "anchoring needs the admin role on the agents; you may only read them" })
  return writable
})

/** The caller of an anchoring or a publication, as the service takes it. */
const caller = Effect.map(CurrentPrincipal, (principal) => ({
  writableAgents,
  writeAgent,
  limited: principal.kind !== "service",
  actor: actorOf(principal)
}))

/** Whose anchors the caller may read: all (service-role key), else the agents it may see. */
const readers = Effect.gen(function* () {
  const principal = yield* CurrentPrincipal
  if (principal.kind === "service") return "all" as Readers
  return (yield* (yield* AccessControl).visibleAgents(principal)) as Readers
})

export const OnChainLive = HttpApiBuilder.group(CandorApi, "onChain", (handlers) =>
  Effect.map(OnChain, (onChain) =>
    handlers
      .handle("anchorRoot", ({ payload }) =>
        Effect.flatMap(caller, (who) => onChain.anchorRoot(payload.chain, payload.agent_ids, who)).pipe(
          Effect.catchTag("ChainError", unavailable)
        )
      )
      .handle("publishScores", ({ payload }) =>
        Effect.flatMap(caller, (who) => onChain.publishScores(payload.chain, payload.agent_ids, who)).pipe(
          Effect.catchTag("ChainError", unavailable)
        )
      )
      .handle("verifyAnchorProof", ({ urlParams }) =>
        onChain
          .verifyProof(urlParams.anchor_id, urlParams.agent_id, readers, readAgent(urlParams.agent_id))
          .pipe(Effect.catchTag("ChainError", unavailable))
      )
      .handle("getAnchorStatus", ({ path }) =>
        onChain.status(path.anchor_id, readers).pipe(Effect.catchTag("ChainError", unavailable))
      )
      .handle("getAnchorHistory", ({ urlParams }) =>
        Effect.gen(function* () {
          if (urlParams.agent_id !== undefined) yield* readAgent(urlParams.agent_id)
          return yield* onChain.history({
            agentId: urlParams.agent_id,
            readers: yield* readers,
            limit: urlParams.limit,
            cursor: urlParams.cursor
          })
        })
      )
  )
)
