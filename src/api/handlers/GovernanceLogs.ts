/**
 * The governance logs' reads (services/GovernanceLogs.ts): a page of entries with the newest signed
 * tree head, an entry's inclusion proof, and consistency between two sizes. An agent's log is for
 * readers of the agent, an organization's for its members of any role.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import type { BadRequest, NotFound } from "../../../adapters/http/ApiErrors.js"
import type { StoreError } from "../../../adapters/store/Store.js"
import { agentGovernanceLog, type GovernanceLogRef, orgGovernanceLog } from "../../../core/Governance.js"
import { GovernanceLogs } from "../../../services/GovernanceLogs.js"
import { CandorApi } from "../Api.js"
import { readAgent } from "./AgentAccess.js"
import { orgRole } from "./Access.js"

type LogRead<A> = Effect.Effect<A, BadRequest | NotFound | StoreError>

/** A read of an agent's log, for readers of the agent. */
const agentLog = <A>(agentId: string, read: (log: GovernanceLogRef) => LogRead<A>) =>
  readAgent(agentId).pipe(Effect.zipRight(read(agentGovernanceLog(agentId))))

/** A read of an organization's log, for its members of any role. */
const orgLog = <A>(orgId: string, read: (log: GovernanceLogRef) => LogRead<A>) =>
  orgRole(orgId).pipe(Effect.zipRight(read(orgGovernanceLog(orgId))))

export const GovernanceLogsLive = HttpApiBuilder.group(CandorApi, "governanceLogs", (handlers) =>
  Effect.map(GovernanceLogs, (logs) =>
    handlers
      .handle("agentGovernanceLog", ({ path, urlParams }) =>
        agentLog(path.agent_id, (log) => logs.page(log, urlParams.offset, urlParams.limit))
      )
      .handle("agentGovernanceConsistency", ({ path, urlParams }) =>
        agentLog(path.agent_id, (log) => logs.consistency(log, urlParams.from, urlParams.to))
      )
      .handle("agentGovernanceInclusion", ({ path, urlParams }) =>
        agentLog(path.agent_id, (log) => logs.inclusion(log, path.index, urlParams.tree_size))
      )
      .handle("orgGovernanceLog", ({ path, urlParams }) =>
        orgLog(path.org_id, (log) => logs.page(log, urlParams.offset, urlParams.limit))
      )
      .handle("orgGovernanceConsistency", ({ path, urlParams }) =>
        orgLog(path.org_id, (log) => logs.consistency(log, urlParams.from, urlParams.to))
      )
      .handle("orgGovernanceInclusion", ({ path, urlParams }) =>
        orgLog(path.org_id, (log) => logs.inclusion(log, path.index, urlParams.tree_size))
      )
  )
)
