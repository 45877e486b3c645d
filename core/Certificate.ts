/**
 * The Integrity Certificate: one self-describing document that lets anyone check a verdict without
 * trusting Candor. Four layers, each checked on its own:
 *
 * - signature: Ed25519 by `key_id` over the JCS of the certificate without `signature` and
 *   `verdict_proof` (the proof arrives later and carries its own binding to the statement);
 * - chain: the chain link recomputed from the certificate's own fields (see `Chain.ts`);
 * - merkle: leaf `leaf_index` (= chain position) of the agent's RFC 6962 log is
 *   `SHA-256(0x00 ‖ chain hash)`, included in the tree of `tree_size` with root `root`;
 * - verdict: `claims.verdict` is `candor-verdict/1` applied to `claims.concerns` and
 *   `claims.boundary_values`, and `claims.concerns_hash` commits to those concerns;
 * - verdict_proof: the STARK of that derivation, checked by a verifier the caller supplies.
 *
 * Unlike Mnemom's service, the signature covers every claim (concerns, chain and Merkle
 * position included), and the key id is bound to the key by derivation.
 */
import { Either, ParseResult, Schema } from "effect"
import { bytesEqual, fromBase64, fromHex, toBase64, toHex } from "./Bytes.js"
import { canonicalBytes, canonicalHash } from "./Canonical.js"
import { type ChainEntry, type ChainLink, verifyLink } from "./Chain.js"
import { leafHash, verifyInclusion } from "./Merkle.js"
import { type NoteVerifier, verifyCheckpointNote } from "./Note.js"
import { CERTIFICATE_TYPE, CERTIFICATE_VERSION, IntegrityCertificate } from "./schema/Certificate.js"
import { keyIdOf, type SigningKey, verifySignature } from "./Signing.js"
import { deriveVerdict, RULES_VERSION } from "./Verdict.js"

export { CERTIFICATE_TYPE, CERTIFICATE_VERSION }

export type Certificate = typeof IntegrityCertificate.Type
export type CertificateConcern = Certificate["claims"]["concerns"][number]

/** What the signer fills in: everything but the signature, which `signCertificate` adds. */
export type UnsignedCertificate = Omit<Certificate, "signature" | "key_id" | "type" | "version" | "claims"> & {
  readonly claims: Omit<Certificate["claims"], "concerns_hash" | "rules_version">
}

/** The commitment to a verdict's concerns: `SHA-256("candor/v1/concerns\0" ‖ JCS(concerns))`, hex. */
export const concernsHash = (concerns: ReadonlyArray<CertificateConcern>): string =>
  toHex(
    canonicalHash(
      "concerns",
      concerns.map((c) => ({
        category: c.category,
        severity: c.severity,
        description: c.description,
        relevant_conscience_value: c.relevant_conscience_value
      }))
    )
  )

/** {@link concernsHash} for untrusted concerns: `undefined` when they have no canonical form. */
const tryConcernsHash = (concerns: ReadonlyArray<CertificateConcern>): string | undefined => {
  try {
    return concernsHash(concerns)
  } catch {
    return undefined
  }
}

/** The chain entry a certificate commits to, rebuilt from its own fields. */
export const chainEntryOf = (certificate: Certificate): ChainEntry => ({
  agent_id: certificate.subject.agent_id,
  position: certificate.chain.position,
  checkpoint_id: certificate.subject.checkpoint_id,
  session_id: certificate.subject.session_id,
  card_id: certificate.subject.card_id,
  timestamp: certificate.subject.timestamp,
  verdict: certificate.claims.verdict,
  rules_version: certificate.claims.rules_version,
  concerns_hash: certificate.claims.concerns_hash,
  thinking_block_hash: certificate.input_commitments.thinking_block_hash,
  card_hash: certificate.input_commitments.card_hash,
  values_hash: certificate.input_commitments.values_hash,
  analysis_hash: certificate.input_commitments.analysis_hash,
  model: certificate.input_commitments.model
})

/** The bytes the signature covers: JCS of the certificate without `signature` and `verdict_proof`. */
export const signedBytes = (certificate: Omit<Certificate, "signature" | "verdict_proof">): Uint8Array => {
  const { signature: _signature, verdict_proof: _proof, ...signed } = certificate as Certificate
  return canonicalBytes(signed)
}

/** Signs a complete certificate body: the signature is the only field added. */
export const signCertificateBody = (body: Omit<Certificate, "signature">, key: SigningKey): Certificate => ({
  ...body,
  signature: toBase64(key.sign(signedBytes(body)))
})

/** Completes and signs a certificate; the verdict rules version and concerns hash are filled in here. */
export const signCertificate = (unsigned: UnsignedCertificate, key: SigningKey): Certificate =>
  signCertificateBody(
    {
      type: CERTIFICATE_TYPE,
      version: CERTIFICATE_VERSION,
      certificate_id: unsigned.certificate_id,
      issued_at: unsigned.issued_at,
      key_id: key.keyId,
      subject: unsigned.subject,
      claims: {
        ...unsigned.claims,
        concerns_hash: concernsHash(unsigned.claims.concerns),
        rules_version: RULES_VERSION
      },
      input_commitments: unsigned.input_commitments,
      chain: unsigned.chain,
      merkle: unsigned.merkle,
      verdict_proof: unsigned.verdict_proof
    },
    key
  )

export interface CertificateChecks {
  readonly signature: boolean
  readonly chain: boolean
  readonly merkle: boolean
  readonly verdict: boolean
  /** `null` while no proof has been made; `false` if a proof is present and does not verify. */
  readonly verdict_proof: boolean | null
}

export interface CertificateVerification {
  readonly valid: boolean
  readonly checks: CertificateChecks
  readonly errors: ReadonlyArray<string>
}

/** A signed tree head to check the certificate's Merkle claim against, with the keys trusted for it. */
export interface TrustedTreeHead {
  readonly note: string
  readonly verifiers: ReadonlyArray<NoteVerifier>
  /** The log origin, `<CANDOR_LOG_ORIGIN>/agents/<agent_id>`. */
  readonly origin: string
}

export interface VerifyCertificateOptions {
  /** The Ed25519 public key of a `key_id`, from `GET /v1/keys` or a pinned file. */
  readonly resolveKey: (keyId: string) => Uint8Array | undefined
  readonly treeHead?: TrustedTreeHead | undefined
  /** Checks a present `verdict_proof` against the certificate's statement. */
  readonly verifyVerdictProof?: ((certificate: Certificate) => boolean) | undefined
}

const FAILED: CertificateChecks = {
  signature: false,
  chain: false,
  merkle: false,
  verdict: false,
  verdict_proof: false
}

const decodeCertificate = Schema.decodeUnknownEither(IntegrityCertificate, { onExcessProperty: "error" })

/** Key ids of resolved keys, remembered per key object: a resolver hands out the same keys again and again. */
const keyIds = new WeakMap<Uint8Array, string>()
const derivedKeyId = (publicKey: Uint8Array): string => {
  let keyId = keyIds.get(publicKey)
  if (keyId === undefined) keyIds.set(publicKey, (keyId = keyIdOf(publicKey)))
  return keyId
}

const checkSignature = (cert: Certificate, options: VerifyCertificateOptions, errors: Array<string>): boolean => {
  const publicKey = options.resolveKey(cert.key_id)
  if (publicKey === undefined) return fail(errors, `signature: unknown key_id ${cert.key_id}`)
  if (derivedKeyId(publicKey) !== cert.key_id)
    return fail(errors, "signature: key_id is not derived from the resolved key")
  const signature = fromBase64(cert.signature)
  if (signature === undefined) return fail(errors, "signature: not base64")
  return verifySignature(publicKey, signedBytes(cert), signature) || fail(errors, "signature: does not verify")
}

const checkVerdict = (cert: Certificate, errors: Array<string>): boolean => {
  const { claims } = cert
  if (claims.rules_version !== RULES_VERSION)
    return fail(errors, `verdict: unknown rules version ${claims.rules_version}`)
  if (claims.concerns_hash !== tryConcernsHash(claims.concerns))
    return fail(errors, "verdict: concerns_hash does not match the concerns")
  const derived = deriveVerdict(claims.concerns, claims.boundary_values)
  return (
    derived === claims.verdict ||
    fail(errors, `verdict: the rule gives ${derived}, the certificate claims ${claims.verdict}`)
  )
}

const checkChain = (cert: Certificate, errors: Array<string>): boolean => {
  const link: ChainLink = { entry: chainEntryOf(cert), prev_hash: cert.chain.prev_hash, hash: cert.chain.hash }
  const error = verifyLink(link)
  return error === undefined || fail(errors, `chain: ${error}`)
}

const checkMerkle = (cert: Certificate, options: VerifyCertificateOptions, errors: Array<string>): boolean => {
  const { merkle, chain } = cert
  const chainHashBytes = fromHex(chain.hash)
  const leaf = fromHex(merkle.leaf_hash)
  const root = fromHex(merkle.root)
  const proof = merkle.inclusion_proof.map(fromHex)
  if (chainHashBytes === undefined || leaf === undefined || root === undefined || proof.some((p) => p === undefined)) {
    return fail(errors, "merkle: hashes are not hex")
  }
  if (merkle.leaf_index !== chain.position) return fail(errors, "merkle: leaf_index is not the chain position")
  if (!bytesEqual(leaf, leafHash(chainHashBytes)))
    return fail(errors, "merkle: leaf_hash is not the leaf of the chain hash")
  const included = verifyInclusion({
    leafIndex: merkle.leaf_index,
    treeSize: merkle.tree_size,
    leafHash: leaf,
    proof: proof as Array<Uint8Array>,
    root
  })
  if (!included) return fail(errors, "merkle: inclusion proof does not lead to the root")
  if (options.treeHead === undefined) return true
  const head = verifyCheckpointNote(options.treeHead.note, options.treeHead.verifiers, options.treeHead.origin)
  if (head === undefined) return fail(errors, "merkle: the signed tree head does not verify")
  if (head.size !== merkle.tree_size || !bytesEqual(head.root, root)) {
    return fail(errors, "merkle: the signed tree head is for another tree; ask for an inclusion proof at its size")
  }
  return true
}

const checkVerdictProof = (
  cert: Certificate,
  options: VerifyCertificateOptions,
  errors: Array<string>
): boolean | null => {
  if (cert.verdict_proof === null) return null
  if (options.verifyVerdictProof === undefined) return fail(errors, "verdict_proof: present, but no verifier was given")
  let ok = false
  try {
    ok = options.verifyVerdictProof(cert)
  } catch {
    ok = false
  }
  return ok || fail(errors, "verdict_proof: does not verify")
}

const fail = (errors: Array<string>, message: string): false => {
  errors.push(message)
  return false
}

/** Verifies every layer of a certificate separately; never throws, whatever the input. */
export const verifyCertificate = (input: unknown, options: VerifyCertificateOptions): CertificateVerification => {
  const decoded = decodeCertificate(input)
  if (Either.isLeft(decoded)) {
    const message = ParseResult.TreeFormatter.formatErrorSync(decoded.left)
    return { valid: false, checks: FAILED, errors: [`malformed certificate: ${message}`] }
  }
  const cert = decoded.right
  const errors: Array<string> = []
  const checks: CertificateChecks = {
    signature: checkSignature(cert, options, errors),
    chain: checkChain(cert, errors),
    merkle: checkMerkle(cert, options, errors),
    verdict: checkVerdict(cert, errors),
    verdict_proof: checkVerdictProof(cert, options, errors)
  }
  const valid = checks.signature && checks.chain && checks.merkle && checks.verdict && checks.verdict_proof !== false
  return { valid, checks, errors }
}

/** A key resolver over a `GET /v1/keys` response (`public_key` base64); retired keys still verify old certificates. */
export const keyResolverFromKeys = (
  keys: ReadonlyArray<{ readonly key_id: string; readonly public_key: string }>
): ((keyId: string) => Uint8Array | undefined) => {
  const byId = new Map<string, Uint8Array>()
  for (const key of keys) {
    const publicKey = fromBase64(key.public_key)
    if (publicKey !== undefined && publicKey.length === 32 && keyIdOf(publicKey) === key.key_id)
      byId.set(key.key_id, publicKey)
  }
  return (keyId) => byId.get(keyId)
}
