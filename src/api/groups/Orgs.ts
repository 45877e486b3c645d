/**
 * Organizations, members, invites (docs/api.md, "Organizations"): POST /v1/orgs follows the
 * public interface; the rest is ours (docs/api.md). Owner: everything, including deleting the organization
 * and transferring ownership; Admin: members and invites; Member: read.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as Schema from "effect/Schema"
import { Authentication } from "../../../adapters/auth/Authentication.js"
import { BadRequest, Forbidden, InternalError, NotFound } from "../../../adapters/http/ApiErrors.js"
import { DateTimeString, Identifier } from "../../../core/schema/Ids.js"
import { CreateOrgRequest, Organization, OrgRole } from "../../../core/schema/Organization.js"
import { OrganizationForbidden, OrganizationInvalid, OrganizationNotFound } from "../../../services/Organizations.js"

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

export const Email = Schema.String.pipe(
  Schema.maxLength(254, { message: () => "must be an email address" }),
  Schema.pattern(EMAIL, { message: () => "must be an email address" })
).annotations({ identifier: "Email", description: "An email address", jsonSchema: { format: "email" } })

export const OrgPath = Schema.Struct({ org_id: Identifier })

/** Billing details the Owner sets; an absent field stays as it is, `null` clears it. */
export const UpdateOrg = Schema.Struct({
  billing_email: Schema.optionalWith(Schema.NullOr(Email), { exact: true }),
  company_name: Schema.optionalWith(
    Schema.NullOr(
      Schema.Trim.pipe(
        Schema.minLength(1, { message: () => "must be 1 to 200 characters" }),
        Schema.maxLength(200, { message: () => "must be 1 to 200 characters" })
      )
    ),
    { exact: true }
  )
}).annotations({ identifier: "UpdateOrg" })

export const OrgList = Schema.Struct({ orgs: Schema.Array(Organization) }).annotations({ identifier: "OrgList" })

export const Member = Schema.Struct({
  user_id: Identifier,
  email: Schema.NullOr(Schema.String),
  role: OrgRole,
  created_at: DateTimeString
}).annotations({ identifier: "OrgMember" })

export const MemberList = Schema.Struct({ org_id: Identifier, members: Schema.Array(Member) }).annotations({
  identifier: "OrgMemberList"
})

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

export const CreatedInvite = Schema.Struct({
  ...Invite.fields,
  token: Schema.String.annotations({ description: "Shown once: the invitee accepts with it (POST /v1/invites/accept)" })
}).annotations({ identifier: "CreatedInvite" })

export const InviteList = Schema.Struct({ invites: Schema.Array(Invite) }).annotations({ identifier: "InviteList" })

export const AcceptInvite = Schema.Struct({ token: Schema.NonEmptyString }).annotations({ identifier: "AcceptInvite" })

export const SetRole = Schema.Struct({ role: OrgRole }).annotations({ identifier: "SetMemberRole" })

export const TransferOwnership = Schema.Struct({ user_id: Identifier }).annotations({ identifier: "TransferOwnership" })

export const Deleted = Schema.Struct({ deleted: Schema.Boolean }).annotations({ identifier: "Deleted" })

const MemberPath = Schema.Struct({ org_id: Identifier, user_id: Identifier })

export class OrgsApi extends HttpApiGroup.make("orgs")
  .add(
    HttpApiEndpoint.post("createOrg", "/orgs").setPayload(CreateOrgRequest).addSuccess(Organization, { status: 201 })
  )
  .add(HttpApiEndpoint.get("listOrgs", "/orgs").addSuccess(OrgList))
  .add(HttpApiEndpoint.get("getOrg", "/orgs/:org_id").setPath(OrgPath).addSuccess(Organization))
  .add(
    HttpApiEndpoint.patch("updateOrg", "/orgs/:org_id").setPath(OrgPath).setPayload(UpdateOrg).addSuccess(Organization)
  )
  .add(HttpApiEndpoint.del("deleteOrg", "/orgs/:org_id").setPath(OrgPath).addSuccess(Deleted))
  .add(HttpApiEndpoint.get("listMembers", "/orgs/:org_id/members").setPath(OrgPath).addSuccess(MemberList))
  .add(
    HttpApiEndpoint.put("setMemberRole", "/orgs/:org_id/members/:user_id")
      .setPath(MemberPath)
      .setPayload(SetRole)
      .addSuccess(Member)
  )
  .add(HttpApiEndpoint.del("removeMember", "/orgs/:org_id/members/:user_id").setPath(MemberPath).addSuccess(Deleted))
  .add(
    HttpApiEndpoint.post("transferOwnership", "/orgs/:org_id/transfer-ownership")
      .setPath(OrgPath)
      .setPayload(TransferOwnership)
      .addSuccess(Organization)
  )
  .add(
    HttpApiEndpoint.post("createInvite", "/orgs/:org_id/invites")
      .setPath(OrgPath)
      .setPayload(CreateInvite)
      .addSuccess(CreatedInvite, { status: 201 })
  )
  .add(HttpApiEndpoint.get("listInvites", "/orgs/:org_id/invites").setPath(OrgPath).addSuccess(InviteList))
  .add(
    HttpApiEndpoint.del("revokeInvite", "/orgs/:org_id/invites/:invite_id")
      .setPath(Schema.Struct({ org_id: Identifier, invite_id: Identifier }))
      .addSuccess(Deleted)
  )
  .add(HttpApiEndpoint.post("acceptInvite", "/invites/accept").setPayload(AcceptInvite).addSuccess(Organization))
  .addError(BadRequest)
  .addError(Forbidden)
  .addError(NotFound)
  .addError(InternalError)
  // The Organizations service's own errors (services/Organizations.ts), each with its status.
  .addError(OrganizationNotFound)
  .addError(OrganizationInvalid)
  .addError(OrganizationForbidden)
  .middleware(Authentication) {}
