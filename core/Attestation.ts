/**
 * One checkpoint's attestation, the unit the agent actor commits in one transaction: derive the
 * verdict, extend the agent's hash chain and Merkle log, and sign the certificate.
 *
 * Pure: it takes the agent's log state (chain head and Merkle frontier) and returns the next one with
 * everything to persist, so a store can compare-and-set the head and a lost race changes nothing.
 * The verdict is always derived here with `candor-verdict/1`, never taken from the judge.
 */
import { toHex } from "./Bytes.js"
import { type Certificate, concernsHash, signCertificateBody } from "./Certificate.js"
import { appendToChain, type ChainHead, type ChainLink, genesisHead } from "./Chain.js"
import {
  appendToFrontier,
  emptyFrontier,
  type Frontier,
  frontierRoot,
  leafHash,
  type MerkleNode,
  newestLeafProof
} from "./Merkle.js"
import { CERTIFICATE_TYPE, CERTIFICATE_VERSION } from "./schema/Certificate.js"
import type { SigningKey } from "./Signing.js"
import { deriveVerdict, RULES_VERSION } from "./Verdict.js"

/** An agent's log: the chain head and the Merkle frontier, always at the same position. */
export interface AgentLogState {
  readonly head: ChainHead
  readonly frontier: Frontier
}

export const emptyLogState = (agentId: string): AgentLogState => ({
  head: genesisHead(agentId),
  frontier: emptyFrontier
})

/** What the actor knows about a checkpoint; the verdict, hashes and log positions are computed. */
export interface AttestationInput {
  readonly certificate_id: string
  readonly issued_at: string
  readonly subject: Certificate["subject"]
  readonly claims: Omit<Certificate["claims"], "verdict" | "concerns_hash" | "rules_version">
  readonly input_commitments: Certificate["input_commitments"]
}

export interface Attestation {
  readonly certificate: Certificate
  readonly link: ChainLink
  /** Every Merkle node completed by this leaf (the leaf included), for the store. */
  readonly nodes: ReadonlyArray<MerkleNode>
  readonly state: AgentLogState
}

export const attest = (state: AgentLogState, input: AttestationInput, key: SigningKey): Attestation => {
  if (state.head.position !== state.frontier.size) {
    throw new RangeError(`log state is torn: chain at ${state.head.position}, Merkle log at ${state.frontier.size}`)
  }
  const { subject, claims, input_commitments } = input
  const verdict = deriveVerdict(claims.concerns, claims.boundary_values)
  const concerns_hash = concernsHash(claims.concerns)
  const chained = appendToChain(state.head, {
    agent_id: subject.agent_id,
    position: state.head.position,
    checkpoint_id: subject.checkpoint_id,
    session_id: subject.session_id,
    card_id: subject.card_id,
    timestamp: subject.timestamp,
    verdict,
    rules_version: RULES_VERSION,
    concerns_hash,
    thinking_block_hash: input_commitments.thinking_block_hash,
    card_hash: input_commitments.card_hash,
    values_hash: input_commitments.values_hash,
    analysis_hash: input_commitments.analysis_hash,
    model: input_commitments.model
  })
  const leaf = leafHash(chained.head.hash)
  const logged = appendToFrontier(state.frontier, leaf)
  const certificate = signCertificateBody(
    {
      type: CERTIFICATE_TYPE,
      version: CERTIFICATE_VERSION,
      certificate_id: input.certificate_id,
      issued_at: input.issued_at,
      key_id: key.keyId,
      subject,
      claims: { ...claims, verdict, concerns_hash, rules_version: RULES_VERSION },
      input_commitments,
      chain: { position: state.head.position, prev_hash: chained.link.prev_hash, hash: chained.link.hash },
      merkle: {
        leaf_index: state.frontier.size,
        leaf_hash: toHex(leaf),
        tree_size: logged.frontier.size,
        root: toHex(frontierRoot(logged.frontier)),
        inclusion_proof: newestLeafProof(state.frontier).map(toHex)
      },
      verdict_proof: null
    },
    key
  )
  return {
    certificate,
    link: chained.link,
    nodes: logged.nodes,
    state: { head: chained.head, frontier: logged.frontier }
  }
}
