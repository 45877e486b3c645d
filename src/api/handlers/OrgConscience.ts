/**
 * Organization conscience values. Every change is one transaction: the change itself (under the
 * organization's row lock), its entry in the organization's conscience log, its entry in the
 * organization's governance log (with the `values_hash` of the organization's active values), and
 * one `conscience.values_updated` event for the organization (in the outbox).
 * Once committed, the resolved values of every agent of the organization are pushed to the
 * gateways and workers (services/ConscienceState.ts).
 *
 * Every accepted write is recorded, also one that changes nothing (its `changes` are then `{}`):
 * the log says who asked for what, not only what differs.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { randomUUID } from "node:crypto"
import { actorOf, CurrentPrincipal } from "../../../adapters/auth/Principal.js"
import { BadRequest, Conflict, NotFound } from "../../../adapters/http/ApiErrors.js"
import { GovernanceLog } from "../../../adapters/store/GovernanceLog.js"
import { IdentityRepo } from "../../../adapters/store/identity/IdentityRepo.js"
import {
  type OrgConscienceFields,
  OrgConscienceRepo,
  resolvedConscienceOf
} from "../../../adapters/store/OrgConscienceRepo.js"
import { Store, StoreError } from "../../../adapters/store/Store.js"
import { transaction } from "../../../adapters/store/Transaction.js"
import { valuesHash } from "../../../core/Commitments.js"
import { conscienceEvent } from "../../../core/EventData.js"
import { newEnvelope } from "../../../core/Events.js"
import { activeOrgValues, effectiveValues } from "../../../core/ConscienceResolution.js"
import { orgGovernanceLog } from "../../../core/Governance.js"
import {
  type ConscienceChanges,
  ORG_CONSCIENCE_MAX_VALUES,
  type OrgConscience,
  type OrgConscienceLogAction,
  type OrgConscienceValue
} from "../../../core/schema/Conscience.js"
import { eventDraft } from "../../../adapters/store/EventOutbox.js"
import { CandorApi } from "../Api.js"
import { readAgent } from "./AgentAccess.js"
import { gatewaysUnreachable, internal, orgRole, requireOrgRole } from "./Access.js"
import { pushResolvedConscience } from "../../../services/ConscienceState.js"

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
const governanceState = (layer: OrgConscience) => ({
  mode: layer.mode,
  enabled: layer.enabled,
  values_hash: valuesHash(activeOrgValues(layer)),
  order: layer.values.map((value) => value.value_id)
})

const valueNotFound = (valueId: string) => new NotFound({ error: `conscience value ${valueId} not found` })

const nameTaken = (name: string) =>
  new Conflict({ error: `a conscience value named ${JSON.stringify(name)} already exists in this organization` })

interface Change<A> {
  readonly result: A
  readonly valueId: string | null
  readonly action: OrgConscienceLogAction
  readonly changes: ConscienceChanges
}

/**
 * One change of the organization's values: `change` runs under the row lock on the layer as
 * committed, and everything it implies is stored with it, or nothing is.
 */
const mutate = <A, R>(
  orgId: string,
  change: (
    before: OrgConscience,
    actor: string,
    at: string
  ) => Effect.Effect<Change<A>, BadRequest | Conflict | NotFound | StoreError, R>
) =>
  Effect.gen(function* () {
    yield* requireOrgRole(orgId, "admin", true)
    const actor = actorOf(yield* CurrentPrincipal)
    const at = new Date(yield* Clock.currentTimeMillis).toISOString()
    const repo = yield* OrgConscienceRepo
    const store = yield* Store
    const governance = yield* GovernanceLog
    const identity = yield* IdentityRepo
    const sql = yield* SqlClient.SqlClient
    const committed = yield* transaction(
      sql,
      Effect.gen(function* () {
        const before = yield* repo.lock(orgId)
        if (before === undefined) return yield* Effect.fail(new NotFound({ error: `organization ${orgId} not found` }))
        const done = yield* change(before, actor, at)
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
    yield* pushResolvedConscience(committed.agents)
    return committed.result
  }).pipe(Effect.catchTag("StoreError", internal), Effect.catchTag("BusError", gatewaysUnreachable))

export const OrgConscienceLive = HttpApiBuilder.group(CandorApi, "orgConscience", (handlers) =>
  handlers
    .handle("getOrgConscience", ({ path }) =>
      Effect.gen(function* () {
        yield* orgRole(path.org_id)
        const layer = yield* (yield* OrgConscienceRepo).get(path.org_id)
        if (layer === undefined)
          return yield* Effect.fail(new NotFound({ error: `organization ${path.org_id} not found` }))
        return layer
      }).pipe(Effect.catchTag("StoreError", internal))
    )
    .handle("createOrgConscienceValue", ({ path, payload }) =>
      mutate(path.org_id, (before, actor, at) =>
        Effect.gen(function* () {
          const content = payload.content ?? payload.description
          if (content === undefined) {
            return yield* Effect.fail(new BadRequest({ error: "content: is required (or its alias description)" }))
          }
          if (before.values.length >= ORG_CONSCIENCE_MAX_VALUES) {
            return yield* Effect.fail(
              new Conflict({
                error: `an organization has at most ${ORG_CONSCIENCE_MAX_VALUES} conscience values; delete or change one instead`
              })
            )
          }
          if (before.values.some((value) => value.name === payload.name))
            return yield* Effect.fail(nameTaken(payload.name))
          const fields: OrgConscienceFields = {
            type: payload.type,
            name: payload.name,
            content,
            severity: payload.severity ?? "advisory",
            is_active: payload.is_active ?? true
          }
          const valueId = `cv-${randomUUID()}`
          const sortOrder = before.values.reduce((max, value) => Math.max(max, value.sort_order + 1), 0)
          const repo = yield* OrgConscienceRepo
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
    )
    .handle("updateOrgConscienceValue", ({ path, payload }) =>
      mutate(path.org_id, (before, actor, at) =>
        Effect.gen(function* () {
          const current = before.values.find((value) => value.value_id === path.value_id)
          if (current === undefined) return yield* Effect.fail(valueNotFound(path.value_id))
          const fields: OrgConscienceFields = {
            type: payload.type ?? current.type,
            name: payload.name ?? current.name,
            content: payload.content ?? payload.description ?? current.content,
            severity: payload.severity ?? current.severity,
            is_active: payload.is_active ?? current.is_active
          }
          if (before.values.some((value) => value.name === fields.name && value.value_id !== current.value_id)) {
            return yield* Effect.fail(nameTaken(fields.name))
          }
          yield* (yield* OrgConscienceRepo).update(before.org_id, current.value_id, fields, actor, at)
          const action =
            fields.is_active === current.is_active ? "update" : fields.is_active ? "activate" : "deactivate"
          return {
            result: { ...current, ...fields, updated_by: actor, updated_at: at },
            valueId: current.value_id,
            action,
            changes: diff(fieldsOf(current), fields)
          } as const
        })
      )
    )
    .handle("deleteOrgConscienceValue", ({ path }) =>
      mutate(path.org_id, (before) =>
        Effect.gen(function* () {
          const current = before.values.find((value) => value.value_id === path.value_id)
          if (current === undefined) return yield* Effect.fail(valueNotFound(path.value_id))
          yield* (yield* OrgConscienceRepo).remove(before.org_id, current.value_id)
          return {
            result: { deleted: true, value_id: current.value_id },
            valueId: current.value_id,
            action: "delete" as const,
            changes: diff(fieldsOf(current), undefined)
          }
        })
      )
    )
    .handle("orderOrgConscienceValues", ({ path, payload }) =>
      mutate(path.org_id, (before, actor, at) =>
        Effect.gen(function* () {
          const ids = before.values.map((value) => value.value_id)
          const known = new Set(ids)
          const asked = new Set(payload.order)
          if (
            asked.size !== payload.order.length ||
            payload.order.length !== ids.length ||
            payload.order.some((id) => !known.has(id))
          ) {
            return yield* Effect.fail(
              new BadRequest({
                error: `order: must list every conscience value id of the organization exactly once (${ids.length} ids)`
              })
            )
          }
          yield* (yield* OrgConscienceRepo).reorder(before.org_id, payload.order, actor, at)
          return {
            result: { org_id: before.org_id, order: payload.order },
            valueId: null,
            action: "reorder" as const,
            changes: { order: { from: ids, to: payload.order } }
          }
        })
      )
    )
    .handle("setOrgConscienceMode", ({ path, payload }) =>
      mutate(path.org_id, (before, actor, at) =>
        Effect.gen(function* () {
          if (payload.mode === undefined && payload.enabled === undefined) {
            return yield* Effect.fail(new BadRequest({ error: "mode or enabled: at least one is required" }))
          }
          const mode = payload.mode ?? before.mode
          const enabled = payload.enabled ?? before.enabled
          yield* (yield* OrgConscienceRepo).setMode(before.org_id, mode, enabled, actor, at)
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
    )
    .handle("orgConscienceLog", ({ path, urlParams }) =>
      Effect.gen(function* () {
        yield* requireOrgRole(path.org_id, "admin", false)
        const repo = yield* OrgConscienceRepo
        if ((yield* repo.get(path.org_id)) === undefined) {
          return yield* Effect.fail(new NotFound({ error: `organization ${path.org_id} not found` }))
        }
        return { org_id: path.org_id, entries: yield* repo.log(path.org_id, urlParams.limit, urlParams.offset) }
      }).pipe(Effect.catchTag("StoreError", internal))
    )
    .handle("effectiveConscienceValues", ({ path }) =>
      Effect.gen(function* () {
        yield* readAgent(path.agent_id)
        const resolved = yield* resolvedConscienceOf(yield* Store, path.agent_id)
        return {
          agent_id: path.agent_id,
          org_id: resolved.orgId,
          mode: resolved.mode,
          enabled: resolved.enabled,
          values: effectiveValues(resolved),
          values_hash: resolved.valuesHash
        }
      }).pipe(Effect.catchTag("StoreError", internal))
    )
)
