/**
 * What the caller may do to one agent (GET /v1/agents/{agent_id}/permissions), for a client to show only
 * the actions it may take.
 */
import * as Schema from "effect/Schema"
import { AgentId } from "./Ids.js"

export const AgentPermissions = Schema.Struct({
  agent_id: AgentId,
  /** The caller's effective role on the agent; `service` for the service-role key. */
  role: Schema.Literal("owner", "admin", "member", "service"),
  /** Whether the API would accept each action from this caller now (an impersonation session: reads only). */
  may: Schema.Struct({
    read: Schema.Boolean,
    write: Schema.Boolean,
    pause: Schema.Boolean,
    resume: Schema.Boolean,
    kill: Schema.Boolean,
    reactivate: Schema.Boolean
  })
}).annotations({ identifier: "AgentPermissions" })
