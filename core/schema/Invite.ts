/**
 * Invitations to an organization (docs/api.md, "Organizations"): the request, the stored invite, the
 * answer that shows its token once, and the acceptance.
 */
import * as Schema from "effect/Schema"
import { DateTimeString, Identifier } from "./Ids.js"
import { OrgRole } from "./Organization.js"
import { Email } from "./Email.js"

/** Invites grant Admin or Member; ownership moves only by transfer. */
export const InviteRole = Schema.Literal("admin", "member").annotations({
  message: (issue) => ({ message: `must be admin or member; got ${JSON.stringify(issue.actual)}`, override: true })
})

export const CreateInvite = Schema.Struct({ email: Email, role: InviteRole }).annotations({
  identifier: "CreateInvite"
})

export const Invite = Schema.Struct({
  invite_id: Identifier,
  org_id: Identifier,
  email: Schema.String,
  role: OrgRole,
  invited_by: Identifier,
  created_at: DateTimeString,
  expires_at: DateTimeString,
  accepted_at: Schema.NullOr(DateTimeString)
}).annotations({ identifier: "Invite" })
export type Invite = typeof Invite.Type

export const CreatedInvite = Schema.Struct({
  ...Invite.fields,
  token: Schema.String.annotations({ description: "Shown once: the invitee accepts with it (POST /v1/invites/accept)" })
}).annotations({ identifier: "CreatedInvite" })

export const InviteList = Schema.Struct({ invites: Schema.Array(Invite) }).annotations({ identifier: "InviteList" })

export const AcceptInvite = Schema.Struct({ token: Schema.NonEmptyString }).annotations({ identifier: "AcceptInvite" })
