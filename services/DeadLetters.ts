/**
 * Reading dead letters: every one, or those naming an organization's agents (as claimed now), newest
 * recorded first. Reads only: the workers' recorder (streams/DeadLetters.ts) is the one writer.
 *
 * Who may read (the service-role key reads every one; an organization's Owner, or the service-role
 * key, reads the organization's) is the caller's to check.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { DeadLetterRepo, type DeadLetterQuery } from "../adapters/store/DeadLetterRepo.js"

export const make = Effect.gen(function* () {
  const repo = yield* DeadLetterRepo

  /** Every dead letter. */
  const page = (query: DeadLetterQuery) => repo.page(query)

  /** The dead letters naming the organization's agents. */
  const orgPage = (orgId: string, query: DeadLetterQuery) => repo.orgPage(orgId, query)

  return { page, orgPage }
})

export class DeadLetters extends Context.Tag("candor/services/DeadLetters")<
  DeadLetters,
  Effect.Effect.Success<typeof make>
>() {}

export const layer = Layer.effect(DeadLetters, make)
