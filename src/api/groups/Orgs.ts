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
import { Identifier } from "../../../core/schema/Ids.js"
import {
  CreateOrgRequest,
  Organization,
  UpdateOrg,
  OrgList,
  OrgMember,
  OrgMemberList,
  SetMemberRole,
  TransferOwnership,
  Deleted
} from "../../../core/schema/Organization.js"
import { CreateInvite, CreatedInvite, InviteList, AcceptInvite } from "../../../core/schema/Invite.js"
import { OrganizationForbidden, OrganizationInvalid, OrganizationNotFound } from "../../../services/Organizations.js"

export const OrgPath = Schema.Struct({ org_id: Identifier })

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
  .add(HttpApiEndpoint.get("listMembers", "/orgs/:org_id/members").setPath(OrgPath).addSuccess(OrgMemberList))
  .add(
    HttpApiEndpoint.put("setMemberRole", "/orgs/:org_id/members/:user_id")
      .setPath(MemberPath)
      .setPayload(SetMemberRole)
      .addSuccess(OrgMember)
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
