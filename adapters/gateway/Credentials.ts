/**
 * One credential per request. The agent is named after the hash of the credential the provider
 * authenticates; when a request carries two (a repeated header, a comma-joined value, two carriers
 * such as `x-api-key` with `Authorization`, `x-goog-api-key` with `?key=`), the provider picks one by
 * rules of its own and the gateway may name the agent after the other: a contained agent would step
 * around its containment with a second header. Such a request is refused (400) before the provider.
 *
 * The carriers are each provider adapter's (`ProviderAdapter.credentials`). Every occurrence counts,
 * an empty one included (a provider may read an empty header as the one it was given). A single
 * credential Candor cannot read (`Authorization: Basic …`, `Bearer a b`) is refused too: forwarded,
 * the provider might accept it and the exchange would belong to no agent. A request without any
 * carrier is forwarded unattributed; the provider answers it 401.
 *
 * Node's `headers` keeps only the first `Authorization` and joins other repeated headers with ", ",
 * while every occurrence is forwarded: repetitions are counted on the raw header list.
 */
import type { IncomingHttpHeaders } from "node:http"
import { credentialIn, keyHashOf } from "../providers/Identity.js"
import type { CredentialCarrier } from "../providers/Provider.js"

export type CredentialRead =
  /** No carrier present. */
  | { readonly _tag: "none" }
  | { readonly _tag: "one"; readonly keyHash: string }
  | { readonly _tag: "refused"; readonly error: string }

const NONE: CredentialRead = { _tag: "none" }

const carrierName = (carrier: CredentialCarrier): string =>
  "header" in carrier ? carrier.header : `?${carrier.query}=`

/** Every value of a header carrier, as sent. */
const headerValues = (
  headers: IncomingHttpHeaders,
  raw: ReadonlyArray<string> | undefined,
  name: string
): ReadonlyArray<string> => {
  const parsed = headers[name]
  if (parsed === undefined) return []
  if (raw === undefined) return typeof parsed === "string" ? [parsed] : parsed
  const values: Array<string> = []
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const candidate = raw[i]!
    if (candidate.length === name.length && candidate.toLowerCase() === name) values.push(raw[i + 1]!)
  }
  return values
}

export const readCredential = (
  carriers: ReadonlyArray<CredentialCarrier>,
  headers: IncomingHttpHeaders,
  raw: ReadonlyArray<string> | undefined,
  url: URL
): CredentialRead => {
  let found: { readonly carrier: CredentialCarrier; readonly value: string } | undefined
  const present: Array<string> = []
  let count = 0
  for (const carrier of carriers) {
    let values: ReadonlyArray<string>
    if ("header" in carrier) values = headerValues(headers, raw, carrier.header)
    else values = url.search.length > 1 ? url.searchParams.getAll(carrier.query) : []
    if (values.length === 0) continue
    present.push(carrierName(carrier))
    count += values.length
    found ??= { carrier, value: values[0]! }
  }
  if (found === undefined) return NONE
  if (count > 1) {
    return { _tag: "refused", error: `more than one credential (${present.join(", ")}): send exactly one` }
  }
  const name = carrierName(found.carrier)
  if (found.value.includes(",")) return { _tag: "refused", error: `${name}: one credential, not a list` }
  // An empty value is no credential: forwarded unattributed, as a request without one.
  if (found.value.trim() === "") return NONE
  const keyHash = keyHashOf(credentialIn(found.carrier, found.value))
  if (keyHash === undefined) {
    return { _tag: "refused", error: `${name}: not a credential Candor can read (send Bearer <token>)` }
  }
  return { _tag: "one", keyHash }
}
