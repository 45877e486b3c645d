/**
 * The client of a request as per-client limits see it: the socket address unless it is a trusted
 * proxy, then the first untrusted X-Forwarded-For hop from the right; IPv6 by /64; forged hops and
 * garbage never choose a key.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as fc from "fast-check"
import {
  clientAddress,
  clientKey,
  MAX_FORWARDED_HOPS,
  noTrustedProxies,
  parseTrustedProxies
} from "../../../adapters/http/ClientAddress.js"
import { fuzzParameters } from "../../support/Fuzz.js"

const proxies = (text: string) => Either.getOrThrow(parseTrustedProxies(text))

describe("ClientAddress", () => {
  it("without trusted proxies the socket is the client, whatever X-Forwarded-For says", () => {
    expect(clientAddress("203.0.113.5", "198.51.100.1", noTrustedProxies)).toBe("203.0.113.5")
    expect(clientAddress("::ffff:203.0.113.5", undefined, noTrustedProxies)).toBe("203.0.113.5")
    expect(clientAddress(undefined, "198.51.100.1", noTrustedProxies)).toBeUndefined()
  })

  it("behind trusted proxies: the first untrusted hop from the right; the client's own entries are ignored", () => {
    const trusted = proxies("10.0.0.0/8, 2001:db8:ffff::/48")
    // client → 10.0.0.2 → 10.0.0.1 (socket)
    expect(clientAddress("10.0.0.1", "198.51.100.7, 10.0.0.2", trusted)).toBe("198.51.100.7")
    // The client wrote "1.2.3.4" itself: its proxy appended the real address after it.
    expect(clientAddress("10.0.0.1", "1.2.3.4, 198.51.100.7", trusted)).toBe("198.51.100.7")
    // A socket that is not a proxy: its X-Forwarded-For is the client's own word.
    expect(clientAddress("198.51.100.9", "1.2.3.4", trusted)).toBe("198.51.100.9")
    // IPv6 proxies, a port written by a proxy, brackets.
    expect(clientAddress("2001:db8:ffff::1", "[2001:db8:1::5]:443", trusted)).toBe("2001:db8:1::5")
    expect(clientAddress("10.0.0.1", "198.51.100.7:5678", trusted)).toBe("198.51.100.7")
    // Every hop a proxy: the leftmost.
    expect(clientAddress("10.0.0.1", "10.0.0.3, 10.0.0.2", trusted)).toBe("10.0.0.3")
    // Garbage where an address should be: the last proxy, never the garbage.
    expect(clientAddress("10.0.0.1", "198.51.100.7, evil, 10.0.0.2", trusted)).toBe("10.0.0.2")
    expect(clientAddress("10.0.0.1", "", trusted)).toBe("10.0.0.1")
    // No header: the proxy itself.
    expect(clientAddress("10.0.0.1", undefined, trusted)).toBe("10.0.0.1")
  })

  it(`reads at most ${MAX_FORWARDED_HOPS} hops`, () => {
    const trusted = proxies("10.0.0.0/8")
    const hops = Array.from({ length: 10_000 }, (_, i) => `10.${(i >> 8) & 255}.${i & 255}.1`)
    expect(clientAddress("10.0.0.1", ["198.51.100.7", ...hops].join(", "), trusted)).toBe(
      hops[hops.length - MAX_FORWARDED_HOPS]
    )
  })

  it("keys IPv4 by address and IPv6 by /64, mapped IPv4 as IPv4", () => {
    expect(clientKey("203.0.113.5")).toBe("203.0.113.5")
    expect(clientKey("::ffff:203.0.113.5")).toBe("203.0.113.5")
    expect(clientKey("2001:db8:1:2::1")).toBe("2001:db8:1:2::/64")
    expect(clientKey("2001:DB8:1:2:ffff:ffff:ffff:ffff")).toBe("2001:db8:1:2::/64")
    expect(clientKey("2001:db8:1:3::1")).toBe("2001:db8:1:3::/64")
    expect(clientKey("::1")).toBe("0:0:0:0::/64")
    expect(clientKey("fe80::1%eth0")).toBe("fe80:0:0:0::/64")
    expect(clientKey("2001:DB8:0001:0002:ffff::1")).toBe("2001:db8:1:2::/64")
    expect(clientKey("2001:db8::1")).toBe("2001:db8:0:0::/64")
    expect(clientKey("::ffff:c000:207")).toBe("192.0.2.7")
    // A socket without a usable address has no client address (the limits count it as "unknown").
    for (const socket of [undefined, "", "not an address", "1.2.3"])
      expect(clientAddress(socket, undefined, noTrustedProxies)).toBeUndefined()
  })

  it("every address in one /64 has that /64's key (property)", () => {
    fc.assert(
      fc.property(fc.ipV6(), (address) => {
        const key = clientKey(address)
        expect(key).toMatch(/^([0-9a-f]{1,4}:){4}:\/64$|^\d+\.\d+\.\d+\.\d+$/)
        if (key.endsWith("/64")) {
          const prefix = key.slice(0, -"::/64".length)
          expect(clientKey(`${prefix}:ffff:ffff:ffff:ffff`)).toBe(key)
        }
      }),
      fuzzParameters(500)
    )
  })

  it("parses CANDOR_TRUSTED_PROXIES and names what is wrong", () => {
    const parsed = proxies("10.0.0.0/8 192.168.1.1, fd00::/8")
    expect(parsed.cidrs).toStrictEqual(["10.0.0.0/8", "192.168.1.1/32", "fd00::/8"])
    expect(parsed.contains("10.200.0.1")).toBe(true)
    expect(parsed.contains("::ffff:10.200.0.1")).toBe(true)
    expect(parsed.contains("192.168.1.2")).toBe(false)
    expect(parsed.contains("fd12::1")).toBe(true)
    expect(parsed.contains("not an address")).toBe(false)
    expect(Either.getLeft(parseTrustedProxies("10.0.0.0/33"))._tag).toBe("Some")
    expect(Either.getLeft(parseTrustedProxies("example.com"))).toStrictEqual(
      Either.getLeft(Either.left('must be CIDRs such as 10.0.0.0/8 or fd00::/8, got "example.com"'))
    )
    expect(Either.getOrThrow(parseTrustedProxies(" "))).toBe(noTrustedProxies)
  })
})
