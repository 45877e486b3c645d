/**
 * Who a gateway request counts against when it has no agent to count against (the unknown-key
 * limit, `UnknownKeys.ts`): its socket's peer address, an IPv6 peer by its /64 (one host usually
 * holds a whole /64, so single addresses would give it billions of buckets), an IPv4-mapped IPv6
 * peer as its IPv4 address.
 *
 * The socket address only: the gateway is the first hop agents talk to, and a forwarding header
 * would let every request name its own client. (The management API's `adapters/http/ClientAddress.ts`
 * adds trusted proxies; the two may be unified.)
 */
import { isIPv4, isIPv6 } from "node:net"

/** An address unknown or unparseable (a socket already closed): one shared client. */
export const UNKNOWN_CLIENT = "unknown"

/** The 8 groups of an IPv6 address, or `undefined` when it is not one. */
const ipv6Groups = (address: string): ReadonlyArray<number> | undefined => {
  const bare = address.split("%", 1)[0]! // a zone id (fe80::1%eth0) names an interface, not a host
  const halves = bare.split("::")
  if (halves.length > 2) return undefined
  const parse = (part: string): Array<number> => {
    if (part === "") return []
    const groups: Array<number> = []
    for (const piece of part.split(":")) {
      if (piece.includes(".")) {
        // An embedded IPv4 (::ffff:192.0.2.1) is the last two groups.
        const octets = piece.split(".").map(Number)
        groups.push((octets[0]! << 8) | octets[1]!, (octets[2]! << 8) | octets[3]!)
      } else groups.push(Number.parseInt(piece, 16))
    }
    return groups
  }
  const head = parse(halves[0]!)
  const tail = halves.length === 2 ? parse(halves[1]!) : []
  const missing = 8 - head.length - tail.length
  if (missing < 0 || (halves.length === 1 && missing !== 0)) return undefined
  return [...head, ...new Array<number>(missing).fill(0), ...tail]
}

/** The client an address counts as: IPv4 as is, IPv6 as its /64 (`2001:db8:1:2::/64`). */
export const socketClient = (address: string | undefined): string => {
  if (address === undefined || address === "") return UNKNOWN_CLIENT
  if (isIPv4(address)) return address
  if (!isIPv6(address)) return UNKNOWN_CLIENT
  const groups = ipv6Groups(address)
  if (groups === undefined) return UNKNOWN_CLIENT
  // ::ffff:a.b.c.d: an IPv4 client on a dual-stack socket.
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return `${groups[6]! >> 8}.${groups[6]! & 0xff}.${groups[7]! >> 8}.${groups[7]! & 0xff}`
  }
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(":")}::/64`
}
