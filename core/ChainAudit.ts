/**
 * An agent's log checked certificate by certificate, from its genesis: each chain link (position,
 * previous hash, recomputed hash), each signature against the key ring, and the Merkle frontier over
 * the chain hashes, so the root can be compared with the signed tree head's.
 *
 * A fold: `auditCertificates(audit, next batch)` carries on where the audit stopped, so a verifier
 * that checked a log of size n checks only the new certificates when the log grows to m. Errors are
 * counted, and the first `MAX_LISTED` of each kind kept, so a long broken log stays small in memory.
 */
import { bytesEqual, fromBase64, fromHex } from "./Bytes.js"
import { type Certificate, chainEntryOf, signedBytes } from "./Certificate.js"
import { genesisHash, verifyLink } from "./Chain.js"
import { appendToFrontier, emptyFrontier, type Frontier, leafHash } from "./Merkle.js"
import { verifySignature } from "./Signing.js"

/** Errors of each kind kept in an audit (the rest are counted). */
export const MAX_LISTED = 100

export interface ChainAudit {
  readonly agentId: string
  /** The next chain position expected. */
  readonly position: number
  /** The chain hash of the last certificate read (the genesis hash before any). */
  readonly previous: Uint8Array
  /** Over the chain hashes read; its size is the number of certificates with a hash. */
  readonly frontier: Frontier
  /** The first chain errors, `position <n>: <what>`. */
  readonly chainErrors: ReadonlyArray<string>
  readonly chainErrorCount: number
  /** Checkpoint ids of the first certificates whose signature did not verify. */
  readonly failedSignatures: ReadonlyArray<string>
  readonly failedSignatureCount: number
}

export const startAudit = (agentId: string): ChainAudit => ({
  agentId,
  position: 0,
  previous: genesisHash(agentId),
  frontier: emptyFrontier,
  chainErrors: [],
  chainErrorCount: 0,
  failedSignatures: [],
  failedSignatureCount: 0
})

/**
 * The audit carried over `certificates` (the agent's next ones in chain order, from `audit.position`).
 * `keys` maps key ids to Ed25519 public keys.
 */
export const auditCertificates = (
  audit: ChainAudit,
  certificates: ReadonlyArray<Certificate>,
  keys: ReadonlyMap<string, Uint8Array>
): ChainAudit => {
  let { frontier, position, previous } = audit
  const chainErrors = [...audit.chainErrors]
  const failedSignatures = [...audit.failedSignatures]
  let chainErrorCount = audit.chainErrorCount
  let failedSignatureCount = audit.failedSignatureCount
  const chainError = (message: string) => {
    chainErrorCount++
    if (chainErrors.length < MAX_LISTED) chainErrors.push(message)
  }
  for (const certificate of certificates) {
    const hash = fromHex(certificate.chain.hash)
    if (certificate.chain.position !== position)
      chainError(`position ${position}: missing (next stored is ${certificate.chain.position})`)
    else if (hash === undefined || !bytesEqual(fromHex(certificate.chain.prev_hash) ?? new Uint8Array(), previous))
      chainError(`position ${position}: prev_hash is not the hash of the link before`)
    else {
      const error = verifyLink({
        entry: chainEntryOf(certificate),
        prev_hash: certificate.chain.prev_hash,
        hash: certificate.chain.hash
      })
      if (error !== undefined) chainError(`position ${position}: ${error}`)
    }
    const publicKey = keys.get(certificate.key_id)
    const signature = fromBase64(certificate.signature)
    if (
      publicKey === undefined ||
      signature === undefined ||
      !verifySignature(publicKey, signedBytes(certificate), signature)
    ) {
      failedSignatureCount++
      if (failedSignatures.length < MAX_LISTED) failedSignatures.push(certificate.subject.checkpoint_id)
    }
    if (hash !== undefined) {
      frontier = appendToFrontier(frontier, leafHash(hash)).frontier
      previous = hash
    }
    position = certificate.chain.position + 1
  }
  return {
    agentId: audit.agentId,
    position,
    previous,
    frontier,
    chainErrors,
    chainErrorCount,
    failedSignatures,
    failedSignatureCount
  }
}
