/**
 * An agent's checkpoints: the paged, filtered list (`Store.listCheckpoints`: flat first pages,
 * index-only deep offsets) and one by id. Whether the caller may read the agent is the caller's to check.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { NotFound } from "../adapters/http/ApiErrors.js"
import { type CheckpointQuery, Store } from "../adapters/store/Store.js"

export const make = Effect.gen(function* () {
  const store = yield* Store

  /** A page of the agent's checkpoints, with the total of the filtered set. */
  const list = (query: CheckpointQuery) =>
    Effect.map(store.listCheckpoints(query), (page) => ({
      checkpoints: page.items,
      total: page.total,
      limit: query.limit,
      offset: query.offset
    }))

  /** One of the agent's checkpoints. */
  const get = (agentId: string, checkpointId: string) =>
    Effect.flatMap(store.getCheckpoint(checkpointId), (checkpoint) =>
      // A checkpoint of another agent is not found under this one, whoever may see it.
      checkpoint === undefined || checkpoint.agent_id !== agentId
        ? Effect.fail(new NotFound({ error: `checkpoint ${checkpointId} not found for agent ${agentId}` }))
        : Effect.succeed(checkpoint)
    )

  return { list, get }
})

export class Checkpoints extends Context.Tag("candor/services/Checkpoints")<
  Checkpoints,
  Effect.Effect.Success<typeof make>
>() {}

export const layer = Layer.effect(Checkpoints, make)
