/**
 * Webhook signatures: HMAC-SHA256 with the subscription's secret, in two headers.
 *
 *   X-AIP-Signature:    sha256=<hex HMAC(secret, body)>
 *   X-Candor-Signature: t=<unix seconds>,v1=<hex HMAC(secret, "<t>." ‖ body)>
 *
 * The first is the AIP reference's header, kept so existing receivers keep working; it signs only
 * the body, so a captured delivery can be replayed forever. The second (Stripe's scheme) signs the
 * timestamp with the body, so a receiver can refuse deliveries older than a few minutes (five is
 * the usual advice). During a secret rotation the sender signs with every live secret and the header
 * carries one `v1=` per secret; a receiver accepts the delivery if any of them matches.
 *
 * node:crypto's HMAC and `timingSafeEqual` are pure computation, so this stays in `core/`.
 */
import { createHmac } from "node:crypto"
import { bufferView, bytesEqual, fromHex, utf8 } from "./Bytes.js"

export const AIP_SIGNATURE_HEADER = "X-AIP-Signature"
export const CANDOR_SIGNATURE_HEADER = "X-Candor-Signature"
/** Deliveries further than this from the receiver's clock (either way) are refused. */
export const DEFAULT_WEBHOOK_TOLERANCE_SECONDS = 300

export type WebhookSecret = string | Uint8Array
export type WebhookBody = string | Uint8Array

/** A type alias, not an interface, so it passes as a `HeaderSource` record. */
export type WebhookSignatureHeaders = {
  readonly "X-AIP-Signature": string
  readonly "X-Candor-Signature": string
}

const bytesOf = (data: string | Uint8Array): Uint8Array => (typeof data === "string" ? utf8(data) : data)

const hmac = (secret: WebhookSecret, ...parts: ReadonlyArray<Uint8Array>): Uint8Array => {
  const mac = createHmac("sha256", bytesOf(secret))
  for (const part of parts) mac.update(part)
  return bufferView(mac.digest())
}

const unixSeconds = (now: Date): number => Math.floor(now.getTime() / 1000)

/** `sha256=<hex>` over the body alone (the AIP reference's value). */
export const aipSignature = (secret: WebhookSecret, body: WebhookBody): string =>
  `sha256=${Buffer.from(hmac(secret, bytesOf(body))).toString("hex")}`

const timestampedMac = (secret: WebhookSecret, timestamp: number, body: WebhookBody): Uint8Array =>
  hmac(secret, utf8(`${timestamp}.`), bytesOf(body))

/**
 * The headers of one delivery signed at `now`. Several secrets (a rotation in progress) give one
 * `v1=` each in the Candor header; the AIP header uses the first secret.
 */
export const signWebhook = (
  secrets: WebhookSecret | ReadonlyArray<WebhookSecret>,
  body: WebhookBody,
  now: Date
): WebhookSignatureHeaders => {
  const list: ReadonlyArray<WebhookSecret> =
    typeof secrets === "string" || secrets instanceof Uint8Array ? [secrets] : secrets
  const first = list[0]
  if (first === undefined) throw new RangeError("signWebhook needs at least one secret")
  const t = unixSeconds(now)
  const v1 = list.map((secret) => `v1=${Buffer.from(timestampedMac(secret, t, body)).toString("hex")}`)
  return { [AIP_SIGNATURE_HEADER]: aipSignature(first, body), [CANDOR_SIGNATURE_HEADER]: [`t=${t}`, ...v1].join(",") }
}

export type WebhookVerificationFailure =
  "missing_signature" | "malformed_signature" | "timestamp_out_of_tolerance" | "signature_mismatch"

export type WebhookVerification =
  | { readonly ok: true; readonly timestamp: number }
  | { readonly ok: false; readonly reason: WebhookVerificationFailure }

/** Request headers as Node, fetch or a plain object hold them; names are matched case-insensitively. */
export type HeaderSource =
  | { readonly get: (name: string) => string | null }
  | Readonly<Record<string, string | ReadonlyArray<string> | undefined>>

const headerValue = (headers: HeaderSource, name: string): string | undefined => {
  if (typeof headers.get === "function")
    return (headers as { get: (name: string) => string | null }).get(name) ?? undefined
  const wanted = name.toLowerCase()
  for (const [key, value] of Object.entries(headers as Record<string, unknown>)) {
    if (key.toLowerCase() !== wanted) continue
    if (typeof value === "string") return value
    if (Array.isArray(value)) return value.join(",")
  }
  return undefined
}

const DECIMAL = /^\d{1,15}$/
const HEX_MAC = /^[0-9a-f]{64}$/i

/** `t=<seconds>` once and one or more `v1=<hex>`; other schemes (`v0=`, future `v2=`) are ignored. */
const parseCandorHeader = (
  value: string
): { readonly t: number; readonly v1: ReadonlyArray<Uint8Array> } | undefined => {
  let t: number | undefined
  const v1: Array<Uint8Array> = []
  for (const item of value.split(",")) {
    const eq = item.indexOf("=")
    if (eq < 0) return undefined
    const key = item.slice(0, eq).trim()
    const val = item.slice(eq + 1).trim()
    if (key === "t") {
      if (t !== undefined || !DECIMAL.test(val)) return undefined
      t = Number(val)
    } else if (key === "v1") {
      const mac = HEX_MAC.test(val) ? fromHex(val) : undefined
      if (mac === undefined) return undefined
      v1.push(mac)
    }
  }
  return t === undefined || v1.length === 0 ? undefined : { t, v1 }
}

/**
 * Checks `X-Candor-Signature` against the raw body as received (before any JSON parsing): the
 * timestamp must be within `toleranceSeconds` of `now`, and one `v1` must be the HMAC of
 * `"<t>." ‖ body`. Comparison is constant-time.
 */
export const verifyWebhook = (
  secret: WebhookSecret,
  body: WebhookBody,
  headers: HeaderSource,
  now: Date,
  toleranceSeconds: number = DEFAULT_WEBHOOK_TOLERANCE_SECONDS
): WebhookVerification => {
  const value = headerValue(headers, CANDOR_SIGNATURE_HEADER)
  if (value === undefined || value.trim() === "") return { ok: false, reason: "missing_signature" }
  const parsed = parseCandorHeader(value)
  if (parsed === undefined) return { ok: false, reason: "malformed_signature" }
  if (Math.abs(unixSeconds(now) - parsed.t) > toleranceSeconds)
    return { ok: false, reason: "timestamp_out_of_tolerance" }
  const expected = timestampedMac(secret, parsed.t, body)
  let match = false
  for (const mac of parsed.v1) match = bytesEqual(mac, expected) || match // no early exit: same work whichever matches
  return match ? { ok: true, timestamp: parsed.t } : { ok: false, reason: "signature_mismatch" }
}

/**
 * Checks Mnemom's `X-AIP-Signature` (body only). It cannot detect replays: prefer
 * `verifyWebhook` wherever the receiver is yours.
 */
export const verifyAipSignature = (secret: WebhookSecret, body: WebhookBody, headers: HeaderSource): boolean => {
  const value = headerValue(headers, AIP_SIGNATURE_HEADER)?.trim()
  if (value === undefined || !value.startsWith("sha256=")) return false
  const hex = value.slice("sha256=".length)
  const mac = HEX_MAC.test(hex) ? fromHex(hex) : undefined
  return mac !== undefined && bytesEqual(mac, hmac(secret, bytesOf(body)))
}
