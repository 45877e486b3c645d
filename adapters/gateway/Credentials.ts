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
import { rawValues } from "./RawHeaders.js"

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
  if (parsed === undefined) return NO_VALUES
  if (raw === undefined) return typeof parsed === "string" ? [parsed] : parsed
  return rawValues(raw, name)
}

const NO_VALUES: ReadonlyArray<string> = []

const valuesOf = (
  carrier: CredentialCarrier,
  headers: IncomingHttpHeaders,
  raw: ReadonlyArray<string> | undefined,
  url: URL
): ReadonlyArray<string> =>
  "header" in carrier
    ? headerValues(headers, raw, carrier.header)
    : url.search.length > 1
      ? url.searchParams.getAll(carrier.query)
      : NO_VALUES

export const readCredential = (
  carriers: ReadonlyArray<CredentialCarrier>,
  headers: IncomingHttpHeaders,
  raw: ReadonlyArray<string> | undefined,
  url: URL
): CredentialRead => {
  let found: CredentialCarrier | undefined
  let value = ""
  let count = 0
  for (const carrier of carriers) {
    const values = valuesOf(carrier, headers, raw, url)
    if (values.length === 0) continue
    if (found === undefined) {
      found = carrier
      value = values[0]!
    }
    count += values.length
  }
  if (found === undefined) return NONE
  if (count > 1) {
    // Named only on a refusal: the usual request builds no list.
    const present = carriers.filter((carrier) => valuesOf(carrier, headers, raw, url).length > 0).map(carrierName)
    return { _tag: "refused", error: `more than one credential (${present.join(", ")}): send exactly one` }
  }
  if (value.includes(",")) return { _tag: "refused", error: `${carrierName(found)}: one credential, not a list` }
  // An empty value is no credential: forwarded unattributed, as a request without one.
  if (value.trim() === "") return NONE
  const keyHash = keyHashOf(credentialIn(found, value))
  if (keyHash === undefined) {
    return { _tag: "refused", error: `${carrierName(found)}: not a credential Candor can read (send Bearer <token>)` }
  }
  return { _tag: "one", keyHash }
}
