/**
 * From a key listing (`GET /v1/keys`, or a file holding one) to what core's verifiers need: the
 * public listing itself, the key resolver of certificates, and the note verifiers of an agent's
 * signed tree heads. Pure: the API, the offline verifier and tests share it.
 *
 * A tree head is signed under its log's origin (`<CANDOR_LOG_ORIGIN>/agents/<agent_id>`), so a
 * note verifier key is per agent: the listing carries raw keys, and the verifier of a note is
 * that key under the note's own origin line, accepted only if the origin names the certificate's
 * agent (a tree head of another agent's log proves nothing about this one).
 */
import { bytesEqual, fromBase64, toBase64 } from "../../core/Bytes.js"
import {
  type Certificate,
  type CertificateVerification,
  type TrustedTreeHead,
  verifyCertificate
} from "../../core/Certificate.js"
import { formatVerifierKey, noteKeyHash, type NoteVerifier } from "../../core/Note.js"
import type { SigningKeyInfo } from "../../core/schema/Certificate.js"
import { isValidPublicKey, keyIdOf } from "../../core/Signing.js"

/** One key as `GET /v1/keys` lists it (core/schema's `SigningKeyInfo`). */
export type PublicKeyInfo = SigningKeyInfo

export const publicKeyInfo = (key: {
  readonly key_id: string
  readonly public_key: Uint8Array
  readonly created_at: string
  readonly retired_at: string | null
}): PublicKeyInfo => ({
  key_id: key.key_id,
  algorithm: "Ed25519",
  public_key: toBase64(key.public_key),
  status: key.retired_at === null ? "active" : "retired",
  created_at: key.created_at,
  retired_at: key.retired_at,
  expires_at: null
})

/** The usable keys of a listing: base64 of a valid 32-byte key whose id is derived from it; others are ignored. */
export const listedKeys = (
  keys: ReadonlyArray<{ readonly key_id: string; readonly public_key: string }>
): ReadonlyArray<{ readonly keyId: string; readonly publicKey: Uint8Array }> =>
  keys.flatMap((key) => {
    const publicKey = typeof key.public_key === "string" ? fromBase64(key.public_key) : undefined
    return publicKey !== undefined && isValidPublicKey(publicKey) && keyIdOf(publicKey) === key.key_id
      ? [{ keyId: key.key_id, publicKey }]
      : []
  })

/** The origin line of a note (its first line); undefined when it has none. */
export const noteOrigin = (note: string): string | undefined => {
  const end = note.indexOf("\n")
  return end > 0 ? note.slice(0, end) : undefined
}

/**
 * A signed tree head to check a certificate of `agentId` against, trusting the listed keys under the
 * note's origin. A string says why the note cannot be used.
 */
export const treeHeadTrust = (
  note: string,
  keys: ReadonlyArray<{ readonly publicKey: Uint8Array }>,
  agentId: string
): TrustedTreeHead | string => {
  const origin = noteOrigin(note)
  if (origin === undefined) return "the signed tree head has no origin line"
  if (!origin.endsWith(`/agents/${agentId}`)) return `the signed tree head is for log ${origin}, not agent ${agentId}`
  return { note, origin, verifiers: keys.map((key): NoteVerifier => ({ name: origin, publicKey: key.publicKey })) }
}

/**
 * The verifier key (`<origin>+<hash>+<base64>`, Go's `note` format) of the listed key that signed
 * `note`, for witnesses and monitors that pin one; undefined when no listed key matches.
 */
export const noteVerifierKeyOf = (
  note: string,
  keys: ReadonlyArray<{ readonly publicKey: Uint8Array }>
): string | undefined => {
  const origin = noteOrigin(note)
  if (origin === undefined) return undefined
  const signatures = note.slice(note.lastIndexOf("\n\n") + 2).split("\n")
  const hashes = signatures.flatMap((line) => {
    const bytes = fromBase64(line.slice(line.lastIndexOf(" ") + 1))
    return bytes !== undefined && bytes.length > 4 ? [bytes.subarray(0, 4)] : []
  })
  const signer = keys.find((key) => hashes.some((hash) => bytesEqual(hash, noteKeyHash(origin, key.publicKey))))
  if (signer === undefined) return undefined
  try {
    return formatVerifierKey({ name: origin, publicKey: signer.publicKey })
  } catch {
    return undefined
  }
}

/**
 * `verifyCertificate` with a key listing, and a signed tree head given as note text (the API's
 * `POST /v1/verify` and `candor verify`). A tree head that cannot apply to this certificate (no
 * origin, another agent's log) fails the Merkle check with the reason.
 */
export const verifyWithKeys = (
  certificate: unknown,
  keys: ReadonlyArray<{ readonly keyId: string; readonly publicKey: Uint8Array }>,
  options: {
    readonly treeHead?: string | undefined
    readonly verifyVerdictProof?: ((certificate: Certificate) => boolean) | undefined
  } = {}
): CertificateVerification => {
  const byId = new Map(keys.map((key) => [key.keyId, key.publicKey]))
  const subject = (certificate as { subject?: { agent_id?: unknown } } | null)?.subject
  const agentId = typeof subject?.agent_id === "string" ? subject.agent_id : ""
  const trust = options.treeHead === undefined ? undefined : treeHeadTrust(options.treeHead, keys, agentId)
  const report = verifyCertificate(certificate, {
    resolveKey: (keyId) => byId.get(keyId),
    treeHead: typeof trust === "object" ? trust : undefined,
    verifyVerdictProof: options.verifyVerdictProof
  })
  if (typeof trust !== "string") return report
  return { valid: false, checks: { ...report.checks, merkle: false }, errors: [...report.errors, `merkle: ${trust}`] }
}
