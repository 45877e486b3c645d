/**
 * The one warning a server logs when it accepts connections from other machines over plain HTTP.
 * A warning, not an error: many deployments terminate TLS in a proxy or load balancer in front.
 */
import * as Effect from "effect/Effect"
import { isLoopbackHost } from "../../adapters/http/Tls.js"

/** Which server: `api` (HOST:PORT, health and the API) or `gateway` (HOST:GATEWAY_PORT). */
export type ServerName = "api" | "gateway"

/** The warning's text when `host` is reachable from other machines and TLS is off; otherwise nothing. */
export const plainHttpWarning = (server: ServerName, host: string, tls: boolean): string | undefined =>
  tls || isLoopbackHost(host)
    ? undefined
    : `the ${server} server listens on ${host} over plain HTTP: set TLS_CERT_FILE and TLS_KEY_FILE ` +
      `to serve HTTPS, unless a TLS-terminating proxy is in front`

/** Logs the warning (once, at startup) when `plainHttpWarning` gives one. */
export const warnIfPlainHttp = (server: ServerName, host: string, tls: boolean): Effect.Effect<void> => {
  const warning = plainHttpWarning(server, host, tls)
  return warning === undefined ? Effect.void : Effect.logWarning(warning).pipe(Effect.annotateLogs({ server, host }))
}
