/**
 * Teams' routes (docs/teams.md): each decodes, authorises and calls the Teams service
 * (services/Teams.ts), which runs the write. A team the caller may not see (unknown, or of an
 * organization it is not in) is a 404; Owner and Admin write, every member of the organization reads.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { actorOf, CurrentPrincipal } from "../../../adapters/auth/Principal.js"
import { type TeamAccess, TeamNotFound, Teams } from "../../../services/Teams.js"
import { CandorApi } from "../Api.js"
import { orgRole, requireOrgRole } from "./Access.js"

/** Owner and Admin of the organization write (never while impersonating); the actor is the caller. */
const writeAccess = (orgId: string) =>
  Effect.zipRight(requireOrgRole(orgId, "admin", true), Effect.map(CurrentPrincipal, actorOf))

/** What the routes' access checks may fail with, and need. */
type RouteAccess = TeamAccess<
  Effect.Effect.Error<ReturnType<typeof writeAccess>> | TeamNotFound,
  Effect.Effect.Context<ReturnType<typeof writeAccess>>
>

/** Access to one team: an organization the caller is not in hides the team (404, as for an unknown id). */
const teamAccess = (teamId: string): RouteAccess => ({
  read: (orgId: string) =>
    orgRole(orgId).pipe(
      Effect.asVoid,
      Effect.catchTag("NotFound", () => Effect.fail(TeamNotFound.of(teamId)))
    ),
  write: writeAccess
})

/** Access to an organization's teams: an organization the caller is not in is a 404 of its own. */
const orgAccess: RouteAccess = { read: (orgId) => Effect.asVoid(orgRole(orgId)), write: writeAccess }

/** The team, when the caller is a member of its organization; 404 otherwise, as for an unknown id. */
export const readTeam = (teamId: string) => Effect.flatMap(Teams, (teams) => teams.get(teamId, teamAccess(teamId)))

export const TeamsLive = HttpApiBuilder.group(CandorApi, "teams", (handlers) =>
  Effect.map(Teams, (teams) =>
    handlers
      .handle("createTeam", ({ payload }) => teams.create(payload, orgAccess))
      .handle("getTeam", ({ path }) => teams.get(path.team_id, teamAccess(path.team_id)))
      .handle("updateTeam", ({ path, payload }) => teams.update(path.team_id, payload, teamAccess(path.team_id)))
      .handle("archiveTeam", ({ path }) => teams.archive(path.team_id, teamAccess(path.team_id)))
      .handle("addTeamMembers", ({ path, payload }) =>
        teams.addMembers(path.team_id, payload.agent_ids, teamAccess(path.team_id))
      )
      .handle("removeTeamMember", ({ path }) =>
        teams.removeMember(path.team_id, path.agent_id, teamAccess(path.team_id))
      )
      .handle("teamRosterHistory", ({ path, urlParams }) =>
        teams
          .rosterHistory(path.team_id, urlParams.limit, urlParams.offset, teamAccess(path.team_id))
          .pipe(Effect.map((page) => ({ team_id: path.team_id, changes: page.items, total: page.total, ...urlParams })))
      )
      .handle("listOrgTeams", ({ path, urlParams }) =>
        teams.list(path.org_id, urlParams.status, urlParams.limit, urlParams.offset, orgAccess).pipe(
          Effect.map((page) => ({
            org_id: path.org_id,
            teams: page.items,
            total: page.total,
            limit: urlParams.limit,
            offset: urlParams.offset
          }))
        )
      )
      .handle("getTeamCard", ({ path }) => teams.activeCard(path.team_id, teamAccess(path.team_id)))
      .handle("putTeamCard", ({ path, payload }) =>
        teams.putCard(path.team_id, payload.card_json, payload.card_source ?? "manual", teamAccess(path.team_id))
      )
      .handle("deriveTeamCard", ({ path }) => teams.deriveCard(path.team_id, teamAccess(path.team_id)))
      .handle("teamCardHistory", ({ path, urlParams }) =>
        teams
          .cardHistory(path.team_id, urlParams.limit, urlParams.offset, teamAccess(path.team_id))
          .pipe(
            Effect.map((page) => ({ team_id: path.team_id, versions: page.items, total: page.total, ...urlParams }))
          )
      )
  )
)
