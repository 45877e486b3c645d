/**
 * What the routes that answer without credentials need to keep private agents private (SECURITY.md,
 * "Unauthenticated routes"; docs/reputation.md, "visibility"): an agent's visibility, and whether a
 * team holds a private agent. Whether the request's credential may see them anyway is the caller's
 * to decide (src/api/handlers/PublicAccess.ts).
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { ReputationRepo } from "../adapters/store/ReputationRepo.js"
import { TeamRepo } from "../adapters/store/TeamRepo.js"

export const make = Effect.gen(function* () {
  const reputation = yield* ReputationRepo
  const teams = yield* TeamRepo

  /** The agent's visibility (unlisted when unclaimed), or undefined when no such agent exists. */
  const visibility = (agentId: string) => reputation.visibility(agentId)

  /**
   * The organization of the team when it holds a private agent (its members may still see it);
   * undefined for a team that holds none, and for an unknown team (the route answers it as unknown).
   */
  const privateTeamOrg = (teamId: string) =>
    Effect.gen(function* () {
      const team = yield* teams.get(teamId)
      if (team === undefined) return undefined
      const found = yield* reputation.lookup(team.members.map((member) => member.agent_id))
      return [...found.values()].some((agent) => agent.visibility === "private") ? team.team.org_id : undefined
    })

  return { visibility, privateTeamOrg }
})

export class PublicAccess extends Context.Tag("candor/services/PublicAccess")<
  PublicAccess,
  Effect.Effect.Success<typeof make>
>() {}

export const layer = Layer.effect(PublicAccess, make)
