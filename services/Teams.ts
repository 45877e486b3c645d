/**
 * Teams (docs/teams.md): every write of an organization's teams, for the API and any other caller.
 * Every write is one transaction, under the organization's row lock (names, member limits and card
 * versions are checked on what is committed): the change, its roster history rows, its entry on the
 * organization's governance log (`team.*`, with the team card's hash when a card is put) and its
 * webhook events in the outbox. An archived team is read-only (409 on every write but a repeated
 * archive, which answers the team as it is).
 *
 * Who may read or write is the caller's to say: each operation takes a `TeamAccess`, asked about the
 * team's organization at the point the HTTP contract checks it (after the request's own checks, before
 * the transaction), so the service knows no principal and the order of answers stays the API's.
 *
 * Once a roster change or a team card PUT has committed, the team's reputation is recomputed
 * automatically (services/TeamReputation.ts, coalesced to once an hour); a failed recomputation is
 * logged and never fails the write, which is already stored.
 */
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { randomUUID } from "node:crypto"
import { eventDraft } from "../adapters/store/EventOutbox.js"
import { GovernanceLog } from "../adapters/store/GovernanceLog.js"
import { MemberScores } from "../adapters/store/MemberScores.js"
import { Store, StoreError } from "../adapters/store/Store.js"
import { type RosterChangeWritten, TeamRepo } from "../adapters/store/TeamRepo.js"
import { TeamReputationRepo } from "../adapters/store/TeamReputationRepo.js"
import { transaction } from "../adapters/store/Transaction.js"
import { teamCardHash } from "../core/Commitments.js"
import { teamArchivedEvent, teamCardUpdatedEvent, teamCreatedEvent, teamMemberEvent } from "../core/EventData.js"
import { type EventOccurrence, newEnvelope } from "../core/Events.js"
import { orgGovernanceLog } from "../core/Governance.js"
import type { GovernanceAction } from "../core/schema/Governance.js"
import {
  TEAM_ID_PREFIX,
  TEAM_MAX_MEMBERS,
  TEAM_METADATA_MAX_BYTES,
  TEAM_MIN_MEMBERS,
  type TeamCardSource,
  type TeamStatus,
  type TeamWithMembers
} from "../core/schema/Team.js"
import { type TeamCard, TEAM_CARD_MAX_BYTES } from "../core/schema/TeamCard.js"
import { deriveTeamCard, MIN_MEMBERS_WITH_CARDS } from "../core/TeamCardDerivation.js"
import { recomputeQuietly } from "./TeamReputation.js"

const body = { error: Schema.String }

/** No such team, or one the caller may not see (alike: nothing leaks). */
export class TeamNotFound extends Schema.TaggedError<TeamNotFound>()(
  "TeamNotFound",
  body,
  HttpApiSchema.annotations({ status: 404 })
) {
  static of(teamId: string) {
    return new TeamNotFound({ error: `team ${teamId} not found` })
  }
}

/** The team's organization is gone (deleted between the read and the write's lock). */
export class TeamOrganizationNotFound extends Schema.TaggedError<TeamOrganizationNotFound>()(
  "TeamOrganizationNotFound",
  body,
  HttpApiSchema.annotations({ status: 404 })
) {}

/** The agent removed is not a member, or the team has no card. */
export class TeamPartNotFound extends Schema.TaggedError<TeamPartNotFound>()(
  "TeamPartNotFound",
  body,
  HttpApiSchema.annotations({ status: 404 })
) {}

/** A request the rules of teams refuse (ids repeated or foreign, sizes, member limits). */
export class TeamInvalid extends Schema.TaggedError<TeamInvalid>()(
  "TeamInvalid",
  body,
  HttpApiSchema.annotations({ status: 400 })
) {}

/** The request contradicts what is committed: an archived team, a name taken. */
export class TeamConflict extends Schema.TaggedError<TeamConflict>()(
  "TeamConflict",
  body,
  HttpApiSchema.annotations({ status: 409 })
) {}

export type TeamError = TeamNotFound | TeamOrganizationNotFound | TeamPartNotFound | TeamInvalid | TeamConflict

/** What the caller may do in a team's organization, asked by every operation (see the module comment). */
export interface TeamAccess<E, R> {
  /** Succeeds when the caller may see the organization's teams. */
  readonly read: (orgId: string) => Effect.Effect<void, E, R>
  /** Succeeds with the actor recorded for the write when the caller may write the organization's teams. */
  readonly write: (orgId: string) => Effect.Effect<string, E, R>
}

export interface NewTeam {
  readonly org_id: string
  readonly name: string
  readonly description?: string | null | undefined
  readonly agent_ids: ReadonlyArray<string>
  readonly metadata?: Readonly<Record<string, unknown>> | undefined
}

export interface TeamPatch {
  readonly name?: string | undefined
  readonly description?: string | null | undefined
  readonly metadata?: Readonly<Record<string, unknown>> | undefined
}

const archived = (teamId: string) => new TeamConflict({ error: `team ${teamId} is archived` })
const nameTaken = (name: string) =>
  new TeamConflict({ error: `an active team named ${JSON.stringify(name)} already exists in this organization` })

const jsonBytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value), "utf8")

const checkMetadata = (metadata: unknown) =>
  metadata !== undefined && jsonBytes(metadata) > TEAM_METADATA_MAX_BYTES
    ? Effect.fail(new TeamInvalid({ error: `metadata: must be at most ${TEAM_METADATA_MAX_BYTES} bytes of JSON` }))
    : Effect.void

/** 400 naming the ids given more than once. */
const checkDistinct = (ids: ReadonlyArray<string>) => {
  const seen = new Set<string>()
  const repeated = new Set(ids.filter((id) => seen.has(id) || (seen.add(id), false)))
  return repeated.size === 0
    ? Effect.void
    : Effect.fail(new TeamInvalid({ error: `agent_ids: duplicated ids: ${[...repeated].join(", ")}` }))
}

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

type Change<A> = Effect.Effect<Done<A> | { readonly unchanged: A }, TeamError | StoreError>

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

export const make = Effect.gen(function* () {
  const repo = yield* TeamRepo
  const store = yield* Store
  const governance = yield* GovernanceLog
  const sql = yield* SqlClient.SqlClient
  // What the automatic reputation recomputation reads (services/TeamReputation.ts).
  const reputation = yield* Effect.context<TeamRepo | TeamReputationRepo | MemberScores | Store | SqlClient.SqlClient>()
  const recompute = (teamId: string) => Effect.provide(recomputeQuietly(teamId), reputation)

  /**
   * 400 naming every id that is not an agent of the organization: one of another organization, one
   * the caller may not see and one that does not exist are reported alike (nothing leaks).
   */
  const checkAgentsOfOrg = (orgId: string, ids: ReadonlyArray<string>) =>
    Effect.gen(function* () {
      const known = new Set(yield* repo.agentsOfOrg(orgId, ids))
      const foreign = ids.filter((id) => !known.has(id))
      if (foreign.length > 0) {
        return yield* new TeamInvalid({
          error: `agent_ids: not agents of organization ${orgId}: ${foreign.join(", ")}`
        })
      }
    })

  /** The team, when `access` lets the caller see its organization; 404 otherwise, as for an unknown id. */
  const get = <E, R>(teamId: string, access: TeamAccess<E, R>) =>
    Effect.gen(function* () {
      const found = yield* repo.get(teamId)
      if (found === undefined) return yield* TeamNotFound.of(teamId)
      yield* access.read(found.team.org_id)
      return found
    })

  /**
   * One write of the organization's teams, in one transaction under the organization's row lock:
   * `change` decides on what is committed; its governance entry and events are stored with it.
   * `change` answers `{unchanged}` for a request that changes nothing (a repeated archive, members
   * all already in the team): then no entry and no event are written.
   */
  const write = <A>(orgId: string, actor: string, change: (at: string) => Change<A>) =>
    Effect.gen(function* () {
      const at = new Date(yield* Clock.currentTimeMillis).toISOString()
      return yield* transaction(
        sql,
        Effect.gen(function* () {
          if (!(yield* repo.lockOrg(orgId))) {
            return yield* new TeamOrganizationNotFound({ error: `organization ${orgId} not found` })
          }
          const done = yield* change(at)
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
  const writeTeam = <A, E, R>(
    teamId: string,
    access: TeamAccess<E, R>,
    change: (current: TeamWithMembers, actor: string, at: string) => Change<A>
  ) =>
    Effect.gen(function* () {
      const seen = yield* get(teamId, access)
      const actor = yield* access.write(seen.team.org_id)
      return yield* write(seen.team.org_id, actor, (at) =>
        Effect.gen(function* () {
          const current = yield* repo.lock(teamId)
          if (current === undefined) return yield* TeamNotFound.of(teamId)
          return yield* change(current, actor, at)
        })
      )
    })

  const create = <E, R>(input: NewTeam, access: TeamAccess<E, R>) =>
    Effect.gen(function* () {
      const actor = yield* access.write(input.org_id)
      yield* checkDistinct(input.agent_ids)
      yield* checkMetadata(input.metadata)
      return yield* write(input.org_id, actor, (at) =>
        Effect.gen(function* () {
          yield* checkAgentsOfOrg(input.org_id, input.agent_ids)
          if (yield* repo.nameTaken(input.org_id, input.name)) return yield* nameTaken(input.name)
          const teamId = `${TEAM_ID_PREFIX}${randomUUID()}`
          const team = {
            team_id: teamId,
            org_id: input.org_id,
            name: input.name,
            description: input.description || null,
            metadata: input.metadata ?? {}
          }
          yield* repo.create(team, input.agent_ids, actor, at)
          const created = (yield* repo.get(teamId))!
          return {
            result: created,
            action: "team.create",
            previous_state: null,
            new_state: governanceState(created),
            events: [teamCreatedEvent(team, input.agent_ids, new Date(at))]
          } satisfies Done<TeamWithMembers>
        })
      )
    })

  const update = <E, R>(teamId: string, patch: TeamPatch, access: TeamAccess<E, R>) =>
    Effect.gen(function* () {
      yield* checkMetadata(patch.metadata)
      return yield* writeTeam(teamId, access, (current, _actor, at) =>
        Effect.gen(function* () {
          yield* writable(current)
          const fields = {
            name: patch.name ?? current.team.name,
            description: patch.description === undefined ? current.team.description : patch.description || null,
            metadata: patch.metadata ?? current.team.metadata
          }
          if (
            fields.name.toLowerCase() !== current.team.name.toLowerCase() &&
            (yield* repo.nameTaken(current.team.org_id, fields.name, current.team.team_id))
          ) {
            return yield* nameTaken(fields.name)
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
    })

  const archive = <E, R>(teamId: string, access: TeamAccess<E, R>) =>
    writeTeam(teamId, access, (current, _actor, at) =>
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

  const addMembers = <E, R>(teamId: string, agentIds: ReadonlyArray<string>, access: TeamAccess<E, R>) =>
    Effect.gen(function* () {
      yield* checkDistinct(agentIds)
      return yield* writeTeam(teamId, access, (current, actor, at) =>
        Effect.gen(function* () {
          yield* writable(current)
          const { team } = current
          yield* checkAgentsOfOrg(team.org_id, agentIds)
          const present = new Set(current.members.map((member) => member.agent_id))
          const already = agentIds.filter((id) => present.has(id))
          const joining = agentIds.filter((id) => !present.has(id))
          if (present.size + joining.length > TEAM_MAX_MEMBERS) {
            return yield* new TeamInvalid({
              error: `agent_ids: a team has at most ${TEAM_MAX_MEMBERS} members; it has ${present.size}, adding ${joining.length} would make ${present.size + joining.length}`
            })
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
    }).pipe(Effect.tap((result) => (result.added.length > 0 ? recompute(teamId) : Effect.void)))

  const removeMember = <E, R>(teamId: string, agentId: string, access: TeamAccess<E, R>) =>
    writeTeam(teamId, access, (current, actor, at) =>
      Effect.gen(function* () {
        yield* writable(current)
        const { team } = current
        if (!current.members.some((member) => member.agent_id === agentId)) {
          return yield* new TeamPartNotFound({ error: `agent ${agentId} is not a member of team ${team.team_id}` })
        }
        if (current.members.length - 1 < TEAM_MIN_MEMBERS) {
          return yield* new TeamInvalid({
            error: `a team has at least ${TEAM_MIN_MEMBERS} members: removing ${agentId} would leave ${current.members.length - 1}; add another agent first, or archive the team`
          })
        }
        const removed = (yield* repo.removeMember(team.team_id, agentId, actor, at))!
        const after = (yield* repo.get(team.team_id))!
        return {
          result: { removed: removed.member, members: after.members },
          action: "team.member_remove",
          previous_state: governanceState(current),
          new_state: { ...governanceState(after), removed: agentId },
          events: memberEvents("team.member_removed", team, [removed], after.members.length, actor, at)
        } satisfies Done<{ removed: typeof removed.member; members: typeof after.members }>
      })
    ).pipe(Effect.tap(() => recompute(teamId)))

  const rosterHistory = <E, R>(teamId: string, limit: number, offset: number, access: TeamAccess<E, R>) =>
    Effect.zipRight(get(teamId, access), repo.rosterHistory(teamId, limit, offset))

  const list = <E, R>(
    orgId: string,
    status: TeamStatus | undefined,
    limit: number,
    offset: number,
    access: TeamAccess<E, R>
  ) => Effect.zipRight(access.read(orgId), repo.list(orgId, status, limit, offset))

  const activeCard = <E, R>(teamId: string, access: TeamAccess<E, R>) =>
    Effect.gen(function* () {
      yield* get(teamId, access)
      const card = yield* repo.activeCard(teamId)
      if (card === undefined) return yield* new TeamPartNotFound({ error: `team ${teamId} has no card` })
      return card
    })

  const putCard = <E, R>(teamId: string, card: TeamCard, source: TeamCardSource, access: TeamAccess<E, R>) =>
    Effect.gen(function* () {
      if (card.team_id !== undefined && card.team_id !== teamId) {
        return yield* new TeamInvalid({
          error: `card_json.team_id: must be the team of the path (${teamId}), got ${card.team_id}`
        })
      }
      if (jsonBytes(card) > TEAM_CARD_MAX_BYTES) {
        return yield* new TeamInvalid({ error: `card_json: must be at most ${TEAM_CARD_MAX_BYTES} bytes of JSON` })
      }
      return yield* writeTeam(teamId, access, (current, actor, at) =>
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
    }).pipe(Effect.tap(() => recompute(teamId)))

  /** A card derived from the members' cards; not stored. */
  const deriveCard = <E, R>(teamId: string, access: TeamAccess<E, R>) =>
    Effect.gen(function* () {
      const { members, team } = yield* get(teamId, access)
      const cards = yield* repo.memberCards(teamId)
      if (cards.length < MIN_MEMBERS_WITH_CARDS) {
        return yield* new TeamInvalid({
          error: `team ${teamId} has ${cards.length} member(s) with a card; deriving needs at least ${MIN_MEMBERS_WITH_CARDS}`
        })
      }
      return {
        derived_card: deriveTeamCard(cards, { team_id: team.team_id, org_id: team.org_id }),
        member_count: members.length,
        members_with_cards: cards.length
      }
    })

  const cardHistory = <E, R>(teamId: string, limit: number, offset: number, access: TeamAccess<E, R>) =>
    Effect.zipRight(get(teamId, access), repo.cardHistory(teamId, limit, offset))

  return {
    get,
    create,
    update,
    archive,
    addMembers,
    removeMember,
    rosterHistory,
    list,
    activeCard,
    putCard,
    deriveCard,
    cardHistory
  }
})

export class Teams extends Context.Tag("candor/services/Teams")<Teams, Effect.Effect.Success<typeof make>>() {}

export const layer = Layer.effect(Teams, make)
