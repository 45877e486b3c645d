/**
 * Teams. Every write is one transaction, under the organization's row lock (names, member limits
 * and card versions are checked on what is committed): the change, its roster history rows, its
 * entry on the organization's governance log (`team.*`, with the team card's hash when a card is
 * put) and its webhook events in the outbox. A team the caller may not see (unknown, or of an
 * organization it is not in) is a 404; an archived team is read-only (409 on every write but a
 * repeated archive, which answers the team as it is).
 *
 * Once a roster change or a team card PUT has committed, the team's reputation is recomputed
 * automatically (services/TeamReputation.ts, coalesced to once an hour); a failed recomputation is
 * logged and never fails the write, which is already stored.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { randomUUID } from "node:crypto"
import { actorOf, CurrentPrincipal } from "../../../adapters/auth/Principal.js"
import { BadRequest, Conflict, Forbidden, NotFound } from "../../../adapters/http/ApiErrors.js"
import { GovernanceLog } from "../../../adapters/store/GovernanceLog.js"
import { Store, StoreError } from "../../../adapters/store/Store.js"
import { type RosterChangeWritten, TeamRepo } from "../../../adapters/store/TeamRepo.js"
import { transaction } from "../../../adapters/store/Transaction.js"
import { teamCardHash } from "../../../core/Commitments.js"
import { teamArchivedEvent, teamCardUpdatedEvent, teamCreatedEvent, teamMemberEvent } from "../../../core/EventData.js"
import { type EventOccurrence, newEnvelope } from "../../../core/Events.js"
import { orgGovernanceLog } from "../../../core/Governance.js"
import type { GovernanceAction } from "../../../core/schema/Governance.js"
import {
  TEAM_ID_PREFIX,
  TEAM_MAX_MEMBERS,
  TEAM_METADATA_MAX_BYTES,
  TEAM_MIN_MEMBERS,
  type TeamWithMembers
} from "../../../core/schema/Team.js"
import { TEAM_CARD_MAX_BYTES } from "../../../core/schema/TeamCard.js"
import { deriveTeamCard, MIN_MEMBERS_WITH_CARDS } from "../../../core/TeamCardDerivation.js"
import { eventDraft } from "../../../adapters/store/EventOutbox.js"
import { recomputeQuietly } from "../../../services/TeamReputation.js"
import { CandorApi } from "../Api.js"
import { internal, orgRole, requireOrgRole } from "./Access.js"

const teamNotFound = (teamId: string) => new NotFound({ error: `team ${teamId} not found` })
const archived = (teamId: string) => new Conflict({ error: `team ${teamId} is archived` })
const nameTaken = (name: string) =>
  new Conflict({ error: `an active team named ${JSON.stringify(name)} already exists in this organization` })

const jsonBytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value), "utf8")

const checkMetadata = (metadata: unknown) =>
  metadata !== undefined && jsonBytes(metadata) > TEAM_METADATA_MAX_BYTES
    ? Effect.fail(new BadRequest({ error: `metadata: must be at most ${TEAM_METADATA_MAX_BYTES} bytes of JSON` }))
    : Effect.void

/** 400 naming the ids given more than once. */
const checkDistinct = (ids: ReadonlyArray<string>) => {
  const seen = new Set<string>()
  const repeated = new Set(ids.filter((id) => seen.has(id) || (seen.add(id), false)))
  return repeated.size === 0
    ? Effect.void
    : Effect.fail(new BadRequest({ error: `agent_ids: duplicated ids: ${[...repeated].join(", ")}` }))
}

/**
 * 400 naming every id that is not an agent of the organization: one of another organization, one
 * the caller may not see and one that does not exist are reported alike (nothing leaks).
 */
const checkAgentsOfOrg = (orgId: string, ids: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const known = new Set(yield* (yield* TeamRepo).agentsOfOrg(orgId, ids))
    const foreign = ids.filter((id) => !known.has(id))
    if (foreign.length > 0) {
      return yield* Effect.fail(
        new BadRequest({ error: `agent_ids: not agents of organization ${orgId}: ${foreign.join(", ")}` })
      )
    }
  })

/** The team, when the caller is a member of its organization; 404 otherwise, as for an unknown id. */
export const readTeam = (teamId: string) =>
  Effect.gen(function* () {
    const found = yield* (yield* TeamRepo).get(teamId)
    if (found === undefined) return yield* Effect.fail(teamNotFound(teamId))
    yield* orgRole(found.team.org_id).pipe(Effect.catchTag("NotFound", () => Effect.fail(teamNotFound(teamId))))
    return found
  })

/** The small state a governance entry keeps of a team: ids, name, status, members (no metadata). */
const governanceState = (found: TeamWithMembers) => ({
  team_id: found.team.team_id,
  name: found.team.name,
  status: found.team.status,
  agent_ids: found.members.map((member) => member.agent_id)
})

interface Done<A> {
  readonly result: A
  readonly action: GovernanceAction
  readonly previous_state: unknown
  readonly new_state: unknown
  readonly hashes?: { readonly card_hash: string }
  readonly events: ReadonlyArray<EventOccurrence>
}

type WriteError = BadRequest | Conflict | NotFound | Forbidden | StoreError

/**
 * One write of the organization's teams, in one transaction under the organization's row lock:
 * `change` decides on what is committed; its governance entry and events are stored with it.
 * `change` answers `{unchanged}` for a request that changes nothing (a repeated archive, members
 * all already in the team): then no entry and no event are written.
 */
const write = <A, R>(
  orgId: string,
  change: (actor: string, at: string) => Effect.Effect<Done<A> | { readonly unchanged: A }, WriteError, R>
) =>
  Effect.gen(function* () {
    const actor = actorOf(yield* CurrentPrincipal)
    const at = new Date(yield* Clock.currentTimeMillis).toISOString()
    const repo = yield* TeamRepo
    const store = yield* Store
    const governance = yield* GovernanceLog
    const sql = yield* SqlClient.SqlClient
    return yield* transaction(
      sql,
      Effect.gen(function* () {
        if (!(yield* repo.lockOrg(orgId))) {
          return yield* Effect.fail(new NotFound({ error: `organization ${orgId} not found` }))
        }
        const done = yield* change(actor, at)
        if ("unchanged" in done) return done.unchanged
        yield* governance.append(orgGovernanceLog(orgId), {
          action: done.action,
          actor,
          previous_state: done.previous_state,
          new_state: done.new_state,
          ...(done.hashes === undefined ? {} : { hashes: done.hashes })
        })
        if (done.events.length > 0) yield* store.enqueueOutbox(done.events.map((e) => eventDraft(newEnvelope(e))))
        return done.result
      })
    ).pipe(Effect.catchTag("SqlError", (cause) => Effect.fail(new StoreError({ operation: "teams", cause }))))
  })

/** A write of one existing team: 404 / 403 first, then the change on the team as committed (locked). */
const writeTeam = <A, R>(
  teamId: string,
  change: (
    current: TeamWithMembers,
    actor: string,
    at: string
  ) => Effect.Effect<Done<A> | { readonly unchanged: A }, WriteError, R>
) =>
  Effect.gen(function* () {
    const seen = yield* readTeam(teamId)
    yield* requireOrgRole(seen.team.org_id, "admin", true)
    const repo = yield* TeamRepo
    return yield* write(seen.team.org_id, (actor, at) =>
      Effect.gen(function* () {
        const current = yield* repo.lock(teamId)
        if (current === undefined) return yield* Effect.fail(teamNotFound(teamId))
        return yield* change(current, actor, at)
      })
    )
  })

const writable = (current: TeamWithMembers) =>
  current.team.status === "archived" ? Effect.fail(archived(current.team.team_id)) : Effect.void

const memberEvents = (
  type: "team.member_added" | "team.member_removed",
  team: TeamWithMembers["team"],
  changes: ReadonlyArray<RosterChangeWritten>,
  memberCount: number,
  actor: string,
  at: string
) =>
  changes.map((change) =>
    teamMemberEvent(
      type,
      {
        team_id: team.team_id,
        org_id: team.org_id,
        change_id: change.change_id,
        agent_id: change.agent_id,
        actor,
        member_count: memberCount
      },
      new Date(at)
    )
  )

export const TeamsLive = HttpApiBuilder.group(CandorApi, "teams", (handlers) =>
  handlers
    .handle("createTeam", ({ payload }) =>
      Effect.gen(function* () {
        yield* requireOrgRole(payload.org_id, "admin", true)
        yield* checkDistinct(payload.agent_ids)
        yield* checkMetadata(payload.metadata)
        const repo = yield* TeamRepo
        return yield* write(payload.org_id, (actor, at) =>
          Effect.gen(function* () {
            yield* checkAgentsOfOrg(payload.org_id, payload.agent_ids)
            if (yield* repo.nameTaken(payload.org_id, payload.name)) return yield* Effect.fail(nameTaken(payload.name))
            const teamId = `${TEAM_ID_PREFIX}${randomUUID()}`
            const team = {
              team_id: teamId,
              org_id: payload.org_id,
              name: payload.name,
              description: payload.description || null,
              metadata: payload.metadata ?? {}
            }
            yield* repo.create(team, payload.agent_ids, actor, at)
            const created = (yield* repo.get(teamId))!
            return {
              result: created,
              action: "team.create",
              previous_state: null,
              new_state: governanceState(created),
              events: [teamCreatedEvent(team, payload.agent_ids, new Date(at))]
            } satisfies Done<TeamWithMembers>
          })
        )
      }).pipe(Effect.catchTag("StoreError", internal))
    )
    .handle("getTeam", ({ path }) => readTeam(path.team_id).pipe(Effect.catchTag("StoreError", internal)))
    .handle("updateTeam", ({ path, payload }) =>
      Effect.gen(function* () {
        yield* checkMetadata(payload.metadata)
        const repo = yield* TeamRepo
        return yield* writeTeam(path.team_id, (current, _actor, at) =>
          Effect.gen(function* () {
            yield* writable(current)
            const fields = {
              name: payload.name ?? current.team.name,
              description: payload.description === undefined ? current.team.description : payload.description || null,
              metadata: payload.metadata ?? current.team.metadata
            }
            if (
              fields.name.toLowerCase() !== current.team.name.toLowerCase() &&
              (yield* repo.nameTaken(current.team.org_id, fields.name, current.team.team_id))
            ) {
              return yield* Effect.fail(nameTaken(fields.name))
            }
            yield* repo.update(current.team.team_id, fields, at)
            const updated = (yield* repo.get(current.team.team_id))!
            return {
              result: updated,
              action: "team.update",
              previous_state: { ...governanceState(current), description: current.team.description },
              new_state: { ...governanceState(updated), description: updated.team.description },
              events: []
            } satisfies Done<TeamWithMembers>
          })
        )
      }).pipe(Effect.catchTag("StoreError", internal))
    )
    .handle("archiveTeam", ({ path }) =>
      Effect.gen(function* () {
        const repo = yield* TeamRepo
        return yield* writeTeam(path.team_id, (current, _actor, at) =>
          Effect.gen(function* () {
            if (current.team.status === "archived") return { unchanged: current }
            yield* repo.archive(current.team.team_id, at)
            const after = (yield* repo.get(current.team.team_id))!
            return {
              result: after,
              action: "team.archive",
              previous_state: governanceState(current),
              new_state: governanceState(after),
              events: [teamArchivedEvent(after.team, new Date(at))]
            } satisfies Done<TeamWithMembers>
          })
        )
      }).pipe(Effect.catchTag("StoreError", internal))
    )
    .handle("addTeamMembers", ({ path, payload }) =>
      Effect.gen(function* () {
        yield* checkDistinct(payload.agent_ids)
        const repo = yield* TeamRepo
        return yield* writeTeam(path.team_id, (current, actor, at) =>
          Effect.gen(function* () {
            yield* writable(current)
            const { team } = current
            yield* checkAgentsOfOrg(team.org_id, payload.agent_ids)
            const present = new Set(current.members.map((member) => member.agent_id))
            const already = payload.agent_ids.filter((id) => present.has(id))
            const joining = payload.agent_ids.filter((id) => !present.has(id))
            if (present.size + joining.length > TEAM_MAX_MEMBERS) {
              return yield* Effect.fail(
                new BadRequest({
                  error: `agent_ids: a team has at most ${TEAM_MAX_MEMBERS} members; it has ${present.size}, adding ${joining.length} would make ${present.size + joining.length}`
                })
              )
            }
            const changes = yield* repo.addMembers(team.team_id, joining, actor, at)
            const after = (yield* repo.get(team.team_id))!
            const result = {
              added: after.members.filter((member) => joining.includes(member.agent_id)),
              already_members: already,
              members: after.members
            }
            // Only agents already in it: nothing changed, nothing to record.
            if (joining.length === 0) return { unchanged: result }
            return {
              result,
              action: "team.member_add",
              previous_state: governanceState(current),
              new_state: { ...governanceState(after), added: joining },
              events: memberEvents("team.member_added", team, changes, after.members.length, actor, at)
            } satisfies Done<typeof result>
          })
        )
      }).pipe(
        Effect.tap((result) => (result.added.length > 0 ? recomputeQuietly(path.team_id) : Effect.void)),
        Effect.catchTag("StoreError", internal)
      )
    )
    .handle("removeTeamMember", ({ path }) =>
      Effect.gen(function* () {
        const repo = yield* TeamRepo
        return yield* writeTeam(path.team_id, (current, actor, at) =>
          Effect.gen(function* () {
            yield* writable(current)
            const { team } = current
            if (!current.members.some((member) => member.agent_id === path.agent_id)) {
              return yield* Effect.fail(
                new NotFound({ error: `agent ${path.agent_id} is not a member of team ${team.team_id}` })
              )
            }
            if (current.members.length - 1 < TEAM_MIN_MEMBERS) {
              return yield* Effect.fail(
                new BadRequest({
                  error: `a team has at least ${TEAM_MIN_MEMBERS} members: removing ${path.agent_id} would leave ${current.members.length - 1}; add another agent first, or archive the team`
                })
              )
            }
            const removed = (yield* repo.removeMember(team.team_id, path.agent_id, actor, at))!
            const after = (yield* repo.get(team.team_id))!
            return {
              result: { removed: removed.member, members: after.members },
              action: "team.member_remove",
              previous_state: governanceState(current),
              new_state: { ...governanceState(after), removed: path.agent_id },
              events: memberEvents("team.member_removed", team, [removed], after.members.length, actor, at)
            } satisfies Done<{ removed: typeof removed.member; members: typeof after.members }>
          })
        )
      }).pipe(
        Effect.tap(() => recomputeQuietly(path.team_id)),
        Effect.catchTag("StoreError", internal)
      )
    )
    .handle("teamRosterHistory", ({ path, urlParams }) =>
      Effect.gen(function* () {
        yield* readTeam(path.team_id)
        const page = yield* (yield* TeamRepo).rosterHistory(path.team_id, urlParams.limit, urlParams.offset)
        return {
          team_id: path.team_id,
          changes: page.items,
          total: page.total,
          limit: urlParams.limit,
          offset: urlParams.offset
        }
      }).pipe(Effect.catchTag("StoreError", internal))
    )
    .handle("listOrgTeams", ({ path, urlParams }) =>
      Effect.gen(function* () {
        yield* orgRole(path.org_id)
        const page = yield* (yield* TeamRepo).list(path.org_id, urlParams.status, urlParams.limit, urlParams.offset)
        return {
          org_id: path.org_id,
          teams: page.items,
          total: page.total,
          limit: urlParams.limit,
          offset: urlParams.offset
        }
      }).pipe(Effect.catchTag("StoreError", internal))
    )
    .handle("getTeamCard", ({ path }) =>
      Effect.gen(function* () {
        yield* readTeam(path.team_id)
        const card = yield* (yield* TeamRepo).activeCard(path.team_id)
        if (card === undefined) {
          return yield* Effect.fail(new NotFound({ error: `team ${path.team_id} has no card` }))
        }
        return card
      }).pipe(Effect.catchTag("StoreError", internal))
    )
    .handle("putTeamCard", ({ path, payload }) =>
      Effect.gen(function* () {
        const card = payload.card_json
        if (card.team_id !== undefined && card.team_id !== path.team_id) {
          return yield* Effect.fail(
            new BadRequest({
              error: `card_json.team_id: must be the team of the path (${path.team_id}), got ${card.team_id}`
            })
          )
        }
        if (jsonBytes(card) > TEAM_CARD_MAX_BYTES) {
          return yield* Effect.fail(
            new BadRequest({ error: `card_json: must be at most ${TEAM_CARD_MAX_BYTES} bytes of JSON` })
          )
        }
        const source = payload.card_source ?? "manual"
        const repo = yield* TeamRepo
        return yield* writeTeam(path.team_id, (current, actor, at) =>
          Effect.gen(function* () {
            yield* writable(current)
            const previous = yield* repo.activeCard(current.team.team_id)
            const cardId = `tcard-${randomUUID()}`
            const record = yield* repo.putCard(current.team.team_id, card, source, cardId, actor, at)
            const hash = teamCardHash(card)
            return {
              result: record,
              action: "team.card_put",
              previous_state: {
                team_id: current.team.team_id,
                card_id: previous?.card_id ?? null,
                version: previous?.version ?? null,
                card_hash: previous === undefined ? null : teamCardHash(previous.card_json)
              },
              new_state: {
                team_id: current.team.team_id,
                card_id: record.card_id,
                version: record.version,
                card_source: source,
                card_hash: hash
              },
              hashes: { card_hash: hash },
              events: [
                teamCardUpdatedEvent(
                  {
                    team_id: current.team.team_id,
                    org_id: current.team.org_id,
                    card_id: cardId,
                    card_source: source,
                    actor
                  },
                  new Date(at)
                )
              ]
            } satisfies Done<typeof record>
          })
        )
      }).pipe(
        Effect.tap(() => recomputeQuietly(path.team_id)),
        Effect.catchTag("StoreError", internal)
      )
    )
    .handle("deriveTeamCard", ({ path }) =>
      Effect.gen(function* () {
        const { members, team } = yield* readTeam(path.team_id)
        const cards = yield* (yield* TeamRepo).memberCards(path.team_id)
        if (cards.length < MIN_MEMBERS_WITH_CARDS) {
          return yield* Effect.fail(
            new BadRequest({
              error: `team ${path.team_id} has ${cards.length} member(s) with a card; deriving needs at least ${MIN_MEMBERS_WITH_CARDS}`
            })
          )
        }
        return {
          derived_card: deriveTeamCard(cards, { team_id: team.team_id, org_id: team.org_id }),
          member_count: members.length,
          members_with_cards: cards.length
        }
      }).pipe(Effect.catchTag("StoreError", internal))
    )
    .handle("teamCardHistory", ({ path, urlParams }) =>
      Effect.gen(function* () {
        yield* readTeam(path.team_id)
        const page = yield* (yield* TeamRepo).cardHistory(path.team_id, urlParams.limit, urlParams.offset)
        return {
          team_id: path.team_id,
          versions: page.items,
          total: page.total,
          limit: urlParams.limit,
          offset: urlParams.offset
        }
      }).pipe(Effect.catchTag("StoreError", internal))
    )
)
