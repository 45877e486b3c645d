/**
 * What a principal may do (docs/api.md, "Authentication" and "Who may do what"). Every
 * handler asks here before reading or writing, so the rules live in one place:
 *
 * - a user sees the agents they claimed and those of their organizations; Members read, Admins and
 *   Owners write; kill and reactivate are Owner-only, pause and resume Admin and up;
 * - an organization API key acts with the role it was created under, a user key as its user;
 * - the service-role key may do what is reserved to it (the card update) and administration; a
 *   console operator session (`cos_`) has its rights except those reserved routes;
 * - during an impersonation session every write is refused.
 *
 * An agent the principal may not see is reported as not found (404), so ids do not leak.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { Forbidden, NotFound } from "../http/ApiErrors.js"
import type { StoreError } from "../store/Store.js"
import type { Principal, Role } from "./Principal.js"

export type AgentAction = "read" | "write" | "pause" | "resume" | "kill" | "reactivate"

export class AccessControl extends Context.Tag("candor/adapters/auth/AccessControl")<
  AccessControl,
  {
    /** Succeeds when `principal` may do `action` on the agent; NotFound when it may not even see it. */
    readonly agent: (
      principal: Principal,
      agentId: string,
      action: AgentAction
    ) => Effect.Effect<void, Forbidden | NotFound | StoreError>
    /** The agents `principal` may read (user: own + organizations'; service: every agent). */
    readonly visibleAgents: (principal: Principal) => Effect.Effect<ReadonlyArray<string>, StoreError>
    /** The principal's role in an organization, or undefined when not a member. */
    readonly orgRole: (principal: Principal, orgId: string) => Effect.Effect<Role | undefined, StoreError>
    /** Fails for writes during impersonation and for principals that may not write at all. */
    readonly write: (principal: Principal) => Effect.Effect<void, Forbidden>
    /** Only the service-role key itself (not a console operator session): the routes the spec reserves to it. */
    readonly serviceRole: (principal: Principal) => Effect.Effect<void, Forbidden>
  }
>() {}
