/**
 * The per-request facts about the caller's account that authentication needs (the user row exists,
 * the plan that sets the rate limit), cached briefly so an authenticated request costs no query in
 * the common case. Writers of plans call `invalidate`, so a change applies at once in this process
 * (other processes see it within `TTL_MS`).
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { IdentityRepo } from "../store/identity/IdentityRepo.js"
import type { StoreError } from "../store/Store.js"

const TTL_MS = 10_000
/** Past this many entries the cache starts over (expired entries are otherwise only replaced). */
const MAX_ENTRIES = 100_000

export class Accounts extends Context.Tag("candor/adapters/auth/Accounts")<
  Accounts,
  {
    /** Creates the user on first sight (keeping the latest email); returns the user's plan. */
    readonly userPlan: (userId: string, email: string | undefined) => Effect.Effect<string, StoreError>
    readonly orgPlan: (orgId: string) => Effect.Effect<string, StoreError>
    /** Forget what is cached about a user or an organization (after a plan change). */
    readonly invalidate: (id: string) => Effect.Effect<void>
  }
>() {}

interface Entry {
  readonly plan: string
  readonly email: string | undefined
  readonly until: number
}

export const make = Effect.gen(function* () {
  const repo = yield* IdentityRepo
  const cache = new Map<string, Entry>()

  const cached = (key: string, email: string | undefined, load: Effect.Effect<string, StoreError>) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => {
      const entry = cache.get(key)
      if (entry !== undefined && entry.until > now && (email === undefined || entry.email === email)) {
        return Effect.succeed(entry.plan)
      }
      return Effect.tap(load, (plan) =>
        Effect.sync(() => {
          if (cache.size >= MAX_ENTRIES) cache.clear()
          cache.set(key, { plan, email, until: now + TTL_MS })
        })
      )
    })

  return Accounts.of({
    userPlan: (userId, email) =>
      cached(
        `user:${userId}`,
        email,
        Effect.map(repo.ensureUser(userId, email), (user) => user.plan_id)
      ),
    orgPlan: (orgId) =>
      cached(
        `org:${orgId}`,
        undefined,
        Effect.map(repo.getOrg(orgId), (org) => org?.plan_id ?? "free")
      ),
    invalidate: (id) =>
      Effect.sync(() => {
        cache.delete(`user:${id}`)
        cache.delete(`org:${id}`)
      })
  })
})

export const layer: Layer.Layer<Accounts, never, IdentityRepo> = Layer.effect(Accounts, make)
