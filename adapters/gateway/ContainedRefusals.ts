/**
 * The rate of a contained agent's refusals that are recorded (issue 26). Every 403 the gateway
 * answers is an enforcement record; a paused or killed agent that keeps calling would turn each of
 * its requests into one, a flood of rows saying the same thing. Up to `perSecond` refusals a second
 * per agent are answered 403 and recorded; beyond that the agent is answered 429 with `Retry-After`,
 * counted in `candor_gateway_contained_requests_throttled_total`, and not recorded one by one.
 *
 * A token bucket per agent (`perSecond` at once, `perSecond` a second after that), for the most
 * recently refused `agents` (bounded: a bucket dropped is a full one again). Per process.
 */

export interface ContainedRefusalLimits {
  /** Refusals a second per contained agent that are answered 403 and recorded. */
  readonly perSecond: number
  /** Agents whose bucket is kept (most recently refused kept). */
  readonly agents: number
}

export const defaultContainedRefusalLimits: ContainedRefusalLimits = { perSecond: 10, agents: 10_000 }

interface Bucket {
  tokens: number
  at: number
}

export class ContainedRefusals {
  private readonly buckets = new Map<string, Bucket>()
  private readonly perMs: number

  constructor(private readonly limits: ContainedRefusalLimits = defaultContainedRefusalLimits) {
    this.perMs = limits.perSecond / 1000
  }

  /** Takes a token from the agent's bucket: `undefined` when the refusal is recorded, else the whole seconds to wait (at least 1). */
  take(agentId: string, now: number): number | undefined {
    const capacity = Math.max(1, this.limits.perSecond)
    let bucket = this.buckets.get(agentId)
    if (bucket === undefined) {
      if (this.buckets.size >= this.limits.agents) {
        const oldest = this.buckets.keys().next()
        if (!oldest.done) this.buckets.delete(oldest.value)
      }
      bucket = { tokens: capacity, at: now }
    } else this.buckets.delete(agentId) // re-inserted below: the most recently refused last
    this.buckets.set(agentId, bucket)
    bucket.tokens = Math.min(capacity, bucket.tokens + Math.max(0, now - bucket.at) * this.perMs)
    bucket.at = now
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1
      return undefined
    }
    return Math.max(1, Math.ceil((1 - bucket.tokens) / this.perMs / 1000))
  }

  /** Agents with a bucket (tests: the bound holds). */
  get size(): number {
    return this.buckets.size
  }
}
