/**
 * Teams on the store (migrations/0016_teams.ts): teams, their membership periods, the roster
 * history and the team card versions, plus the reads a team score needs later (`membersAt`,
 * `teamsOfAgent`, `memberCards`).
 *
 * Writes run in the caller's transaction: the API stores a change with its roster rows, its
 * governance entry and its webhook drafts together. `lockOrg` takes the organization's row lock
 * and `lock` the team's: every team write of an organization takes the first, so name checks,
 * the member limits and card versions are decided on what is committed, never on a concurrent
 * change's snapshot.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { diffJson } from "../../core/JsonPatch.js"
import type { AlignmentCard } from "../../core/schema/Card.js"
import type {
  Team,
  TeamCardHistoryItem,
  TeamCardRecord,
  TeamCardSource,
  TeamMember,
  TeamRosterChange,
  TeamStatus,
  TeamWithMembers
} from "../../core/schema/Team.js"
import type { TeamCard } from "../../core/schema/TeamCard.js"
import { json, toCount, toIso } from "./Rows.js"
import { type StoreError, storeError } from "./Store.js"

export interface NewTeam {
  readonly team_id: string
  readonly org_id: string
  readonly name: string
  readonly description: string | null
  readonly metadata: Readonly<Record<string, unknown>>
}

export interface TeamFields {
  readonly name: string
  readonly description: string | null
  readonly metadata: Readonly<Record<string, unknown>>
}

/** One row of the roster history as written: its id names the occurrence (webhook ids). */
export interface RosterChangeWritten {
  readonly change_id: number
  readonly agent_id: string
}

export interface Page<A> {
  readonly items: ReadonlyArray<A>
  readonly total: number
}

export class TeamRepo extends Context.Tag("candor/adapters/store/TeamRepo")<
  TeamRepo,
  {
    /** Holds the organization's row lock until the transaction ends; false when there is no such organization. */
    readonly lockOrg: (orgId: string) => Effect.Effect<boolean, StoreError>
    /** The team and its current members; undefined for an unknown id. */
    readonly get: (teamId: string) => Effect.Effect<TeamWithMembers | undefined, StoreError>
    /** As `get`, holding the team's row lock until the transaction ends. */
    readonly lock: (teamId: string) => Effect.Effect<TeamWithMembers | undefined, StoreError>
    /** Whether an active team of the organization other than `exceptTeamId` has this name, ignoring case. */
    readonly nameTaken: (orgId: string, name: string, exceptTeamId?: string) => Effect.Effect<boolean, StoreError>
    /** Of `agentIds`, those claimed into the organization. */
    readonly agentsOfOrg: (
      orgId: string,
      agentIds: ReadonlyArray<string>
    ) => Effect.Effect<ReadonlyArray<string>, StoreError>
    /** The team, its founding members and one `agent_added` change per member (in the given order). */
    readonly create: (
      team: NewTeam,
      agentIds: ReadonlyArray<string>,
      actor: string,
      at: string
    ) => Effect.Effect<ReadonlyArray<RosterChangeWritten>, StoreError>
    readonly update: (teamId: string, fields: TeamFields, at: string) => Effect.Effect<void, StoreError>
    readonly archive: (teamId: string, at: string) => Effect.Effect<void, StoreError>
    /** Opens a membership per agent (none may be a current member) and records each change. */
    readonly addMembers: (
      teamId: string,
      agentIds: ReadonlyArray<string>,
      actor: string,
      at: string
    ) => Effect.Effect<ReadonlyArray<RosterChangeWritten>, StoreError>
    /** Closes the agent's current membership and records the change; undefined when it is not a member. */
    readonly removeMember: (
      teamId: string,
      agentId: string,
      actor: string,
      at: string
    ) => Effect.Effect<(RosterChangeWritten & { readonly member: TeamMember }) | undefined, StoreError>
    /** The organization's teams, oldest first; `status` undefined: both. */
    readonly list: (
      orgId: string,
      status: TeamStatus | undefined,
      limit: number,
      offset: number
    ) => Effect.Effect<Page<Team>, StoreError>
    /** Newest first. */
    readonly rosterHistory: (
      teamId: string,
      limit: number,
      offset: number
    ) => Effect.Effect<Page<TeamRosterChange>, StoreError>
    /** The agents that were members at `at` (RFC 3339): added at or before it, not removed by then. */
    readonly membersAt: (teamId: string, at: string) => Effect.Effect<ReadonlyArray<string>, StoreError>
    /** The teams the agent is currently a member of (active or archived), by team id. */
    readonly teamsOfAgent: (agentId: string) => Effect.Effect<ReadonlyArray<string>, StoreError>
    /** The active Alignment Card of each current member that has one, by agent id. */
    readonly memberCards: (
      teamId: string
    ) => Effect.Effect<ReadonlyArray<{ readonly agent_id: string; readonly card: AlignmentCard }>, StoreError>
    /** Stores a new version and makes it the only active one; returns it. */
    readonly putCard: (
      teamId: string,
      card: TeamCard,
      source: TeamCardSource,
      cardId: string,
      actor: string,
      at: string
    ) => Effect.Effect<TeamCardRecord, StoreError>
    readonly activeCard: (teamId: string) => Effect.Effect<TeamCardRecord | undefined, StoreError>
    /** Versions newest first, each with its RFC 6902 diff from the version before (from `{}` for the first). */
    readonly cardHistory: (
      teamId: string,
      limit: number,
      offset: number
    ) => Effect.Effect<Page<TeamCardHistoryItem>, StoreError>
  }
>() {}

const parsed = (value: unknown): unknown => (typeof value === "string" ? JSON.parse(value) : value)

interface TeamRow {
  readonly team_id: string
  readonly org_id: string
  readonly name: string
  readonly description: string | null
  readonly status: TeamStatus
  readonly metadata: unknown
  readonly member_count: unknown
  readonly created_at: unknown
  readonly updated_at: unknown
  readonly archived_at: unknown
}

const teamOf = (row: TeamRow): Team => ({
  team_id: row.team_id,
  org_id: row.org_id,
  name: row.name,
  description: row.description,
  status: row.status,
  metadata: parsed(row.metadata) as Team["metadata"],
  member_count: toCount(row.member_count),
  created_at: toIso(row.created_at),
  updated_at: toIso(row.updated_at),
  archived_at: row.archived_at === null ? null : toIso(row.archived_at)
})

interface MemberRow {
  readonly agent_id: string
  /** The agent's name (PATCH /v1/agents/{agent_id}, else its gateway label); null without one. */
  readonly agent_name: string | null
  readonly added_at: unknown
  readonly removed_at: unknown
}

const memberOf = (row: MemberRow): TeamMember => ({
  agent_id: row.agent_id,
  agent_name: row.agent_name,
  added_at: toIso(row.added_at),
  removed_at: row.removed_at === null ? null : toIso(row.removed_at)
})

interface CardRow {
  readonly team_id: string
  readonly version: unknown
  readonly card_id: string
  readonly card: unknown
  readonly card_source: TeamCardSource
  readonly active: boolean
  readonly actor_id: string | null
  readonly issued_at: unknown
}

const cardOf = (row: CardRow): TeamCardRecord => ({
  card_id: row.card_id,
  team_id: row.team_id,
  version: toCount(row.version),
  card_json: parsed(row.card) as TeamCard,
  card_source: row.card_source,
  issued_at: toIso(row.issued_at),
  is_active: row.active
})

export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const teamColumns = sql`
    t.team_id, t.org_id, t.name, t.description, t.status, t.metadata, t.created_at, t.updated_at, t.archived_at,
    (select count(*) from team_members m where m.team_id = t.team_id and m.removed_at is null) as member_count`

  const currentMembers = (teamId: string) =>
    sql<MemberRow>`
      select m.agent_id, coalesce(a.display_name, a.default_name) as agent_name, m.added_at, m.removed_at
      from team_members m left join agents a on a.agent_id = m.agent_id
      where m.team_id = ${teamId} and m.removed_at is null order by m.added_at, m.membership_id`

  const read = (teamId: string, forUpdate: boolean) =>
    Effect.gen(function* () {
      const [row] = forUpdate
        ? yield* sql<TeamRow>`select ${teamColumns} from teams t where t.team_id = ${teamId} for update of t`
        : yield* sql<TeamRow>`select ${teamColumns} from teams t where t.team_id = ${teamId}`
      if (row === undefined) return undefined
      const members = yield* currentMembers(teamId)
      return { team: teamOf(row), members: members.map(memberOf) } satisfies TeamWithMembers
    })

  const recordChanges = (
    teamId: string,
    changeType: "agent_added" | "agent_removed",
    agentIds: ReadonlyArray<string>,
    actor: string,
    at: string
  ) =>
    agentIds.length === 0
      ? Effect.succeed([] as ReadonlyArray<RosterChangeWritten>)
      : sql<{ change_id: unknown; agent_id: string }>`
          insert into team_roster_changes (team_id, change_type, agent_id, actor_id, created_at)
          select ${teamId}, ${changeType}, r.agent_id, ${actor}, ${at}::timestamptz
          from json_to_recordset(${json(agentIds.map((agent_id, ord) => ({ agent_id, ord })))}::json)
            as r(agent_id text, ord integer)
          order by r.ord
          returning change_id, agent_id`.pipe(
          Effect.map((rows) =>
            rows
              .map((row) => ({ change_id: toCount(row.change_id), agent_id: row.agent_id }))
              .sort((a, b) => a.change_id - b.change_id)
          )
        )

  const openMemberships = (teamId: string, agentIds: ReadonlyArray<string>, actor: string, at: string) =>
    sql`
      insert into team_members (team_id, agent_id, added_at, added_by)
      select ${teamId}, r.agent_id, ${at}::timestamptz, ${actor}
      from json_to_recordset(${json(agentIds.map((agent_id, ord) => ({ agent_id, ord })))}::json)
        as r(agent_id text, ord integer)
      order by r.ord`

  return TeamRepo.of({
    lockOrg: (orgId) =>
      sql<{ org_id: string }>`select org_id from orgs where org_id = ${orgId} for update`.pipe(
        Effect.map((rows) => rows.length > 0),
        storeError("lockOrgForTeams")
      ),
    get: (teamId) => read(teamId, false).pipe(storeError("team")),
    lock: (teamId) => read(teamId, true).pipe(storeError("lockTeam")),
    nameTaken: (orgId, name, exceptTeamId) =>
      sql<{ team_id: string }>`
        select team_id from teams
        where org_id = ${orgId} and status = 'active' and lower(name) = lower(${name})
          and team_id <> ${exceptTeamId ?? ""}`.pipe(
        Effect.map((rows) => rows.length > 0),
        storeError("teamNameTaken")
      ),
    agentsOfOrg: (orgId, agentIds) =>
      agentIds.length === 0
        ? Effect.succeed([])
        : sql<{ agent_id: string }>`
            select c.agent_id from agent_claims c
            where c.org_id = ${orgId}
              and c.agent_id in (select value from json_array_elements_text(${json(agentIds)}::json))`.pipe(
            Effect.map((rows) => rows.map((row) => row.agent_id)),
            storeError("teamAgentsOfOrg")
          ),
    create: (team, agentIds, actor, at) =>
      Effect.gen(function* () {
        yield* sql`
          insert into teams (team_id, org_id, name, description, status, metadata, created_by, created_at, updated_at)
          values (${team.team_id}, ${team.org_id}, ${team.name}, ${team.description}, 'active',
            ${json(team.metadata)}::jsonb, ${actor}, ${at}::timestamptz, ${at}::timestamptz)`
        yield* openMemberships(team.team_id, agentIds, actor, at)
        return yield* recordChanges(team.team_id, "agent_added", agentIds, actor, at)
      }).pipe(storeError("createTeam")),
    update: (teamId, fields, at) =>
      sql`
        update teams set name = ${fields.name}, description = ${fields.description},
          metadata = ${json(fields.metadata)}::jsonb, updated_at = ${at}::timestamptz
        where team_id = ${teamId}`.pipe(Effect.asVoid, storeError("updateTeam")),
    archive: (teamId, at) =>
      sql`
        update teams set status = 'archived', archived_at = ${at}::timestamptz, updated_at = ${at}::timestamptz
        where team_id = ${teamId} and status = 'active'`.pipe(Effect.asVoid, storeError("archiveTeam")),
    addMembers: (teamId, agentIds, actor, at) =>
      Effect.gen(function* () {
        yield* openMemberships(teamId, agentIds, actor, at)
        yield* sql`update teams set updated_at = ${at}::timestamptz where team_id = ${teamId}`
        return yield* recordChanges(teamId, "agent_added", agentIds, actor, at)
      }).pipe(storeError("addTeamMembers")),
    removeMember: (teamId, agentId, actor, at) =>
      Effect.gen(function* () {
        const [closed] = yield* sql<MemberRow>`
          update team_members set removed_at = ${at}::timestamptz, removed_by = ${actor}
          where team_id = ${teamId} and agent_id = ${agentId} and removed_at is null
          returning agent_id, (select coalesce(a.display_name, a.default_name) from agents a
            where a.agent_id = team_members.agent_id) as agent_name, added_at, removed_at`
        if (closed === undefined) return undefined
        yield* sql`update teams set updated_at = ${at}::timestamptz where team_id = ${teamId}`
        const [change] = yield* recordChanges(teamId, "agent_removed", [agentId], actor, at)
        return { ...change!, member: memberOf(closed) }
      }).pipe(storeError("removeTeamMember")),
    list: (orgId, status, limit, offset) =>
      Effect.gen(function* () {
        const filter = status === undefined ? sql`` : sql`and t.status = ${status}`
        const rows = yield* sql<TeamRow>`
          select ${teamColumns} from teams t where t.org_id = ${orgId} ${filter}
          order by t.seq limit ${limit} offset ${offset}`
        const [count] = yield* sql<{ total: unknown }>`
          select count(*) as total from teams t where t.org_id = ${orgId} ${filter}`
        return { items: rows.map(teamOf), total: toCount(count?.total) }
      }).pipe(storeError("listTeams")),
    rosterHistory: (teamId, limit, offset) =>
      Effect.gen(function* () {
        const rows = yield* sql<{
          change_type: TeamRosterChange["change_type"]
          agent_id: string
          actor_id: string | null
          created_at: unknown
        }>`
          select change_type, agent_id, actor_id, created_at from team_roster_changes
          where team_id = ${teamId} order by change_id desc limit ${limit} offset ${offset}`
        const [count] = yield* sql<{ total: unknown }>`
          select count(*) as total from team_roster_changes where team_id = ${teamId}`
        return {
          items: rows.map((row) => ({
            change_type: row.change_type,
            agent_id: row.agent_id,
            actor_id: row.actor_id,
            created_at: toIso(row.created_at)
          })),
          total: toCount(count?.total)
        }
      }).pipe(storeError("teamRosterHistory")),
    membersAt: (teamId, at) =>
      sql<{ agent_id: string }>`
        select distinct agent_id from team_members
        where team_id = ${teamId} and added_at <= ${at}::timestamptz
          and (removed_at is null or removed_at > ${at}::timestamptz)
        order by agent_id`.pipe(
        Effect.map((rows) => rows.map((row) => row.agent_id)),
        storeError("teamMembersAt")
      ),
    teamsOfAgent: (agentId) =>
      sql<{ team_id: string }>`
        select team_id from team_members where agent_id = ${agentId} and removed_at is null order by team_id`.pipe(
        Effect.map((rows) => rows.map((row) => row.team_id)),
        storeError("teamsOfAgent")
      ),
    memberCards: (teamId) =>
      sql<{ agent_id: string; card: unknown }>`
        select m.agent_id, c.card from team_members m
        join cards c on c.agent_id = m.agent_id and c.active
        where m.team_id = ${teamId} and m.removed_at is null
        order by m.agent_id`.pipe(
        Effect.map((rows) => rows.map((row) => ({ agent_id: row.agent_id, card: parsed(row.card) as AlignmentCard }))),
        storeError("teamMemberCards")
      ),
    putCard: (teamId, card, source, cardId, actor, at) =>
      Effect.gen(function* () {
        const [head] = yield* sql<{ version: unknown }>`
          select coalesce(max(version), 0) as version from team_cards where team_id = ${teamId}`
        const version = toCount(head?.version) + 1
        yield* sql`update team_cards set active = false where team_id = ${teamId} and active`
        const [row] = yield* sql<CardRow>`
          insert into team_cards (team_id, version, card_id, card, card_source, active, actor_id, issued_at)
          values (${teamId}, ${version}, ${cardId}, ${json(card)}::jsonb, ${source}, true, ${actor},
            ${at}::timestamptz)
          returning team_id, version, card_id, card, card_source, active, actor_id, issued_at`
        return cardOf(row!)
      }).pipe(storeError("putTeamCard")),
    activeCard: (teamId) =>
      sql<CardRow>`
        select team_id, version, card_id, card, card_source, active, actor_id, issued_at from team_cards
        where team_id = ${teamId} and active`.pipe(
        Effect.map(([row]) => (row === undefined ? undefined : cardOf(row))),
        storeError("activeTeamCard")
      ),
    cardHistory: (teamId, limit, offset) =>
      Effect.gen(function* () {
        // One more row than the page: the oldest version of the page is diffed against it.
        const rows = yield* sql<CardRow>`
          select team_id, version, card_id, card, card_source, active, actor_id, issued_at from team_cards
          where team_id = ${teamId} order by version desc limit ${limit + 1} offset ${offset}`
        const [count] = yield* sql<{ total: unknown }>`
          select count(*) as total from team_cards where team_id = ${teamId}`
        const items = rows.slice(0, limit).map((row, i): TeamCardHistoryItem => {
          const before = rows[i + 1]
          return {
            version: toCount(row.version),
            card_id: row.card_id,
            card_source: row.card_source,
            issued_at: toIso(row.issued_at),
            is_active: row.active,
            actor_id: row.actor_id,
            diff: diffJson(before === undefined ? {} : parsed(before.card), parsed(row.card))
          }
        })
        return { items, total: toCount(count?.total) }
      }).pipe(storeError("teamCardHistory"))
  })
})

/** On the process's SqlClient. */
export const layer: Layer.Layer<TeamRepo, never, SqlClient.SqlClient> = Layer.effect(TeamRepo, make)
