/** POST /v1/enterprise/contact (docs/api.md): a sales contact request, stored. */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as Schema from "effect/Schema"
import { Authentication } from "../../../adapters/auth/Authentication.js"
import { InternalError } from "../../../adapters/http/ApiErrors.js"
import { Email } from "../../../core/schema/Email.js"

const Text = (max: number) => Schema.String.pipe(Schema.minLength(1), Schema.maxLength(max))

export const EnterpriseContact = Schema.Struct({
  name: Text(200),
  email: Email,
  company: Text(200),
  role: Text(200),
  company_size: Text(100),
  message: Text(5000)
}).annotations({ identifier: "EnterpriseContact" })

export const ContactReceived = Schema.Struct({ id: Schema.String }).annotations({ identifier: "ContactReceived" })

export class EnterpriseApi extends HttpApiGroup.make("enterprise")
  .add(
    HttpApiEndpoint.post("contact", "/enterprise/contact")
      .setPayload(EnterpriseContact)
      .addSuccess(ContactReceived, { status: 201 })
  )
  .addError(InternalError)
  .middleware(Authentication) {}
