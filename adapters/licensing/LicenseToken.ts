/**
 * License tokens for self-hosted Enterprise instances: `cndl1.<payload>.<signature>`, both parts
 * base64url. The payload is the RFC 8785 JSON of the license; the signature is Ed25519 by the
 * deployment's signing key over `candor/v1/license\0 ‖ payload bytes` (domain-separated, so a
 * certificate signature can never pass for a license or back). Self-contained: validating needs
 * only the public key, never a database row.
 */
import { bufferView, concatBytes, utf8 } from "../../core/Bytes.js"
import { canonicalJson } from "../../core/Canonical.js"
import { domainTag } from "../../core/Hash.js"
import { type SigningKey, verifySignature } from "../../core/Signing.js"

export interface License {
  readonly license_id: string
  readonly plan_id: string
  readonly licensee: string
  /** Overrides of the plan's feature flags and limits. */
  readonly feature_flags: Readonly<Record<string, unknown>>
  readonly limits: Readonly<Record<string, unknown>>
  /** RFC 3339. */
  readonly issued_at: string
  readonly expires_at: string
  /** The signing key's id (`keyIdOf`). */
  readonly key_id: string
}

const PREFIX = "cndl1"

const message = (payload: Uint8Array) => concatBytes(domainTag("license"), payload)

export const issueLicense = (key: SigningKey, license: Omit<License, "key_id">): string => {
  const payload = utf8(canonicalJson({ ...license, key_id: key.keyId }))
  const signature = key.sign(message(payload))
  return `${PREFIX}.${Buffer.from(payload).toString("base64url")}.${Buffer.from(signature).toString("base64url")}`
}

export type LicenseCheck =
  | { readonly _tag: "Malformed" }
  | { readonly _tag: "BadSignature" }
  | { readonly _tag: "Verified"; readonly license: License }

const isLicense = (value: unknown): value is License => {
  if (value === null || typeof value !== "object") return false
  const fields = value as Record<string, unknown>
  return (
    ["license_id", "plan_id", "licensee", "issued_at", "expires_at", "key_id"].every(
      (k) => typeof fields[k] === "string"
    ) &&
    typeof fields.feature_flags === "object" &&
    fields.feature_flags !== null &&
    typeof fields.limits === "object" &&
    fields.limits !== null &&
    !Number.isNaN(Date.parse(fields.expires_at as string))
  )
}

/** Verifies a token against the public keys that may have signed it (by key id). Never throws. */
export const checkLicense = (token: string, publicKeyOf: (keyId: string) => Uint8Array | undefined): LicenseCheck => {
  const parts = token.trim().split(".")
  if (parts.length !== 3 || parts[0] !== PREFIX) return { _tag: "Malformed" }
  const payload = bufferView(Buffer.from(parts[1]!, "base64url"))
  const signature = bufferView(Buffer.from(parts[2]!, "base64url"))
  let license: unknown
  try {
    license = JSON.parse(Buffer.from(payload).toString("utf8"))
  } catch {
    return { _tag: "Malformed" }
  }
  if (!isLicense(license)) return { _tag: "Malformed" }
  const publicKey = publicKeyOf(license.key_id)
  if (publicKey === undefined || !verifySignature(publicKey, message(payload), signature))
    return { _tag: "BadSignature" }
  return { _tag: "Verified", license }
}
