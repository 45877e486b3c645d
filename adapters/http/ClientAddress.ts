/**
 * Who is asking, as far as a per-client limit can tell: the address of the socket, or, when that
 * socket is one of the operator's trusted proxies (`CANDOR_TRUSTED_PROXIES`), the first hop of
 * `X-Forwarded-For` that is not a trusted proxy, read from the right. Entries further left were
 * written by the client itself and are never believed.
 *
 * The result is a client key: an IPv4 address, or the /64 prefix of an IPv6 address (one host
 * commonly owns a whole /64, so per-address limits would be trivially multiplied). IPv4-mapped IPv6
 * addresses (`::ffff:a.b.c.d`, what a dual-stack socket reports) are their IPv4 address.
 *
 * Nothing here knows an API or a route: the management API's public limits use it, and the gateway
 * can use it for requests it cannot attribute to a credential.
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import { BlockList, isIP } from "node:net"

/** The proxies whose `X-Forwarded-For` is believed. */
export interface TrustedProxies {
  /** The CIDRs as configured, normalised (`10.0.0.0/8`, `2001:db8::/32`). */
  readonly cidrs: ReadonlyArray<string>
  readonly contains: (address: string) => boolean
}

export const noTrustedProxies: TrustedProxies = { cidrs: [], contains: () => false }

/** At most this many proxies are listed, and this many `X-Forwarded-For` hops read (right to left). */
export const MAX_TRUSTED_PROXIES = 64
export const MAX_FORWARDED_HOPS = 32

/**
 * Strips a port (`1.2.3.4:5678`, `[2001:db8::1]:443`: some proxies write one), brackets and an IPv6
 * zone (`fe80::1%eth0`); maps `::ffff:a.b.c.d` to `a.b.c.d`. `undefined` for anything else.
 */
const normalise = (raw: string): string | undefined => {
  const text = raw
    .trim()
    .replace(/^(\d+\.\d+\.\d+\.\d+):\d+$/, "$1")
    .replace(/^\[(.*)\](:\d+)?$/, "$1")
  const address = text.includes(":") ? text.replace(/%.*$/, "") : text
  const family = isIP(address)
  if (family === 4) return address
  if (family !== 6) return undefined
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  if (mapped !== null && isIP(mapped[1]!) === 4) return mapped[1]!
  // WHATWG URL serialises IPv6 canonically (lower case, longest zero run compressed, no embedded IPv4).
  const canonical = new URL(`http://[${address}]`).hostname.slice(1, -1)
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(canonical)
  if (hex !== null) {
    const high = parseInt(hex[1]!, 16)
    const low = parseInt(hex[2]!, 16)
    return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`
  }
  return canonical
}

/** The eight 16-bit groups of a canonical IPv6 address. */
const groupsOf = (canonical: string): ReadonlyArray<string> => {
  const [head = "", tail] = canonical.split("::")
  const left = head === "" ? [] : head.split(":")
  if (tail === undefined) return left
  const right = tail === "" ? [] : tail.split(":")
  return [...left, ...Array.from({ length: 8 - left.length - right.length }, () => "0"), ...right]
}

/** The key a client is limited under: its IPv4 address, or its IPv6 /64 (`2001:db8:1:2::/64`). */
export const clientKey = (address: string): string => {
  const normal = normalise(address)
  if (normal === undefined) return address
  if (isIP(normal) === 4) return normal
  return `${groupsOf(normal).slice(0, 4).join(":")}::/64`
}

/**
 * `CANDOR_TRUSTED_PROXIES`: CIDRs (or single addresses) separated by commas or spaces, IPv4 or
 * IPv6. `Left(message)` names the first entry that is not one.
 */
export const parseTrustedProxies = (text: string): Either.Either<TrustedProxies, string> => {
  const entries = text.split(/[\s,]+/).filter((entry) => entry !== "")
  if (entries.length > MAX_TRUSTED_PROXIES) return Either.left(`may list at most ${MAX_TRUSTED_PROXIES} CIDRs`)
  const list = new BlockList()
  const cidrs: Array<string> = []
  for (const entry of entries) {
    const [rawAddress = "", rawPrefix, extra] = entry.split("/")
    const address = normalise(rawAddress)
    if (address === undefined || extra !== undefined)
      return Either.left(`must be CIDRs such as 10.0.0.0/8 or fd00::/8, got "${entry}"`)
    const family = isIP(address) === 4 ? "ipv4" : "ipv6"
    const max = family === "ipv4" ? 32 : 128
    const prefix = rawPrefix === undefined ? max : /^\d{1,3}$/.test(rawPrefix) ? Number(rawPrefix) : NaN
    if (!(prefix >= 0 && prefix <= max))
      return Either.left(`"${entry}": the prefix length must be 0 to ${max} for an ${family} address`)
    list.addSubnet(address, prefix, family)
    cidrs.push(`${address}/${prefix}`)
  }
  if (cidrs.length === 0) return Either.right(noTrustedProxies)
  return Either.right({
    cidrs,
    contains: (raw) => {
      const address = normalise(raw)
      return address !== undefined && list.check(address, isIP(address) === 4 ? "ipv4" : "ipv6")
    }
  })
}

/**
 * The client's address: `socket` unless it is a trusted proxy; then the rightmost `X-Forwarded-For`
 * hop that is not one. A hop that is not an address (a proxy that passed garbage along) stops the
 * walk at the last proxy seen, so a forged value can never choose its own key. `undefined` when the
 * socket's address is unknown.
 */
export const clientAddress = (
  socket: string | undefined,
  forwardedFor: string | undefined,
  trusted: TrustedProxies
): string | undefined => {
  let current = socket === undefined ? undefined : normalise(socket)
  if (current === undefined || !trusted.contains(current) || forwardedFor === undefined) return current
  const hops = forwardedFor.split(",")
  for (let i = hops.length - 1, read = 0; i >= 0 && read < MAX_FORWARDED_HOPS; i--, read++) {
    const hop = normalise(hops[i]!)
    if (hop === undefined) return current
    current = hop
    if (!trusted.contains(hop)) return hop
  }
  return current
}

/** The key of the request's client (`unknown` when the server does not know the socket's address). */
export const requestClientKey = (trusted: TrustedProxies) =>
  Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
    const forwarded = request.headers["x-forwarded-for"]
    const address = clientAddress(Option.getOrUndefined(request.remoteAddress), forwarded, trusted)
    return address === undefined ? "unknown" : clientKey(address)
  })
