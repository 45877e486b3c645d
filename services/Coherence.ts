/**
 * The fleet coherence of an organization's agents with an active card (core/Coherence.ts), cached in
 * process memory.
 *
 * The cache holds one answer per organization for five minutes, tagged with the fleet's version
 * (adapters/store/CoherenceRepo.ts). Every read takes the version first (one primary-key read):
 * when it differs, the answer is computed again at once, so a card changed through any process is
 * seen by the next read. A fleet too large to compute is an answer too, kept the same way, so asking
 * again does not read its cards again. There is therefore no `?refresh=true`: nothing a client
 * could refresh is stale. The five minutes only bound how long an unchanged answer is kept; the
 * cache keeps at most `CACHE_CAPACITY` organizations (least recently used leave first).
 *
 * Whether the caller may read the organization is the caller's to check.
 */
import * as Cache from "effect/Cache"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import { BadRequest, NotFound } from "../adapters/http/ApiErrors.js"
import { CoherenceRepo } from "../adapters/store/CoherenceRepo.js"
import { fleetCoherence } from "../core/Coherence.js"
import type { OrgCoherence } from "../core/schema/Coherence.js"

export const CACHE_TTL = Duration.minutes(5)
export const CACHE_CAPACITY = 128
/** Fleets above this many carded agents are refused: C(200, 2) = 19,900 pairs is already a few MB of JSON. */
export const MAX_FLEET_AGENTS = 200

interface Cached {
  readonly version: string
  /** The answer, or the carded agents of a fleet too large to compute one for. */
  readonly body: OrgCoherence | { readonly tooLarge: number }
}

const notFound = (orgId: string) => new NotFound({ error: `organization ${orgId} not found` })

const tooLarge = (orgId: string, carded: number) =>
  new BadRequest({
    error:
      `organization ${orgId} has ${carded} agents with an active card; ` +
      `fleet coherence is computed for at most ${MAX_FLEET_AGENTS}`
  })

export const make = Effect.gen(function* () {
  const repo = yield* CoherenceRepo

  /** Reads the fleet and computes its coherence; the version is read first, so the answer is at least that fresh. */
  const compute = (orgId: string) =>
    Effect.gen(function* () {
      const version = yield* repo.fleetVersion(orgId)
      if (version === undefined) return yield* Effect.fail(notFound(orgId))
      const fleet = yield* repo.fleet(orgId)
      if (fleet.agents.length > MAX_FLEET_AGENTS)
        return { version, body: { tooLarge: fleet.agents.length } } satisfies Cached
      const now = yield* Clock.currentTimeMillis
      const body: OrgCoherence = {
        org_id: orgId,
        agent_count: fleet.agents.length,
        agents_without_card: fleet.without_card,
        ...fleetCoherence(fleet.agents),
        computed_at: new Date(now).toISOString(),
        cached_until: new Date(now + Duration.toMillis(CACHE_TTL)).toISOString()
      }
      return { version, body } satisfies Cached
    })

  const cache = yield* Cache.makeWith({
    capacity: CACHE_CAPACITY,
    lookup: compute,
    // Failures are not kept (they are also dropped at once below, the clock may not have moved).
    timeToLive: (exit) => (Exit.isSuccess(exit) ? CACHE_TTL : Duration.zero)
  })
  const cached = (orgId: string) => cache.get(orgId).pipe(Effect.tapError(() => cache.invalidate(orgId)))

  const answer = (orgId: string, entry: Cached) =>
    "tooLarge" in entry.body ? Effect.fail(tooLarge(orgId, entry.body.tooLarge)) : Effect.succeed(entry.body)

  /** The organization's fleet coherence: the cached answer while the fleet's version is unchanged. */
  const ofOrg = (orgId: string) =>
    Effect.gen(function* () {
      const version = yield* repo.fleetVersion(orgId)
      // The service-role key has a role in every organization id, existing or not.
      if (version === undefined) return yield* Effect.fail(notFound(orgId))
      const entry = yield* cached(orgId)
      if (entry.version === version) return yield* answer(orgId, entry)
      yield* cache.invalidate(orgId)
      return yield* answer(orgId, yield* cached(orgId))
    })

  return { ofOrg }
})

export class Coherence extends Context.Tag("candor/services/Coherence")<
  Coherence,
  Effect.Effect.Success<typeof make>
>() {}

export const layer = Layer.effect(Coherence, make)
