/**
 * What every agent-data handler does first: ask `AccessControl` whether the caller may read or write
 * the agent (404 for an agent it may not see, 403 for a write it may not make, or any write during
 * impersonation). A store failure goes through to HttpApi, which answers it (adapters/http/StoreFailure.ts).
 */
import * as Effect from "effect/Effect"
import { AccessControl } from "../../../adapters/auth/AccessControl.js"
import { CurrentPrincipal } from "../../../adapters/auth/Principal.js"

/** The caller may read the agent's data. */
export const readAgent = (agentId: string) =>
  Effect.gen(function* () {
    const principal = yield* CurrentPrincipal
    yield* (yield* AccessControl).agent(principal, agentId, "read")
  })

/** The caller may change the agent's data (and is not in an impersonation session). */
export const writeAgent = (agentId: string) =>
  Effect.gen(function* () {
    const principal = yield* CurrentPrincipal
    const access = yield* AccessControl
    yield* access.agent(principal, agentId, "write")
    yield* access.write(principal)
  })
