/**
 * The enterprise contact form (docs/api.md, "Enterprise").
 */
import * as Schema from "effect/Schema"
import { Email } from "./Email.js"

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
