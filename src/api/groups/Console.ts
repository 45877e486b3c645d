/**
 * The console's own routes (docs/console.md): the local operator's sign-in on the embedded default
 * (a one-time code printed by `candor serve`, exchanged for an operator session token), and who the
 * signed-in credential is, so the console hides what the caller's role cannot do (the API still
 * enforces every right).
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as Schema from "effect/Schema"
import { Authentication } from "../../../adapters/auth/Authentication.js"
import {
  BadRequest,
  Forbidden,
  InternalError,
  NotFound,
  TooManyRequests,
  Unauthorized
} from "../../../adapters/http/ApiErrors.js"
import { DateTimeString, Identifier } from "../../../core/schema/Ids.js"

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

export class ConsoleSignInApi extends HttpApiGroup.make("consoleSignIn").add(
  HttpApiEndpoint.post("exchangeOperatorCode", "/console/sessions")
    .setPayload(OperatorCode)
    .addSuccess(OperatorSession, { status: 201 })
    .addError(BadRequest)
    .addError(Unauthorized)
    .addError(NotFound)
    .addError(TooManyRequests)
) {}

export class ConsoleApi extends HttpApiGroup.make("console")
  .add(HttpApiEndpoint.get("consoleCaller", "/console/session").addSuccess(ConsoleCaller))
  // The service-role key: the console never holds it.
  .addError(Forbidden)
  .addError(InternalError)
  .middleware(Authentication) {}
