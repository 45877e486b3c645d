/**
 * Who is calling the management API, once authenticated. Handlers read it from `CurrentPrincipal`;
 * what it may do is decided by `AccessControl`, never by the handler comparing ids itself.
 */
import * as Context from "effect/Context"

/** Organization roles, from most to least powerful (spec: Owner, Admin, Member). */
export const ROLES = ["owner", "admin", "member"] as const
export type Role = (typeof ROLES)[number]

export interface Impersonation {
  readonly session_id: string
  /** The admin who started it. */
  readonly by_user_id: string
  /** RFC 3339; the session is read-only and ends at this time (one hour). */
  readonly expires_at: string
}

export type Principal =
  /** A Bearer JWT of the identity provider (or an impersonation session acting as that user). */
  | {
      readonly kind: "user"
      readonly userId: string
      readonly email: string | undefined
      readonly impersonation: Impersonation | undefined
      /** When the JWT stops being valid (its `exp`, ms since the epoch); undefined for impersonation. */
      readonly expiresAt?: number | undefined
    }
  /** An API key (`x-api-key` / `X-Service-Api-Key`): a user's, or an organization's with the role it was created under. */
  | {
      readonly kind: "api_key"
      readonly keyId: string
      readonly userId: string
      readonly orgId: string | undefined
      readonly role: Role | undefined
      /**
       * The SHA-256 of the secret presented (what is stored): a long-lived request re-checks the key
       * by it, so a revocation or a rotation ends it (./CredentialLiveness.ts).
       */
      readonly keyHash?: string | undefined
    }
  /**
   * The service-role key (`Authorization: Bearer <SERVICE_ROLE_KEY>`): administrative operations. Also
   * the local operator's console session on the embedded default (`operatorSession` set; ./OperatorSignIn.ts).
   */
  | { readonly kind: "service"; readonly operatorSession?: { readonly expires_at: string } }

export class CurrentPrincipal extends Context.Tag("candor/adapters/auth/CurrentPrincipal")<
  CurrentPrincipal,
  Principal
>() {}

/**
 * The service-role key itself, not a console operator session: the routes the spec reserves to the
 * key (the card update, administration) take only this. An operator session's token lives in a
 * browser tab, where the key must never be (docs/console.md).
 */
export const isServiceRoleKey = (principal: Principal): boolean =>
  principal.kind === "service" && principal.operatorSession === undefined

/**
 * Who an action is recorded as (governance log, containment log, `contained_by`): the user acting,
 * also through one of their API keys; `service` for the service-role key. `system` is reserved for
 * what Candor decides itself (auto-containment).
 */
export const actorOf = (principal: Principal): string => (principal.kind === "service" ? "service" : principal.userId)

/** The actor of Candor's own decisions. */
export const SYSTEM_ACTOR = "system"
