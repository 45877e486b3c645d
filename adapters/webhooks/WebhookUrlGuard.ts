/**
 * Server-side request forgery guard of webhook URLs: a webhook is a request Candor makes to an
 * address a customer chose, so that address must not be Candor's own network (its database, a cloud
 * metadata service, a neighbour on the private network).
 *
 * A URL is accepted when it is `https`, carries no credentials, and its host (an IP literal, or
 * every address its name resolves to) is public: no loopback, private (RFC 1918, fc00::/7),
 * link-local (169.254/16, fe80::/10, which holds the metadata address 169.254.169.254), CGNAT
 * (100.64/10), unspecified, multicast, reserved, or fd00:ec2::254. The check runs when an endpoint
 * is stored and again when each delivery connects (`guardedLookup`), so a name that resolves to a
 * public address when the endpoint is stored and to a private one later (DNS rebinding) is still refused.
 *
 * `CANDOR_WEBHOOK_ALLOW_PRIVATE=true` lifts all of it (http and private addresses), for development
 * and tests with receivers on 127.0.0.1.
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import { lookup as dnsLookup, type LookupAddress } from "node:dns"
import { BlockList, isIP, type LookupFunction } from "node:net"

import { MAX_WEBHOOK_URL_LENGTH } from "../../core/schema/Webhook.js"

// The published request's limit (core/schema/Webhook.ts), re-exported for the code that applies it.
export { MAX_WEBHOOK_URL_LENGTH }

/**
 * Whether webhooks may reach private addresses and plain http: refused unless a process says
 * otherwise (`candor serve` provides `CANDOR_WEBHOOK_ALLOW_PRIVATE` from src/Config.ts; tests their own).
 */
export class WebhookNetwork extends Context.Reference<WebhookNetwork>()("candor/adapters/webhooks/WebhookNetwork", {
  defaultValue: (): { readonly allowPrivate: boolean } => ({ allowPrivate: false })
}) {}

/** Why a URL is refused: the API's 400 text. Names the host at most, never a query or credentials. */
export class InvalidWebhookUrl extends Data.TaggedError("InvalidWebhookUrl")<{ readonly message: string }> {}

const blocked = new BlockList()
for (const [network, prefix] of [
  ["0.0.0.0", 8], // unspecified, "this network"
  ["10.0.0.0", 8],
  ["100.64.0.0", 10], // CGNAT
  ["127.0.0.0", 8],
  ["169.254.0.0", 16], // link-local, the metadata address 169.254.169.254
  ["172.16.0.0", 12],
  ["192.0.0.0", 24], // IETF protocol assignments
  ["192.168.0.0", 16],
  ["198.18.0.0", 15], // benchmarking
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4] // reserved, broadcast
] as const)
  blocked.addSubnet(network, prefix, "ipv4")
for (const [network, prefix] of [
  ["::", 128], // unspecified
  ["::1", 128],
  ["fc00::", 7], // unique local, fd00:ec2::254 (the IPv6 metadata address) among them
  ["fe80::", 10],
  ["ff00::", 8] // multicast
] as const)
  blocked.addSubnet(network, prefix, "ipv6")

const MAPPED_V4 = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i

/** Whether Candor must not connect to this IP address. */
export const isBlockedAddress = (address: string): boolean => {
  const family = isIP(address)
  if (family === 4) return blocked.check(address, "ipv4")
  if (family === 6) {
    const mapped = MAPPED_V4.exec(address)
    return mapped?.[1] !== undefined ? blocked.check(mapped[1], "ipv4") : blocked.check(address, "ipv6")
  }
  return true
}

const resolveAll = (hostname: string): Effect.Effect<ReadonlyArray<LookupAddress>, InvalidWebhookUrl> =>
  Effect.async((resume) => {
    dnsLookup(hostname, { all: true }, (error, addresses) =>
      resume(
        error === null && addresses.length > 0
          ? Effect.succeed(addresses)
          : Effect.fail(new InvalidWebhookUrl({ message: `url: the host ${hostname} does not resolve` }))
      )
    )
  })

/** The URL's form: parses, fits, no credentials, https (or http when private addresses are allowed). */
export const parseWebhookUrl = (url: string, allowPrivate: boolean): Effect.Effect<URL, InvalidWebhookUrl> => {
  if (url.length > MAX_WEBHOOK_URL_LENGTH)
    return Effect.fail(new InvalidWebhookUrl({ message: `url: at most ${MAX_WEBHOOK_URL_LENGTH} characters` }))
  if (!URL.canParse(url)) return Effect.fail(new InvalidWebhookUrl({ message: "url: not an absolute URL" }))
  const parsed = new URL(url)
  if (parsed.username !== "" || parsed.password !== "")
    return Effect.fail(new InvalidWebhookUrl({ message: "url: credentials in the URL are not allowed" }))
  const https = parsed.protocol === "https:"
  if (!https && !(allowPrivate && parsed.protocol === "http:"))
    return Effect.fail(new InvalidWebhookUrl({ message: "url: must be an https URL" }))
  return Effect.succeed(parsed)
}

/**
 * The URL, checked as the module comment says: every address of its host resolved and checked.
 * Under `allowPrivate` nothing is resolved.
 */
export const checkWebhookUrl = (url: string): Effect.Effect<URL, InvalidWebhookUrl> =>
  Effect.gen(function* () {
    const { allowPrivate } = yield* WebhookNetwork
    const parsed = yield* parseWebhookUrl(url, allowPrivate)
    if (allowPrivate) return parsed
    const host = parsed.hostname.replace(/^\[(.*)\]$/, "$1")
    const addresses = isIP(host) !== 0 ? [host] : (yield* resolveAll(host)).map((entry) => entry.address)
    if (addresses.some(isBlockedAddress))
      return yield* new InvalidWebhookUrl({
        message: `url: ${host} is a private, loopback, link-local or otherwise internal address`
      })
    return parsed
  })

/**
 * A `lookup` for connections (undici's `connect.lookup`, node:net's): resolves as usual and fails
 * the connection when an address it would use is blocked, so what was checked is what is reached.
 */
export const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error !== null) return callback(error, "", 0)
    const refused = addresses.find((entry) => isBlockedAddress(entry.address))
    if (refused !== undefined || addresses.length === 0) {
      const blockedError = Object.assign(new Error(`webhook host ${hostname} resolves to an internal address`), {
        code: "EWEBHOOKBLOCKED"
      })
      return callback(blockedError, "", 0)
    }
    if (options.all === true)
      return (callback as unknown as (e: null, a: Array<LookupAddress>) => void)(null, addresses)
    const first = addresses[0]!
    return callback(null, first.address, first.family)
  })
}
