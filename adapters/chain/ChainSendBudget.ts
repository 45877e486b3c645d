/**
 * How many on-chain sends (POST /v1/on-chain/anchor-root and publish-scores) each organization may
 * make through the API: every send is a transaction the deployment's key pays gas for, so one
 * tenant must not be able to spend it for all (docs/api.md, "On-chain anchoring").
 *
 * A token bucket per payer (an organization, or the user of personal agents) holding `perHour`
 * sends, refilled at `perHour` an hour: up to `perHour` at once, then one every 3600 / `perHour`
 * seconds. A send of agents of several organizations takes one send from each, and only when each
 * has one left, so a refused send costs nobody anything.
 *
 * Buckets live in this process (with N API processes, a payer gets up to N times the rate, as for
 * the request rate limits). The payers are organizations and users that own agents, never a text a
 * caller chooses, and full buckets are dropped, so memory follows the tenants that sent within the
 * last hour. Time comes from `Clock`, so tests drive it with TestClock.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

export type SendDecision =
  | { readonly allowed: true }
  /** Whole seconds until every payer has a send again (at least 1): the `Retry-After` header. */
  | { readonly allowed: false; readonly retryAfterSeconds: number }

export class ChainSendBudget extends Context.Tag("candor/adapters/chain/ChainSendBudget")<
  ChainSendBudget,
  {
    /** Takes one send from each payer's bucket when every one has a send left; else takes none. */
    readonly take: (payers: ReadonlyArray<string>) => Effect.Effect<SendDecision>
  }
>() {}

interface Bucket {
  sends: number
  at: number
}

const HOUR_MS = 3_600_000

/** Full buckets are swept this often at most. */
const SWEEP_MS = 60_000

export const make = (perHour: number) =>
  Effect.sync(() => {
    const capacity = Math.max(1, perHour)
    const buckets = new Map<string, Bucket>()
    let sweptAt = 0
    // Multiplied before divided: whole milliseconds give exact refills, so Retry-After is not off by a rounding.
    const refilled = (bucket: Bucket, now: number) =>
      Math.min(capacity, bucket.sends + ((now - bucket.at) * perHour) / HOUR_MS)
    return ChainSendBudget.of({
      take: (payers) =>
        Effect.map(Clock.currentTimeMillis, (now): SendDecision => {
          if (now - sweptAt >= SWEEP_MS) {
            sweptAt = now
            for (const [payer, bucket] of buckets) if (refilled(bucket, now) >= capacity) buckets.delete(payer)
          }
          const distinct = [...new Set(payers)]
          let waitMs = 0
          for (const payer of distinct) {
            const bucket = buckets.get(payer)
            const sends = bucket === undefined ? capacity : refilled(bucket, now)
            if (sends < 1) waitMs = Math.max(waitMs, Math.round(((1 - sends) * HOUR_MS) / perHour))
          }
          if (waitMs > 0) return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) }
          for (const payer of distinct) {
            const bucket = buckets.get(payer)
            buckets.set(payer, { sends: (bucket === undefined ? capacity : refilled(bucket, now)) - 1, at: now })
          }
          return { allowed: true }
        })
    })
  })

export const layer = (perHour: number): Layer.Layer<ChainSendBudget> => Layer.effect(ChainSendBudget, make(perHour))
