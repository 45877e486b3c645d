/**
 * Per-client rate limits on everything the API port answers without credentials (./PublicRoutes.ts
 * has the routes and their classes; SECURITY.md, "Unauthenticated routes"): a global router
 * middleware, so it runs before a route reads its body or the store, on every role's server
 * (health and metrics included).
 *
 * - The client is adapters/http/ClientAddress.ts's: the socket address, or the first untrusted
 *   `X-Forwarded-For` hop behind `CANDOR_TRUSTED_PROXIES`; IPv6 by /64.
 * - A request is classified as the router would route it (the same matcher, find-my-way, over the
 *   same templates), so `/v1/reputation/search` is the authenticated route, not an agent id.
 * - A public route takes a token from its class's bucket for the client, credentials or not.
 * - Any other request (an authenticated route, an unknown path) without credentials takes one from
 *   `other`. With credentials it takes one from the client's failed-credentials bucket (of `other`'s
 *   size) before the credential is looked up, and gets it back unless the answer is 401 (its
 *   credential's plan limit applies besides): a client cannot make the store look up guessed keys
 *   faster than `other` allows, even concurrently, and valid keys are slowed only at an address that
 *   keeps sending invalid ones (or has more than a burst of requests in flight at once).
 * - Refused: 429 `{error}` with `Retry-After`, counted in `candor_public_rate_limited_total{class}`.
 * - A public route's answer to a request with credentials is `Cache-Control: private, no-store`: it may
 *   hold a private agent shown to its reader (src/api/handlers/PublicAccess.ts), which no shared cache
 *   may keep for the next caller.
 *
 * The route handler can spend more of the client's budget through `PublicClient` (the reputation
 * page charges `chain` when it must verify a log).
 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpLayerRouter from "@effect/platform/HttpLayerRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Metric from "effect/Metric"
import { type RateDecision, makeWith as makeRateLimiter } from "../../adapters/auth/RateLimiter.js"
import { requestClientKey, type TrustedProxies } from "../../adapters/http/ClientAddress.js"
import { publicRateLimited } from "../../adapters/metrics/VerificationMetrics.js"
import { CandorApi } from "../api/Api.js"
import { PUBLIC_ROUTES, type PublicRateLimits, type RateClass } from "./PublicRoutes.js"

export interface PublicRateLimitOptions {
  readonly limits: PublicRateLimits
  readonly trustedProxies: TrustedProxies
  /** Client buckets kept at most (default 100,000; see adapters/auth/RateLimiter.ts). */
  readonly maxBuckets?: number
}

/** The client of the request being answered, and its budget in another class. */
export class PublicClient extends Context.Tag("candor/src/http/PublicClient")<
  PublicClient,
  {
    readonly key: string
    /** Takes one token of `rateClass` for this client. */
    readonly take: (rateClass: RateClass) => Effect.Effect<RateDecision>
  }
>() {}

/** What a route is, for the limits: a public class, or an authenticated route. */
export type RouteKind = RateClass | "authenticated"

export interface ServedRoute {
  readonly method: string
  readonly path: string
  readonly authenticated: boolean
}

/** Every HttpApi endpoint, and whether the Authentication middleware guards it. */
export const apiRoutes = (): ReadonlyArray<ServedRoute> => {
  const routes: Array<ServedRoute> = []
  HttpApi.reflect(CandorApi, {
    onGroup() {},
    onEndpoint({ endpoint, middleware }) {
      const authenticated = [...middleware].some((tag) => tag.key === "candor/adapters/auth/Authentication")
      routes.push({ method: endpoint.method, path: endpoint.path, authenticated })
    }
  })
  return routes
}

/**
 * The classifier of requests: the public routes' classes, "authenticated" for the API's guarded
 * routes, and `other` for an unguarded endpoint missing from the table (a test forbids that) and for
 * any path no route serves.
 */
export const classifier = (): ((method: string, url: string) => RouteKind) => {
  const router = HttpLayerRouter.FindMyWay.make<RouteKind>({})
  const classes = new Map(PUBLIC_ROUTES.map((route) => [`${route.method} ${route.path}`, route.rateClass]))
  const added = new Set<string>()
  const on = (method: string, path: string, kind: RouteKind) => {
    const key = `${method} ${path}`
    if (added.has(key)) return
    added.add(key)
    router.on(method, path as HttpLayerRouter.PathInput, kind)
  }
  for (const route of PUBLIC_ROUTES) on(route.method, route.path, route.rateClass)
  for (const route of apiRoutes())
    on(
      route.method,
      route.path,
      route.authenticated ? "authenticated" : (classes.get(`${route.method} ${route.path}`) ?? "other")
    )
  return (method, url) => {
    const found = router.find(method, url) ?? (method === "HEAD" ? router.find("GET", url) : undefined)
    return found?.handler ?? "other"
  }
}

const CREDENTIAL_HEADERS = ["authorization", "x-api-key", "x-service-api-key"] as const

const tooMany = (rateClass: RateClass, retryAfterSeconds: number) =>
  Effect.as(
    Metric.update(publicRateLimited.pipe(Metric.tagged("class", rateClass)), 1),
    HttpServerResponse.unsafeJson(
      {
        error: `too many requests from your address to the ${rateClass} routes: retry in ${retryAfterSeconds} s`
      },
      { status: 429, headers: { "retry-after": String(retryAfterSeconds) } }
    )
  )

export const PublicRateLimitLive = (options: PublicRateLimitOptions) =>
  HttpLayerRouter.middleware(
    Effect.gen(function* () {
      const classify = classifier()
      const limiter = yield* makeRateLimiter({ maxBuckets: options.maxBuckets ?? 100_000 })
      const clientOf = requestClientKey(options.trustedProxies)
      /** `bucket` names a second bucket of the class (failed credentials, apart from anonymous requests). */
      const bucketOf = (client: string, rateClass: RateClass, bucket?: string) => {
        const { burst, perMinute } = options.limits[rateClass]
        const key = `${rateClass}${bucket === undefined ? "" : `:${bucket}`}|${client}`
        return { key, perSecond: perMinute / 60, burst }
      }
      const spend = (client: string, rateClass: RateClass, bucket?: string) => {
        const { burst, key, perSecond } = bucketOf(client, rateClass, bucket)
        return limiter.take(key, perSecond, burst)
      }
      const giveBack = (client: string, rateClass: RateClass, bucket?: string) => {
        const { burst, key, perSecond } = bucketOf(client, rateClass, bucket)
        return limiter.refund(key, perSecond, burst)
      }
      return (httpEffect: Effect.Effect<HttpServerResponse.HttpServerResponse, HttpLayerRouter.unhandled>) =>
        Effect.gen(function* () {
          const request = yield* HttpServerRequest.HttpServerRequest
          const client = yield* clientOf
          const kind = classify(request.method, request.url)
          const served = Effect.provideService(httpEffect, PublicClient, {
            key: client,
            take: (rateClass) => spend(client, rateClass)
          })
          const credentials = CREDENTIAL_HEADERS.some((header) => request.headers[header] !== undefined)
          if (kind !== "authenticated" && kind !== "other") {
            const decision = yield* spend(client, kind)
            if (!decision.allowed) return yield* tooMany(kind, decision.retryAfterSeconds)
            const response = yield* served
            // What a credential was shown (a private agent, to its readers) must never sit in a shared cache.
            return credentials ? HttpServerResponse.setHeader(response, "cache-control", "private, no-store") : response
          }
          // Anonymous requests and failed credentials have buckets of their own: a neighbour behind the
          // same address asking for unknown paths does not stop anyone's valid key.
          const bucket = credentials ? "credentials" : undefined
          const decision = yield* spend(client, "other", bucket)
          if (!decision.allowed) return yield* tooMany("other", decision.retryAfterSeconds)
          if (!credentials) return yield* served
          // Taken before the lookup (so concurrent guesses are bounded too), given back unless it was a 401.
          return yield* Effect.onExit(served, (exit) =>
            Exit.isSuccess(exit) && exit.value.status === 401 ? Effect.void : giveBack(client, "other", bucket)
          )
        })
    }),
    { global: true }
  )
