/**
 * The console's own routes (docs/console.md): the local operator's sign-in on the embedded default
 * (a one-time code printed by `candor serve`, exchanged for an operator session token), and who the
 * signed-in credential is, so the console hides what the caller's role cannot do (the API still
 * enforces every right).
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import { Authentication } from "../../../adapters/auth/Authentication.js"
import {
  BadRequest,
  Forbidden,
  InternalError,
  NotFound,
  TooManyRequests,
  Unauthorized
} from "../../../adapters/http/ApiErrors.js"
import { OperatorCode, OperatorSession, ConsoleCaller } from "../../../core/schema/Console.js"

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
