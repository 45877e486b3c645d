/**
 * Organization conscience values: every change of an organization's layer, for the API and any
 * other caller. Every change is one transaction: the change itself (under the organization's row
 * lock), its entry in the organization's conscience log, its entry in the organization's governance
 * log (with the `values_hash` of the organization's active values), and one
 * `conscience.values_updated` event for the organization (in the outbox). Once committed, the
 * resolved values of every agent of the organization are pushed to the gateways and workers
 * (services/ConscienceState.ts); a `BusError` then leaves the change stored.
 *
 * Every accepted write is recorded, also one that changes nothing (its `changes` are then `{}`):
 * the log says who asked for what, not only what differs. Who may write is the caller's to check;
 * the actor it names is the one recorded.
 */
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { randomUUID } from "node:crypto"
import { AgentState } from "../adapters/bus/AgentState.js"
import { eventDraft } from "../adapters/store/EventOutbox.js"
import { GovernanceLog } from "../adapters/store/GovernanceLog.js"
import { IdentityRepo } from "../adapters/store/identity/IdentityRepo.js"
import {
  type OrgConscienceFields,
  OrgConscienceRepo,
  resolvedConscienceOf
} from "../adapters/store/OrgConscienceRepo.js"
import { Store, StoreError } from "../adapters/store/Store.js"
import { transaction } from "../adapters/store/Transaction.js"
import { valuesHash } from "../core/Commitments.js"
import { activeOrgValues, effectiveValues } from "../core/ConscienceResolution.js"
import { conscienceEvent } from "../core/EventData.js"
import { newEnvelope } from "../core/Events.js"
import { orgGovernanceLog } from "../core/Governance.js"
import {
  type ConscienceChanges,
  type ConscienceSeverity,
  type ConscienceValueType,
  ORG_CONSCIENCE_MAX_VALUES,
  type OrgConscience as OrgConscienceLayer,
  type OrgConscienceLogAction,
  type OrgConscienceMode,
  type OrgConscienceValue
} from "../core/schema/Conscience.js"
import { pushResolvedConscience } from "./ConscienceState.js"

const body = { error: Schema.String }

/** No such organization, or no such value in it. */
export class ConscienceNotFound extends Schema.TaggedError<ConscienceNotFound>()(
  "ConscienceNotFound",
  body,
  HttpApiSchema.annotations({ status: 404 })
) {}

/** A change the rules of conscience values refuse (a missing field, an order that is not a permutation). */
export class ConscienceInvalid extends Schema.TaggedError<ConscienceInvalid>()(
  "ConscienceInvalid",
  body,
  HttpApiSchema.annotations({ status: 400 })
) {}

/** The change contradicts what is committed: a name taken, the limit of values reached. */
export class ConscienceConflict extends Schema.TaggedError<ConscienceConflict>()(
  "ConscienceConflict",
  body,
  HttpApiSchema.annotations({ status: 409 })
) {}

export type ConscienceError = ConscienceNotFound | ConscienceInvalid | ConscienceConflict

/** `description` is accepted for `content` (Mnemom's name for it); `content` wins when both are sent. */
export interface NewConscienceValue {
  readonly type: ConscienceValueType
  readonly name: string
  readonly content?: string | undefined
  readonly description?: string | undefined
  readonly severity?: ConscienceSeverity | undefined
  readonly is_active?: boolean | undefined
}

export type ConscienceValuePatch = Partial<NewConscienceValue>

const orgNotFound = (orgId: string) => new ConscienceNotFound({ error: `organization ${orgId} not found` })

const FIELDS = ["type", "name", "content", "severity", "is_active"] as const

/** `{field: {from, to}}` for the fields that differ (`undefined` on a side: the value does not exist there). */
const diff = (before: OrgConscienceFields | undefined, after: OrgConscienceFields | undefined): ConscienceChanges => {
  const changes: Record<string, { from: unknown; to: unknown }> = {}
  for (const field of FIELDS) {
    const from = before?.[field] ?? null
    const to = after?.[field] ?? null
    if (from !== to) changes[field] = { from, to }
  }
  return changes
}

const fieldsOf = (value: OrgConscienceValue): OrgConscienceFields => ({
  type: value.type,
  name: value.name,
  content: value.content,
  severity: value.severity,
  is_active: value.is_active
})

/** What the governance record keeps of a layer: small, and the hash that names its values. */
const governanceState = (layer: OrgConscienceLayer) => ({
  mode: layer.mode,
  enabled: layer.enabled,
  values_hash: valuesHash(activeOrgValues(layer)),
  order: layer.values.map((value) => value.value_id)
})

const valueNotFound = (valueId: string) => new ConscienceNotFound({ error: `conscience value ${valueId} not found` })

const nameTaken = (name: string) =>
  new ConscienceConflict({
    error: `a conscience value named ${JSON.stringify(name)} already exists in this organization`
  })

interface Change<A> {
  readonly result: A
  readonly valueId: string | null
  readonly action: OrgConscienceLogAction
  readonly changes: ConscienceChanges
}

interface Change<A> {
  readonly result: A
  readonly valueId: string | null
  readonly action: OrgConscienceLogAction
  readonly changes: ConscienceChanges
}

export const make = Effect.gen(function* () {
  const repo = yield* OrgConscienceRepo
  const store = yield* Store
  const governance = yield* GovernanceLog
  const identity = yield* IdentityRepo
  const sql = yield* SqlClient.SqlClient
  const state = yield* AgentState

  /**
   * One change of the organization's values: `change` runs under the row lock on the layer as
   * committed, and everything it implies is stored with it, or nothing is.
   */
  const mutate = <A>(
    orgId: string,
    actor: string,
    change: (before: OrgConscienceLayer, at: string) => Effect.Effect<Change<A>, ConscienceError | StoreError>
  ) =>
    Effect.gen(function* () {
      const at = new Date(yield* Clock.currentTimeMillis).toISOString()
      const committed = yield* transaction(
        sql,
        Effect.gen(function* () {
          const before = yield* repo.lock(orgId)
          if (before === undefined) return yield* orgNotFound(orgId)
          const done = yield* change(before, at)
          const after = (yield* repo.get(orgId))!
          const entryId = yield* repo.appendLog(orgId, {
            value_id: done.valueId,
            action: done.action,
            actor,
            changes: done.changes,
            at
          })
          const newState = governanceState(after)
          yield* governance.append(orgGovernanceLog(orgId), {
            action: `conscience.${done.action}`,
            actor,
            previous_state: { ...governanceState(before), value_id: done.valueId },
            new_state: { ...newState, value_id: done.valueId, changes: done.changes },
            hashes: { values_hash: newState.values_hash }
          })
          yield* store.enqueueOutbox([
            eventDraft(
              newEnvelope(
                conscienceEvent(
                  { org_id: orgId, entry_id: entryId, action: done.action, value_id: done.valueId, actor },
                  new Date(at)
                )
              )
            )
          ])
          const agents = yield* identity.agentsOfOrg(orgId)
          return { agents, result: done.result }
        })
      ).pipe(Effect.catchTag("SqlError", (cause) => Effect.fail(new StoreError({ operation: "orgConscience", cause }))))
      // Committed: now the gateways and workers (the change is stored even if they cannot be told).
      yield* pushResolvedConscience(committed.agents).pipe(
        Effect.provideService(Store, store),
        Effect.provideService(AgentState, state)
      )
      return committed.result
    })

  /** The organization's layer. */
  const get = (orgId: string) =>
    Effect.flatMap(repo.get(orgId), (layer) =>
      layer === undefined ? Effect.fail(orgNotFound(orgId)) : Effect.succeed(layer)
    )

  const create = (orgId: string, payload: NewConscienceValue, actor: string) =>
    mutate(orgId, actor, (before, at) =>
      Effect.gen(function* () {
        const content = payload.content ?? payload.description
        if (content === undefined) {
          return yield* new ConscienceInvalid({ error: "content: is required (or its alias description)" })
        }
        if (before.values.length >= ORG_CONSCIENCE_MAX_VALUES) {
          return yield* new ConscienceConflict({
            error: `an organization has at most ${ORG_CONSCIENCE_MAX_VALUES} conscience values; delete or change one instead`
          })
        }
        if (before.values.some((value) => value.name === payload.name)) return yield* nameTaken(payload.name)
        const fields: OrgConscienceFields = {
          type: payload.type,
          name: payload.name,
          content,
          severity: payload.severity ?? "advisory",
          is_active: payload.is_active ?? true
        }
        const valueId = `cv-${randomUUID()}`
        const sortOrder = before.values.reduce((max, value) => Math.max(max, value.sort_order + 1), 0)
        yield* repo.insert(before.org_id, { ...fields, value_id: valueId, sort_order: sortOrder }, actor, at)
        const created: OrgConscienceValue = {
          ...fields,
          value_id: valueId,
          sort_order: sortOrder,
          created_by: actor,
          updated_by: actor,
          created_at: at,
          updated_at: at
        }
        return { result: created, valueId, action: "create" as const, changes: diff(undefined, fields) }
      })
    )

  const update = (orgId: string, valueId: string, payload: ConscienceValuePatch, actor: string) =>
    mutate(orgId, actor, (before, at) =>
      Effect.gen(function* () {
        const current = before.values.find((value) => value.value_id === valueId)
        if (current === undefined) return yield* valueNotFound(valueId)
        const fields: OrgConscienceFields = {
          type: payload.type ?? current.type,
          name: payload.name ?? current.name,
          content: payload.content ?? payload.description ?? current.content,
          severity: payload.severity ?? current.severity,
          is_active: payload.is_active ?? current.is_active
        }
        if (before.values.some((value) => value.name === fields.name && value.value_id !== current.value_id)) {
          return yield* nameTaken(fields.name)
        }
        yield* repo.update(before.org_id, current.value_id, fields, actor, at)
        const action = fields.is_active === current.is_active ? "update" : fields.is_active ? "activate" : "deactivate"
        return {
          result: { ...current, ...fields, updated_by: actor, updated_at: at },
          valueId: current.value_id,
          action,
          changes: diff(fieldsOf(current), fields)
        } as const
      })
    )

  const remove = (orgId: string, valueId: string, actor: string) =>
    mutate(orgId, actor, (before) =>
      Effect.gen(function* () {
        const current = before.values.find((value) => value.value_id === valueId)
        if (current === undefined) return yield* valueNotFound(valueId)
        yield* repo.remove(before.org_id, current.value_id)
        return {
          result: { deleted: true, value_id: current.value_id },
          valueId: current.value_id,
          action: "delete" as const,
          changes: diff(fieldsOf(current), undefined)
        }
      })
    )

  const reorder = (orgId: string, order: ReadonlyArray<string>, actor: string) =>
    mutate(orgId, actor, (before, at) =>
      Effect.gen(function* () {
        const ids = before.values.map((value) => value.value_id)
        const known = new Set(ids)
        const asked = new Set(order)
        if (asked.size !== order.length || order.length !== ids.length || order.some((id) => !known.has(id))) {
          return yield* new ConscienceInvalid({
            error: `order: must list every conscience value id of the organization exactly once (${ids.length} ids)`
          })
        }
        yield* repo.reorder(before.org_id, order, actor, at)
        return {
          result: { org_id: before.org_id, order },
          valueId: null,
          action: "reorder" as const,
          changes: { order: { from: ids, to: order } }
        }
      })
    )

  const setMode = (
    orgId: string,
    payload: { readonly mode?: OrgConscienceMode | undefined; readonly enabled?: boolean | undefined },
    actor: string
  ) =>
    mutate(orgId, actor, (before, at) =>
      Effect.gen(function* () {
        if (payload.mode === undefined && payload.enabled === undefined) {
          return yield* new ConscienceInvalid({ error: "mode or enabled: at least one is required" })
        }
        const mode = payload.mode ?? before.mode
        const enabled = payload.enabled ?? before.enabled
        yield* repo.setMode(before.org_id, mode, enabled, actor, at)
        const changes: Record<string, { from: unknown; to: unknown }> = {}
        if (mode !== before.mode) changes["mode"] = { from: before.mode, to: mode }
        if (enabled !== before.enabled) changes["enabled"] = { from: before.enabled, to: enabled }
        return {
          result: { org_id: before.org_id, mode, enabled },
          valueId: null,
          action: "mode_change" as const,
          changes
        }
      })
    )

  /** The organization's conscience log, newest first. */
  const log = (orgId: string, limit: number, offset: number) =>
    Effect.gen(function* () {
      yield* get(orgId)
      return { org_id: orgId, entries: yield* repo.log(orgId, limit, offset) }
    })

  /** The values in force for the agent: the defaults, its organization's and its own, resolved. */
  const effective = (agentId: string) =>
    Effect.map(resolvedConscienceOf(store, agentId), (resolved) => ({
      agent_id: agentId,
      org_id: resolved.orgId,
      mode: resolved.mode,
      enabled: resolved.enabled,
      values: effectiveValues(resolved),
      values_hash: resolved.valuesHash
    }))

  return { get, create, update, remove, reorder, setMode, log, effective }
})

export class OrgConscience extends Context.Tag("candor/services/OrgConscience")<
  OrgConscience,
  Effect.Effect.Success<typeof make>
>() {}

export const layer = Layer.effect(OrgConscience, make)
