/**
 * The console's sign-in and session as the API publishes them (docs/console.md).
 */
import * as Schema from "effect/Schema"
import { DateTimeString, Identifier } from "./Ids.js"

export const OperatorCode = Schema.Struct({
  code: Schema.String.pipe(
    Schema.minLength(1, { message: () => "must be the code of the sign-in link" }),
    Schema.maxLength(256, { message: () => "must be the code of the sign-in link" })
  )
}).annotations({ identifier: "OperatorCode" })

export const OperatorSession = Schema.Struct({
  token: Schema.String.annotations({ description: "Send as `Authorization: Bearer <token>`; shown once" }),
  expires_at: DateTimeString,
  kind: Schema.Literal("operator")
}).annotations({ identifier: "OperatorSession" })

const Role = Schema.Literal("owner", "admin", "member")

export const ConsoleCaller = Schema.Struct({
  kind: Schema.Literal("user", "api_key", "operator").annotations({
    description:
      "operator: the local operator's console session (the service-role key's rights but the routes reserved to the key). The service-role key itself is refused (403): it must never reach a browser"
  }),
  user_id: Schema.NullOr(Identifier),
  email: Schema.NullOr(Schema.String),
  org_id: Schema.NullOr(Identifier).annotations({ description: "An organization API key's organization" }),
  role: Schema.NullOr(Role).annotations({ description: "An organization API key's role" }),
  read_only: Schema.Boolean.annotations({ description: "An impersonation session: every write is refused" }),
  expires_at: Schema.NullOr(DateTimeString).annotations({
    description: "When an operator or impersonation session ends"
  })
}).annotations({ identifier: "ConsoleCaller" })
