/**
 * Organizations and the roles of their members.
 */
import { Schema } from "effect"
import { literalUnion } from "./Literals.js"
import { DateTimeString, Identifier } from "./Ids.js"
import { Email } from "./Email.js"

/** Descending authority: owner > admin > member. */
export const ORG_ROLES = ["owner", "admin", "member"] as const
export const OrgRole = literalUnion(ORG_ROLES, {
  identifier: "OrgRole",
  description: "owner: everything incl. billing and deletion; admin: members, keys, agents; member: read-only"
})
export type OrgRole = typeof OrgRole.Type

export const OrgName = Schema.String.pipe(
  Schema.minLength(2, { message: () => "name must be 2 to 100 characters" }),
  Schema.maxLength(100, { message: () => "name must be 2 to 100 characters" })
).annotations({ identifier: "OrgName", description: "Organization name, 2 to 100 characters" })

const SLUG_MESSAGE =
  "slug must be 3 to 48 lowercase letters, digits or hyphens, starting and ending with a letter or digit"

export const OrgSlug = Schema.String.pipe(
  Schema.minLength(3, { message: () => SLUG_MESSAGE }),
  Schema.maxLength(48, { message: () => SLUG_MESSAGE }),
  Schema.pattern(/^[a-z0-9][a-z0-9-]*[a-z0-9]$/, { message: () => SLUG_MESSAGE })
).annotations({ identifier: "OrgSlug", description: "URL-safe organization handle" })

export const CreateOrgRequest = Schema.Struct({
  name: OrgName,
  slug: OrgSlug
}).annotations({ identifier: "CreateOrgRequest" })
export type CreateOrgRequest = typeof CreateOrgRequest.Type

export const Organization = Schema.Struct({
  org_id: Identifier,
  name: OrgName,
  slug: OrgSlug,
  billing_account_id: Identifier,
  owner_user_id: Identifier,
  billing_email: Schema.NullOr(Schema.String),
  company_name: Schema.NullOr(Schema.String),
  member_count: Schema.NonNegativeInt,
  role: OrgRole.annotations({ description: "The caller's role in this organization" }),
  created_at: DateTimeString,
  updated_at: DateTimeString
}).annotations({ identifier: "Organization" })
export type Organization = typeof Organization.Type

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

export const OrgMember = Schema.Struct({
  user_id: Identifier,
  email: Schema.NullOr(Schema.String),
  role: OrgRole,
  created_at: DateTimeString
}).annotations({ identifier: "OrgMember" })
export type OrgMember = typeof OrgMember.Type

export const OrgMemberList = Schema.Struct({ org_id: Identifier, members: Schema.Array(OrgMember) }).annotations({
  identifier: "OrgMemberList"
})

export const SetMemberRole = Schema.Struct({ role: OrgRole }).annotations({ identifier: "SetMemberRole" })

export const TransferOwnership = Schema.Struct({ user_id: Identifier }).annotations({ identifier: "TransferOwnership" })

export const Deleted = Schema.Struct({ deleted: Schema.Boolean }).annotations({ identifier: "Deleted" })
