/** POST /v1/enterprise/contact (docs/api.md): a sales contact request, stored. */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import { Authentication } from "../../../adapters/auth/Authentication.js"
import { InternalError } from "../../../adapters/http/ApiErrors.js"
import { EnterpriseContact, ContactReceived } from "../../../core/schema/Enterprise.js"

export class EnterpriseApi extends HttpApiGroup.make("enterprise")
  .add(
    HttpApiEndpoint.post("contact", "/enterprise/contact")
      .setPayload(EnterpriseContact)
      .addSuccess(ContactReceived, { status: 201 })
  )
  .addError(InternalError)
  .middleware(Authentication) {}
