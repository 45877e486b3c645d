/**
 * An agent's Integrity Checkpoints (docs/api.md, "Agent data"): the paged list with
 * `limit` 1..1000 (default 20), `offset` >= 0 (default 0), `verdict` and `session_id` filters and
 * the `total` of the filtered set; and one checkpoint by id.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as Schema from "effect/Schema"
import { Authentication } from "../../../adapters/auth/Authentication.js"
import { InternalError, NotFound } from "../../../adapters/http/ApiErrors.js"
import { IntegrityCheckpoint, CheckpointList } from "../../../core/schema/Checkpoint.js"
import { AgentId, SessionId } from "../../../core/schema/Ids.js"
import { Verdict } from "../../../core/schema/Verdict.js"

/** An integer query parameter in `[min, max]`; the message is what the 400 says after the field name. */
export const IntParam = (min: number, max: number) =>
  Schema.NumberFromString.pipe(Schema.int(), Schema.between(min, max)).annotations({
    message: () => ({
      message:
        max === Number.MAX_SAFE_INTEGER
          ? `must be an integer of at least ${min}`
          : `must be an integer from ${min} to ${max}`,
      override: true
    })
  })

export const CHECKPOINT_LIMIT = { min: 1, max: 1000, default: 20 } as const

export const AgentPath = Schema.Struct({ agent_id: AgentId })

export const CheckpointListParams = Schema.Struct({
  limit: Schema.optionalWith(IntParam(CHECKPOINT_LIMIT.min, CHECKPOINT_LIMIT.max), {
    default: () => CHECKPOINT_LIMIT.default,
    exact: true
  }),
  offset: Schema.optionalWith(IntParam(0, Number.MAX_SAFE_INTEGER), { default: () => 0, exact: true }),
  verdict: Schema.optionalWith(Verdict, { exact: true }),
  session_id: Schema.optionalWith(SessionId, { exact: true })
})

export class CheckpointsApi extends HttpApiGroup.make("checkpoints")
  .add(
    HttpApiEndpoint.get("listCheckpoints", "/agents/:agent_id/checkpoints")
      .setPath(AgentPath)
      .setUrlParams(CheckpointListParams)
      .addSuccess(CheckpointList)
  )
  .add(
    HttpApiEndpoint.get("getCheckpoint", "/agents/:agent_id/checkpoints/:checkpoint_id")
      .setPath(Schema.Struct({ agent_id: AgentId, checkpoint_id: Schema.String }))
      .addSuccess(IntegrityCheckpoint)
  )
  .addError(NotFound)
  .addError(InternalError)
  .middleware(Authentication) {}
