/**
 * GET /v1/orgs/{org_id}/coherence: the fleet coherence of the organization's agents with an active
 * card (core/Coherence.ts), cached in process memory.
 *
 * The cache holds one answer per organization for five minutes, tagged with the fleet's fingerprint
 * (adapters/store/CoherenceRepo.ts). Every request reads the fingerprint first (one indexed query,
 * no card document): when it differs, the answer is computed again at once, so a card changed through
 * any process is seen by the next request. There is therefore no `?refresh=true`: nothing a client
 * could refresh is stale. The five minutes only bound how long an unchanged answer is kept; the
 * cache keeps at most `CACHE_CAPACITY` organizations (least recently used leave first).
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Cache from "effect/Cache"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { BadRequest, NotFound } from "../../../adapters/http/ApiErrors.js"
import { CoherenceRepo } from "../../../adapters/store/CoherenceRepo.js"
import { fleetCoherence } from "../../../core/Coherence.js"
import type { OrgCoherence } from "../../../core/schema/Coherence.js"
import { CandorApi } from "../Api.js"
import { internal, orgRole } from "./Access.js"

export const CACHE_TTL = Duration.minutes(5)
export const CACHE_CAPACITY = 128
/** Fleets above this many carded agents are refused: C(200, 2) = 19,900 pairs is already a few MB of JSON. */
export const MAX_FLEET_AGENTS = 200

interface Cached {
  readonly fingerprint: string
  readonly body: OrgCoherence
}

const notFound = (orgId: string) => new NotFound({ error: `organization ${orgId} not found` })

const tooLarge = (orgId: string, carded: number) =>
  new BadRequest({
    error:
      `organization ${orgId} has ${carded} agents with an active card; ` +
      `fleet coherence is computed for at most ${MAX_FLEET_AGENTS}`
  })

/** Reads the fleet and computes its coherence; the fingerprint is read first, so the answer is at least that fresh. */
const compute = (orgId: string) =>
  Effect.gen(function* () {
    const repo = yield* CoherenceRepo
    const print = yield* repo.fingerprint(orgId)
    if (print === undefined) return yield* Effect.fail(notFound(orgId))
    if (print.carded > MAX_FLEET_AGENTS) return yield* Effect.fail(tooLarge(orgId, print.carded))
    const fleet = yield* repo.fleet(orgId)
    const now = yield* Clock.currentTimeMillis
    const body: OrgCoherence = {
      org_id: orgId,
      agent_count: fleet.agents.length,
      agents_without_card: fleet.without_card,
      ...fleetCoherence(fleet.agents),
      computed_at: new Date(now).toISOString(),
      cached_until: new Date(now + Duration.toMillis(CACHE_TTL)).toISOString()
    }
    return { fingerprint: print.fingerprint, body } satisfies Cached
  })

export const CoherenceLive = HttpApiBuilder.group(CandorApi, "coherence", (handlers) =>
  Effect.gen(function* () {
    const cache = yield* Cache.makeWith({
      capacity: CACHE_CAPACITY,
      lookup: compute,
      // Failures are not kept (they are also dropped at once below, the clock may not have moved).
      timeToLive: (exit) => (Exit.isSuccess(exit) ? CACHE_TTL : Duration.zero)
    })
    const cached = (orgId: string) => cache.get(orgId).pipe(Effect.tapError(() => cache.invalidate(orgId)))

    return handlers.handle("getOrgCoherence", ({ path }) =>
      Effect.gen(function* () {
        yield* orgRole(path.org_id)
        const print = yield* (yield* CoherenceRepo).fingerprint(path.org_id)
        // The service-role key has a role in every organization id, existing or not.
        if (print === undefined) return yield* Effect.fail(notFound(path.org_id))
        const entry = yield* cached(path.org_id)
        if (entry.fingerprint === print.fingerprint) return entry.body
        yield* cache.invalidate(path.org_id)
        return (yield* cached(path.org_id)).body
      }).pipe(Effect.catchTag("StoreError", internal))
    )
  })
)
