/**
 * An agent's enforcement mode and failure policy: each stored in its settings with its governance
 * entry (`enforcement.mode`, `enforcement.failure_policy`) in one transaction, then pushed to the
 * gateways that enforce it before the change answers (a `BusError` then leaves it stored). Who may
 * change them, or read the agent's enforcement records, is the caller's to check; the actor it
 * names is the one recorded.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { AgentState } from "../adapters/bus/AgentState.js"
import { BadRequest } from "../adapters/http/ApiErrors.js"
import { GovernanceLog } from "../adapters/store/GovernanceLog.js"
import { type AgentSettingsRecord, type EnforcementRecordQuery, Store, StoreError } from "../adapters/store/Store.js"
import { transaction } from "../adapters/store/Transaction.js"
import { agentGovernanceLog } from "../core/Governance.js"
import type { GovernanceAction } from "../core/schema/Governance.js"
import type { EnforcementMode, FailurePolicy } from "../core/schema/Verdict.js"

export const make = Effect.gen(function* () {
  const store = yield* Store
  const governance = yield* GovernanceLog
  const sql = yield* SqlClient.SqlClient
  const state = yield* AgentState

  /**
   * Sets one of the agent's settings with its governance entry (`action`, the setting before and
   * after), the row locked so concurrent writers are ordered; the settings after.
   */
  const changeSetting = <K extends "mode" | "failure_policy">(
    agentId: string,
    key: K,
    value: AgentSettingsRecord[K],
    action: GovernanceAction,
    actor: string
  ) =>
    transaction(
      sql,
      Effect.gen(function* () {
        const before = (yield* store.lockAgentSettings(agentId)).settings
        const after = yield* store.putAgentSettings(agentId, { [key]: value })
        yield* governance.append(agentGovernanceLog(agentId), {
          action,
          actor,
          previous_state: { [key]: before[key] },
          new_state: { [key]: after[key] }
        })
        return after
      })
    ).pipe(Effect.catchTag("SqlError", (cause) => Effect.fail(new StoreError({ operation: action, cause }))))

  /** The agent's enforcement mode. */
  const mode = (agentId: string) => Effect.map(store.agentSettings(agentId), (settings) => settings.mode)

  /** Sets the agent's enforcement mode, then tells the gateways; the mode in force. */
  const setMode = (agentId: string, value: EnforcementMode, actor: string) =>
    Effect.gen(function* () {
      const settings = yield* changeSetting(agentId, "mode", value, "enforcement.mode", actor)
      yield* state.update(agentId, { mode: settings.mode })
      return settings.mode
    })

  /** Sets the agent's failure policy, then tells the gateways; the policy in force. */
  const setFailurePolicy = (agentId: string, value: FailurePolicy, actor: string) =>
    Effect.gen(function* () {
      const settings = yield* changeSetting(agentId, "failure_policy", value, "enforcement.failure_policy", actor)
      yield* state.update(agentId, { failurePolicy: settings.failure_policy })
      return settings.failure_policy
    })

  /**
   * A page of the agent's enforcement records (what its gateways refused, nudged, contained), newest
   * first, with the total of the filtered set; a `from` not before `to` is refused.
   */
  const records = (query: EnforcementRecordQuery) =>
    Effect.gen(function* () {
      const { from, limit, offset, to } = query
      if (from !== undefined && to !== undefined && Date.parse(from) >= Date.parse(to))
        return yield* new BadRequest({ error: "from: must be before to" })
      const page = yield* store.enforcementRecordPage(query)
      return { records: page.items, total: page.total, limit, offset }
    })

  return { mode, setMode, setFailurePolicy, records }
})

export class Enforcement extends Context.Tag("candor/services/Enforcement")<
  Enforcement,
  Effect.Effect.Success<typeof make>
>() {}

export const layer = Layer.effect(Enforcement, make)
