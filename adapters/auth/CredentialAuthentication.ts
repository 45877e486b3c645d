/**
 * The implementation of the `Authentication` middleware: who is calling, and whether the
 * credential's rate limit allows one more request.
 *
 * One decision point: HttpApi runs the declared schemes one after another until one succeeds, so
 * the two API-key schemes step aside at once and the last (Bearer) scheme reads every credential
 * header itself. A request thus costs at most one credential lookup and one token from its bucket,
 * and the 401 names what was actually wrong.
 *
 * Credentials, in order: `Authorization: Bearer` holding the service-role key, an impersonation
 * token (`imp_…`), a console operator session (`cos_…`, embedded default only: the service-role
 * key's rights, ./OperatorSignIn.ts) or an identity-provider JWT; else `x-api-key` / `X-Service-Api-Key`.
 * The service-role key is refused on requests a browser makes (`Sec-Fetch-Site` present), and an
 * organization key whose creator lost the role it was created under is refused (./CredentialLiveness.ts).
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { bearerToken } from "../providers/Identity.js"
import { headerText } from "../gateway/AgentIdentity.js"
import {
  Forbidden,
  type InternalError,
  type ServiceUnavailable,
  TooManyRequests,
  Unauthorized
} from "../http/ApiErrors.js"
import { storeFailure } from "../http/StoreFailure.js"
import { CredentialRepo } from "../store/identity/CredentialRepo.js"
import { Accounts } from "./Accounts.js"
import { AuthConfig } from "./AuthConfig.js"
import { Authentication } from "./Authentication.js"
import { keyRefusal } from "./CredentialLiveness.js"
import { IdentityTokens } from "./IdentityTokens.js"
import { OPERATOR_SESSION_PREFIX, OperatorSignIn } from "./OperatorSignIn.js"
import type { Principal } from "./Principal.js"
import { RateLimiter } from "./RateLimiter.js"
import { hashSecret, secretsEqual } from "./Secrets.js"

/** Why the service-role key is refused on a browser's request (docs/console.md, "Signing in"). */
export const SERVICE_KEY_IN_BROWSER =
  "the service-role key is refused from a browser: it must never reach client code. Sign in to the console with the operator link `candor serve` prints, a user token or an API key"

/** Prefix of impersonation tokens (so they are never sent to the JWT verifier). */
export const IMPERSONATION_TOKEN_PREFIX = "imp"
/** Prefix of API keys. */
export const API_KEY_PREFIX = "cnd"

/** Requests per second of a plan; unknown plans get the Free rate. */
export interface RateOptions {
  readonly planRates: Readonly<Record<string, number>>
}

const READ_METHODS = new Set(["GET", "HEAD", "OPTIONS"])
/** The one write an impersonation session may do: ending itself. */
const END_IMPERSONATION = /^\/v1\/admin\/impersonation\/[^/]+\/end\/?$/

/** How often `last_used_at` of an API key is refreshed, at most. */
const TOUCH_INTERVAL_MS = 60_000

interface Authenticated {
  readonly principal: Principal
  /** Bucket key and plan; none for the service-role key, which is not rate limited. */
  readonly rate: Option.Option<{ readonly key: string; readonly plan: string }>
}

const unauthorized = (error: string) => new Unauthorized({ error })

/** The database failed while looking a credential up: 503 or 500, logged without the credential. */
const internal = storeFailure("credential lookup failed", { logCause: false })

export const make = (options: RateOptions) =>
  Effect.gen(function* () {
    const config = yield* AuthConfig
    const tokens = yield* IdentityTokens
    const credentials = yield* CredentialRepo
    const accounts = yield* Accounts
    const limiter = yield* RateLimiter
    // Only the embedded default's API has one (src/Serve.ts); elsewhere a `cos_` token is refused.
    const operator = yield* Effect.serviceOption(OperatorSignIn)
    const touched = new Map<string, number>()

    const fromBearer = (
      token: string,
      fromBrowser: boolean
    ): Effect.Effect<Authenticated, Unauthorized | Forbidden | InternalError | ServiceUnavailable> => {
      if (Option.isSome(config.serviceRoleKey) && secretsEqual(token, Redacted.value(config.serviceRoleKey.value))) {
        // The key must never reach client code (spec): a browser's request (it sends fetch metadata,
        // which servers' HTTP clients do not) is refused, so pasting it into a page gains nothing.
        if (fromBrowser) return Effect.fail(new Forbidden({ error: SERVICE_KEY_IN_BROWSER }))
        return Effect.succeed({ principal: { kind: "service" }, rate: Option.none() })
      }
      if (token.startsWith(`${OPERATOR_SESSION_PREFIX}_`)) {
        const expiresAt = Option.isSome(operator) ? operator.value.session(token) : undefined
        return expiresAt === undefined
          ? Effect.fail(unauthorized("console session expired or ended"))
          : Effect.succeed({
              principal: { kind: "service", operatorSession: { expires_at: new Date(expiresAt).toISOString() } },
              rate: Option.none()
            })
      }
      if (token.startsWith(`${IMPERSONATION_TOKEN_PREFIX}_`)) {
        return Effect.gen(function* () {
          const session = yield* credentials
            .sessionByToken(hashSecret(token), new Date())
            .pipe(Effect.catchTag("StoreError", internal))
          if (session === undefined) return yield* Effect.fail(unauthorized("impersonation session expired or ended"))
          const plan = yield* accounts
            .userPlan(session.target_user_id, undefined)
            .pipe(Effect.catchTag("StoreError", internal))
          return {
            principal: {
              kind: "user",
              userId: session.target_user_id,
              email: undefined,
              impersonation: {
                session_id: session.session_id,
                by_user_id: session.admin_user_id,
                expires_at: session.expires_at
              }
            },
            rate: Option.some({ key: `session:${session.session_id}`, plan })
          } satisfies Authenticated
        })
      }
      return Effect.gen(function* () {
        const identity = yield* tokens.verify(token).pipe(Effect.mapError((e) => unauthorized(e.reason)))
        const plan = yield* accounts
          .userPlan(identity.sub, identity.email)
          .pipe(Effect.catchTag("StoreError", internal))
        return {
          principal: {
            kind: "user",
            userId: identity.sub,
            email: identity.email,
            impersonation: undefined,
            expiresAt: identity.expiresAt
          },
          rate: Option.some({ key: `user:${identity.sub}`, plan })
        } satisfies Authenticated
      })
    }

    const fromApiKey = (key: string): Effect.Effect<Authenticated, Unauthorized | InternalError | ServiceUnavailable> =>
      Effect.gen(function* () {
        const keyHash = hashSecret(key)
        const found = yield* credentials.keyByHash(keyHash).pipe(Effect.catchTag("StoreError", internal))
        if (found === undefined) return yield* Effect.fail(unauthorized("invalid API key"))
        const refused = keyRefusal(found)
        if (refused !== undefined) return yield* Effect.fail(unauthorized(refused))
        const now = Date.now()
        if ((touched.get(found.key_id) ?? 0) + TOUCH_INTERVAL_MS < now) {
          touched.set(found.key_id, now)
          yield* Effect.ignore(credentials.touchKey(found.key_id))
        }
        const plan = yield* (
          found.org_id === null ? accounts.userPlan(found.user_id, undefined) : accounts.orgPlan(found.org_id)
        ).pipe(Effect.catchTag("StoreError", internal))
        return {
          principal: {
            kind: "api_key",
            keyId: found.key_id,
            userId: found.user_id,
            orgId: found.org_id ?? undefined,
            role: found.role ?? undefined,
            keyHash
          },
          rate: Option.some({ key: `key:${found.key_id}`, plan })
        } satisfies Authenticated
      })

    const authenticate = Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      const headers = request.headers
      const authorization = headerText(headers["authorization"])
      const apiKey = headerText(headers["x-api-key"]) ?? headerText(headers["x-service-api-key"])
      let result: Authenticated
      if (authorization !== undefined) {
        const token = bearerToken(authorization)
        if (token === undefined) return yield* Effect.fail(unauthorized('Authorization must be "Bearer <token>"'))
        result = yield* fromBearer(token, headers["sec-fetch-site"] !== undefined)
      } else if (apiKey !== undefined) {
        result = yield* fromApiKey(apiKey)
      } else {
        return yield* Effect.fail(unauthorized("missing credentials: send Authorization: Bearer <token> or x-api-key"))
      }
      const { principal } = result
      if (principal.kind === "user" && principal.impersonation !== undefined && !READ_METHODS.has(request.method)) {
        const path = request.url.split("?")[0] ?? ""
        if (!END_IMPERSONATION.test(path)) {
          return yield* Effect.fail(new Forbidden({ error: "impersonation sessions are read-only" }))
        }
      }
      if (Option.isSome(result.rate)) {
        const { key, plan } = result.rate.value
        const decision = yield* limiter.take(key, options.planRates[plan] ?? options.planRates["free"] ?? 10)
        if (!decision.allowed) {
          return yield* Effect.fail(
            new TooManyRequests({
              error: `rate limit of the ${plan} plan exceeded, retry in ${decision.retryAfterSeconds} s`,
              retry_after_seconds: decision.retryAfterSeconds
            })
          )
        }
      }
      return principal
    })

    // The API-key schemes only document the headers; the Bearer scheme, tried last, decides.
    const stepAside = () => Effect.fail(unauthorized("missing credentials"))
    return Authentication.of({ apiKey: stepAside, serviceApiKey: stepAside, bearer: () => authenticate })
  })

export const layer = (
  options: RateOptions
): Layer.Layer<Authentication, never, AuthConfig | IdentityTokens | CredentialRepo | Accounts | RateLimiter> =>
  Layer.effect(Authentication, make(options))
