/**
 * An agent's reputation as others see it: its visibility (public, unlisted, private). A change is
 * stored with its `agent.visibility` entry in the agent's governance log in one transaction.
 *
 * Who may write the agent is the caller's to check; the actor it names is the one recorded.
 */
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { GovernanceLog } from "../adapters/store/GovernanceLog.js"
import { IdentityRepo } from "../adapters/store/identity/IdentityRepo.js"
import { StoreError } from "../adapters/store/Store.js"
import { transaction } from "../adapters/store/Transaction.js"
import { agentGovernanceLog } from "../core/Governance.js"
import type { Visibility } from "../core/schema/Reputation.js"

/** No such agent, or one not claimed (visibility belongs to the claim). */
export class ReputationNotFound extends Schema.TaggedError<ReputationNotFound>()(
  "ReputationNotFound",
  { error: Schema.String },
  HttpApiSchema.annotations({ status: 404 })
) {}

export const make = Effect.gen(function* () {
  const identity = yield* IdentityRepo
  const governance = yield* GovernanceLog
  const sql = yield* SqlClient.SqlClient

  /** Sets the agent's visibility, as `actor`. */
  const setVisibility = (agentId: string, visibility: Visibility, actor: string) =>
    transaction(
      sql,
      Effect.gen(function* () {
        const before = yield* identity.setVisibility(agentId, visibility)
        // Visibility belongs to the claim: an unclaimed agent (the service-role key sees them) has none to set.
        if (before === undefined)
          return yield* Effect.fail(new ReputationNotFound({ error: `agent ${agentId} not found` }))
        yield* governance.append(agentGovernanceLog(agentId), {
          action: "agent.visibility",
          actor,
          previous_state: { visibility: before },
          new_state: { visibility }
        })
      })
    ).pipe(
      Effect.catchTag("SqlError", (cause) => Effect.fail(new StoreError({ operation: "setVisibility", cause }))),
      Effect.as({ agent_id: agentId, visibility })
    )

  return { setVisibility }
})

export class Reputation extends Context.Tag("candor/services/Reputation")<
  Reputation,
  Effect.Effect.Success<typeof make>
>() {}

export const layer = Layer.effect(Reputation, make)
