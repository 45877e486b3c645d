/**
 * The gateway's limit on unknown keys. A request whose key Candor has no good record of (the agent
 * has no settings, and the provider never answered the key with anything but 401, 403 or an error of
 * its own) costs the provider a round trip and may create an agent; anyone can send such requests by
 * the thousand (guessing keys, or making agents by the million with made-up ones). They are limited
 * per client (`adapters/http/ClientAddress.ts`: the socket's peer, or behind `CANDOR_TRUSTED_PROXIES` the
 * first untrusted `X-Forwarded-For` hop; IPv6 by /64) with a token bucket: `burst` at once, `perMinute` a minute after
 * that; beyond it 429 `{error}` with `Retry-After`, before the provider. A request without any
 * credential counts as an unknown key.
 *
 * A key becomes known once the provider answers it with a status below 500 other than 401 and 403
 * (it authenticated the key): from then on it is never limited here. Both sets are bounded and
 * per process: the known keys keep the most recently used `knownKeys` (one forgotten is only limited
 * again until its next good answer), the buckets the most recently seen `clients` (a bucket dropped
 * is a full one again).
 */

export interface UnknownKeyLimits {
  /** Requests a minute per client once its burst is spent; 0 turns the limit off. */
  readonly perMinute: number
  /** Requests a client may send at once. */
  readonly burst: number
  /** Known-good key hashes remembered (most recently used kept). */
  readonly knownKeys: number
  /** Client buckets kept (most recently seen kept). */
  readonly clients: number
}

export const defaultUnknownKeyLimits: UnknownKeyLimits = {
  perMinute: 60,
  burst: 100,
  knownKeys: 10_000,
  clients: 65_536
}

interface Bucket {
  tokens: number
  at: number
}

/** Moves `key` to the end of `map`'s order (most recently used), inserting `value` when absent. */
const touch = <V>(map: Map<string, V>, key: string, value: V, capacity: number): V => {
  map.delete(key)
  if (map.size >= capacity) {
    const oldest = map.keys().next()
    if (!oldest.done) map.delete(oldest.value)
  }
  map.set(key, value)
  return value
}

export class UnknownKeys {
  private readonly known = new Map<string, true>()
  private readonly buckets = new Map<string, Bucket>()
  private readonly perMs: number

  constructor(private readonly limits: UnknownKeyLimits = defaultUnknownKeyLimits) {
    this.perMs = limits.perMinute / 60_000
  }

  /** Whether the provider has authenticated this key (a use keeps it among the remembered). */
  isKnown(keyHash: string): boolean {
    if (!this.known.has(keyHash)) return false
    touch(this.known, keyHash, true, this.limits.knownKeys)
    return true
  }

  /** The provider answered a request with this key: a status below 500 other than 401 and 403 makes it known. */
  noteAnswer(keyHash: string, status: number): void {
    if (status < 500 && status !== 401 && status !== 403) touch(this.known, keyHash, true, this.limits.knownKeys)
  }

  /** Takes a token from `client`'s bucket: `undefined` when allowed, else the whole seconds to wait (at least 1). */
  take(client: string, now: number): number | undefined {
    if (this.limits.perMinute <= 0) return undefined
    const capacity = Math.max(1, this.limits.burst)
    const previous = this.buckets.get(client)
    const bucket = touch(this.buckets, client, previous ?? { tokens: capacity, at: now }, this.limits.clients)
    bucket.tokens = Math.min(capacity, bucket.tokens + Math.max(0, now - bucket.at) * this.perMs)
    bucket.at = now
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1
      return undefined
    }
    return Math.max(1, Math.ceil((1 - bucket.tokens) / this.perMs / 1000))
  }
}
