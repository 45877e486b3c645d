/**
 * The console's routes: the operator code exchange (only where src/Serve.ts provided
 * `OperatorSignIn`, the embedded default with its own database) and the caller's description,
 * which refuses the service-role key: the console never holds it (docs/console.md, "Signing in").
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { OperatorSignIn } from "../../../adapters/auth/OperatorSignIn.js"
import { CurrentPrincipal } from "../../../adapters/auth/Principal.js"
import { Forbidden, NotFound, TooManyRequests, Unauthorized } from "../../../adapters/http/ApiErrors.js"
import { CandorApi } from "../Api.js"

export const ConsoleSignInLive = HttpApiBuilder.group(CandorApi, "consoleSignIn", (handlers) =>
  Effect.map(Effect.serviceOption(OperatorSignIn), (signIn) =>
    handlers.handle("exchangeOperatorCode", ({ payload }) => {
      if (Option.isNone(signIn)) {
        return Effect.fail(
          new NotFound({
            error: "operator sign-in links exist only on the embedded default (no DATABASE_URL, no NATS_URL)"
          })
        )
      }
      const exchange = signIn.value.exchange(payload.code)
      switch (exchange._tag) {
        case "Session":
          return Effect.succeed({
            token: exchange.token,
            expires_at: new Date(exchange.expiresAt).toISOString(),
            kind: "operator" as const
          })
        case "Refused":
          return Effect.fail(new Unauthorized({ error: "sign-in code invalid, used or expired" }))
        case "Throttled":
          return Effect.fail(
            new TooManyRequests({
              error: `too many failed sign-ins, retry in ${exchange.retryAfterSeconds} s`,
              retry_after_seconds: exchange.retryAfterSeconds
            })
          )
      }
    })
  )
)

/**
 * Why the console refuses the service-role key (the page shows it): the spec says the key must never
 * reach client code, and a browser tab is client code.
 */
export const SERVICE_KEY_REFUSED =
  "the console does not accept the service-role key: it must never reach a browser (it would sit in the tab's storage, readable by any script of the page). Sign in with the one-time operator link `candor serve` prints, a user token or an API key"

export const ConsoleLive = HttpApiBuilder.group(CandorApi, "console", (handlers) =>
  handlers.handle("consoleCaller", () =>
    Effect.gen(function* () {
      const principal = yield* CurrentPrincipal
      switch (principal.kind) {
        case "service":
          if (principal.operatorSession === undefined) return yield* new Forbidden({ error: SERVICE_KEY_REFUSED })
          return {
            kind: "operator" as const,
            user_id: null,
            email: null,
            org_id: null,
            role: null,
            read_only: false,
            expires_at: principal.operatorSession.expires_at
          }
        case "api_key":
          return {
            kind: "api_key" as const,
            user_id: principal.userId,
            email: null,
            org_id: principal.orgId ?? null,
            role: principal.role ?? null,
            read_only: false,
            expires_at: null
          }
        case "user":
          return {
            kind: "user" as const,
            user_id: principal.userId,
            email: principal.email ?? null,
            org_id: null,
            role: null,
            read_only: principal.impersonation !== undefined,
            expires_at: principal.impersonation?.expires_at ?? null
          }
      }
    })
  )
)
