/**
 * The management API's authentication middleware (docs/api.md, "Authentication"): a Bearer JWT of
 * the identity provider or the service-role key in `Authorization`, or an API key in `x-api-key` /
 * `X-Service-Api-Key`. Every group except the public verification and health routes carries it;
 * handlers then read `CurrentPrincipal`. The implementation is `CredentialAuthentication.ts`.
 *
 * HttpApi tries the schemes in declaration order and reports the last failure, so the Bearer scheme
 * comes last: a missing, expired or invalid token is what the 401 says when no API key was sent.
 *
 * Besides 401 it fails with 403 (a write during an impersonation session), 429 (the credential's
 * rate limit) and 500 (credentials could not be looked up), so every authenticated route declares
 * those too.
 */
import * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import * as HttpApiSecurity from "@effect/platform/HttpApiSecurity"
import * as Schema from "effect/Schema"
import { Forbidden, InternalError, ServiceUnavailable, TooManyRequests, Unauthorized } from "../http/ApiErrors.js"
import { CurrentPrincipal } from "./Principal.js"

export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("candor/adapters/auth/Authentication", {
  failure: Schema.Union(Unauthorized, Forbidden, TooManyRequests, InternalError, ServiceUnavailable),
  provides: CurrentPrincipal,
  security: {
    apiKey: HttpApiSecurity.apiKey({ key: "x-api-key", in: "header" }),
    serviceApiKey: HttpApiSecurity.apiKey({ key: "X-Service-Api-Key", in: "header" }),
    bearer: HttpApiSecurity.bearer
  }
}) {}
