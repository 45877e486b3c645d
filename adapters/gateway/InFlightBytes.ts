/**
 * Request bytes the gateway holds at once: per credential (the hash of the provider key, whatever
 * `x-candor-agent` label comes with it, so new labels buy no new budget), per organization (the
 * agent's, when the gateway's copy of its settings names one) and for the whole process (issue 24).
 * A body is held from its first byte until its exchange ends (the client's response closed): the
 * gateway buffers every request body before forwarding it, up to 32 MiB each, so without a budget a
 * few callers can fill the process's memory and every tenant's requests fail.
 *
 * The server (GatewayServer.ts) asks before reading: a declared `content-length` that does not fit is
 * refused at once; otherwise each chunk is taken as it arrives, and the first that does not fit ends
 * the upload. Over the credential's or the organization's cap the answer is 429, over the process's
 * 503, both `{error}` naming the cap with `Retry-After`, and the connection closes (the rest of the
 * upload is never read). Limits: GATEWAY_INFLIGHT_BYTES_PER_CREDENTIAL, GATEWAY_INFLIGHT_BYTES_PER_ORG,
 * GATEWAY_INFLIGHT_BYTES (src/Config.ts).
 */
import { countOverCap } from "../metrics/GatewayMetrics.js"

export interface InFlightLimits {
  readonly perCredential: number
  readonly perOrg: number
  readonly total: number
}

const MIB = 1024 * 1024

export const defaultInFlightLimits: InFlightLimits = { perCredential: 64 * MIB, perOrg: 256 * MIB, total: 1024 * MIB }

/** Whose bytes a request's are, read from its headers before its body. */
export interface BytesHolder {
  /** SHA-256 hex of the provider key; `undefined` when the request carries none (they share one budget). */
  readonly credential: string | undefined
  /** The agent's organization, when known. */
  readonly org: string | undefined
}

export type InFlightCap = "credential" | "organization" | "process"

/** The answer over a cap: status and the sentence naming the setting (counted in `candor_gateway_requests_over_cap_total`). */
export const refusalOf = (cap: InFlightCap) => {
  countOverCap(cap === "process" ? "inflight_process" : cap === "organization" ? "inflight_org" : "inflight_credential")
  return cap === "process"
    ? {
        status: 503,
        error:
          "the gateway holds as many request bytes as it may right now (GATEWAY_INFLIGHT_BYTES); retry after a moment"
      }
    : cap === "organization"
      ? {
          status: 429,
          error:
            "too many request bytes in flight for this organization (GATEWAY_INFLIGHT_BYTES_PER_ORG); retry once earlier requests finish"
        }
      : {
          status: 429,
          error:
            "too many request bytes in flight for this credential (GATEWAY_INFLIGHT_BYTES_PER_CREDENTIAL); retry once earlier requests finish"
        }
}

/** Seconds a refused client is told to wait: long enough for typical exchanges in flight to end. */
export const RETRY_AFTER_SECONDS = 1

/** The credential bucket of requests without a key. */
const NO_CREDENTIAL = ""

export class InFlightBytes {
  private total = 0
  private readonly byCredential = new Map<string, number>()
  private readonly byOrg = new Map<string, number>()

  constructor(readonly limits: InFlightLimits = defaultInFlightLimits) {}

  /** Bytes held now: in all, and for a holder (tests, metrics). */
  held(holder?: BytesHolder): { readonly total: number; readonly credential: number; readonly org: number } {
    return {
      total: this.total,
      credential: this.byCredential.get(holder?.credential ?? NO_CREDENTIAL) ?? 0,
      org: holder?.org === undefined ? 0 : (this.byOrg.get(holder.org) ?? 0)
    }
  }

  /** The cap that `bytes` more for `holder` would pass, if any (the process's first: it is everyone's). */
  wouldPass(holder: BytesHolder, bytes: number): InFlightCap | undefined {
    if (this.total + bytes > this.limits.total) return "process"
    if ((this.byCredential.get(holder.credential ?? NO_CREDENTIAL) ?? 0) + bytes > this.limits.perCredential) {
      return "credential"
    }
    if (holder.org !== undefined && (this.byOrg.get(holder.org) ?? 0) + bytes > this.limits.perOrg) {
      return "organization"
    }
    return undefined
  }

  /** Takes `bytes` for `holder`, or nothing and the cap they would pass. */
  take(holder: BytesHolder, bytes: number): InFlightCap | undefined {
    const passed = this.wouldPass(holder, bytes)
    if (passed !== undefined) return passed
    this.total += bytes
    add(this.byCredential, holder.credential ?? NO_CREDENTIAL, bytes)
    if (holder.org !== undefined) add(this.byOrg, holder.org, bytes)
    return undefined
  }

  /** Gives back what `take` took (entries at zero are dropped, so the maps hold only holders in flight). */
  release(holder: BytesHolder, bytes: number): void {
    if (bytes === 0) return
    this.total -= bytes
    add(this.byCredential, holder.credential ?? NO_CREDENTIAL, -bytes)
    if (holder.org !== undefined) add(this.byOrg, holder.org, -bytes)
  }
}

const add = (map: Map<string, number>, key: string, bytes: number) => {
  const next = (map.get(key) ?? 0) + bytes
  if (next <= 0) map.delete(key)
  else map.set(key, next)
}
