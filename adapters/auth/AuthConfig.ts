/**
 * What the management API's authentication needs from the configuration: the identity provider
 * (an HS256 secret, or a JWKS URL), the claims it must carry, and the service-role key.
 */
import * as Context from "effect/Context"
import type * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"

export interface AuthSettings {
  /** HMAC secret of HS256 tokens; with neither this nor `jwksUrl`, the dev secret of the data dir. */
  readonly jwtSecret: Option.Option<Redacted.Redacted>
  /** JWKS of an external identity provider (RS256, ES256, EdDSA, …). */
  readonly jwksUrl: Option.Option<string>
  readonly issuer: Option.Option<string>
  readonly audience: Option.Option<string>
  /** `None`: every service-role call is refused. */
  readonly serviceRoleKey: Option.Option<Redacted.Redacted>
}

export class AuthConfig extends Context.Tag("candor/adapters/auth/AuthConfig")<AuthConfig, AuthSettings>() {}
