/**
 * Every route of the API port that answers without credentials, with its rate class and what it
 * takes (SECURITY.md, "Unauthenticated routes", is this table in prose; a test holds the two and the
 * served routes together, so a new public route without a class fails).
 *
 * Classes are per-client token buckets (./PublicRateLimit.ts): a rate per minute and a burst. The
 * defaults follow the work a request costs: reading one record is an indexed lookup, so a verifier
 * may audit an agent's certificates one by one; a certificate page or the benchmarks read many rows;
 * chain verification reads a whole log (cached per tree size, but a cold or grown log is real work);
 * `POST /v1/verify` checks signatures and possibly a STARK proof in a body of up to 1 MiB.
 * `CANDOR_PUBLIC_RATE_LIMITS` overrides any of them (src/Config.ts).
 */
import * as Either from "effect/Either"

export const RATE_CLASSES = ["record", "listing", "chain", "verify", "static", "health", "sign_in", "other"] as const
export type RateClass = (typeof RATE_CLASSES)[number]

export interface ClassLimit {
  /** Tokens refilled per minute; 0: no limit. */
  readonly perMinute: number
  /** Bucket size: requests a client may make at once. */
  readonly burst: number
}

export type PublicRateLimits = Readonly<Record<RateClass, ClassLimit>>

export const DEFAULT_PUBLIC_RATE_LIMITS: PublicRateLimits = {
  record: { perMinute: 1200, burst: 300 },
  listing: { perMinute: 120, burst: 30 },
  chain: { perMinute: 10, burst: 10 },
  verify: { perMinute: 120, burst: 30 },
  static: { perMinute: 600, burst: 200 },
  health: { perMinute: 600, burst: 60 },
  sign_in: { perMinute: 10, burst: 5 },
  other: { perMinute: 300, burst: 60 }
}

/** No limit at all (tests that are not about limits). */
export const UNLIMITED: PublicRateLimits = Object.fromEntries(
  RATE_CLASSES.map((name) => [name, { perMinute: 0, burst: 1 }])
) as unknown as PublicRateLimits

export const CLASS_MEANINGS: Readonly<Record<RateClass, string>> = {
  record: "reads of one record: a certificate, a proof, a root, cosignatures, a reputation, a badge, the page",
  listing: "reads of many records: a page of up to 1,000 certificates, the benchmarks",
  chain: "whole-log work: chain verification (and the page's, when its log is not verified at its size yet)",
  verify: "POST /v1/verify: signatures and verdict proofs of a posted certificate",
  static: "documents that do not depend on the caller: keys, OpenAPI, docs, the event catalogue, the console",
  health: "probes and metrics",
  sign_in: "the console operator's code exchange",
  other: "anything else asked without a valid credential (unknown paths, 401s)"
}

/** What a route's path names: the private rule applies to agents, their checkpoints and teams. */
export type Subject = "agent" | "checkpoint" | "team"

export interface PublicRoute {
  readonly method: "GET" | "POST"
  /** The router's template (`:param` segments, `*` for a subtree). */
  readonly path: string
  readonly rateClass: RateClass
  readonly subject?: Subject
}

const route = (method: "GET" | "POST", path: string, rateClass: RateClass, subject?: Subject): PublicRoute =>
  subject === undefined ? { method, path, rateClass } : { method, path, rateClass, subject }

export const PUBLIC_ROUTES: ReadonlyArray<PublicRoute> = [
  // Verification (docs/api.md, "Verification API")
  route("GET", "/v1/keys", "static"),
  route("GET", "/v1/checkpoints/:checkpoint_id/certificate", "record", "checkpoint"),
  route("GET", "/v1/checkpoints/:checkpoint_id/inclusion-proof", "record", "checkpoint"),
  route("GET", "/v1/checkpoints/:checkpoint_id/proof", "record", "checkpoint"),
  route("GET", "/v1/agents/:agent_id/merkle-root", "record", "agent"),
  route("GET", "/v1/agents/:agent_id/cosignatures", "record", "agent"),
  route("GET", "/v1/agents/:agent_id/consistency-proof", "record", "agent"),
  route("GET", "/v1/agents/:agent_id/certificates", "listing", "agent"),
  route("GET", "/v1/reputation/:agent_id/verify", "chain", "agent"),
  route("POST", "/v1/verify", "verify"),
  // Reputation
  route("GET", "/v1/reputation/:agent_id", "record", "agent"),
  route("GET", "/v1/reputation/:agent_id/history", "record", "agent"),
  route("GET", "/v1/reputation/:agent_id/badge.svg", "record", "agent"),
  route("GET", "/v1/teams/:team_id/badge.svg", "record", "team"),
  route("GET", "/v1/reputation/benchmarks", "listing"),
  route("GET", "/agents/:agent_id/reputation", "record", "agent"),
  // Documents
  route("GET", "/v1/openapi.json", "static"),
  route("GET", "/docs", "static"),
  route("GET", "/v1/webhooks/event-types", "static"),
  route("GET", "/console", "static"),
  route("GET", "/console/*", "static"),
  // Operations
  route("GET", "/health/live", "health"),
  route("GET", "/health/ready", "health"),
  route("GET", "/metrics", "health"),
  // The console operator's sign-in (embedded default)
  route("POST", "/v1/console/sessions", "sign_in")
]

/** `record=1200/300` → one class's limit; `Left` says what is wrong. */
const parseEntry = (entry: string): Either.Either<readonly [RateClass, ClassLimit], string> => {
  const match = /^([a-z_]+)=(\d{1,7})\/(\d{1,7})$/.exec(entry)
  if (match === null) return Either.left(`entries must be <class>=<per minute>/<burst>, got "${entry}"`)
  const name = match[1] as RateClass
  if (!RATE_CLASSES.includes(name))
    return Either.left(`unknown class "${match[1]}" (classes: ${RATE_CLASSES.join(", ")})`)
  const perMinute = Number(match[2])
  const burst = Number(match[3])
  if (burst < 1) return Either.left(`"${entry}": the burst must be at least 1`)
  return Either.right([name, { perMinute, burst }] as const)
}

/**
 * `CANDOR_PUBLIC_RATE_LIMITS`: `<class>=<per minute>/<burst>` entries separated by commas or spaces,
 * over the defaults; `<per minute>` 0 turns a class's limit off.
 */
export const parsePublicRateLimits = (text: string): Either.Either<PublicRateLimits, string> => {
  const limits: Record<RateClass, ClassLimit> = { ...DEFAULT_PUBLIC_RATE_LIMITS }
  for (const entry of text.split(/[\s,]+/).filter((part) => part !== "")) {
    const parsed = parseEntry(entry)
    if (Either.isLeft(parsed)) return Either.left(parsed.left)
    const [name, limit] = parsed.right
    limits[name] = limit
  }
  return Either.right(limits)
}

/** The defaults as `CANDOR_PUBLIC_RATE_LIMITS` would spell them (the default column of docs/configuration.md). */
export const formatPublicRateLimits = (limits: PublicRateLimits): string =>
  RATE_CLASSES.map((name) => `${name}=${limits[name].perMinute}/${limits[name].burst}`).join(",")
