/**
 * Verification: the store's records shaped for third-party verifiers (the key ring, certificates,
 * signed tree heads with their witness cosignatures, inclusion and consistency proofs, verdict
 * proofs' status, the agent's whole chain recomputed) and the check of a posted certificate with
 * core's `verifyCertificate`, the key ring and the prover's verdict-proof verifier. Unknown ids are
 * `NotFound`s, sizes out of range `BadRequest`s.
 *
 * Which agents the request may see (private ones are unknown on these public routes) is the
 * caller's to check, as is who may ask for a verdict proof.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { BadRequest, NotFound } from "../adapters/http/ApiErrors.js"
import { noteOrigin, noteVerifierKeyOf, publicKeyInfo, verifyWithKeys } from "../adapters/keys/Trust.js"
import { SigningKeys } from "../adapters/keys/SigningKeys.js"
import { ChainVerifier } from "../adapters/store/ChainVerifier.js"
import { KeyRepo } from "../adapters/store/KeyRepo.js"
import { ProofRepo } from "../adapters/store/ProofRepo.js"
import { Store, type TreeHead } from "../adapters/store/Store.js"
import { cosignedHead, type WitnessRepo, withCosignatures } from "../adapters/store/WitnessRepo.js"
import { fromHex, toHex } from "../core/Bytes.js"
import { canonicalBytes, canonicalJson } from "../core/Canonical.js"
import { analysisOf } from "../core/Commitments.js"
import type { Certificate } from "../core/Certificate.js"
import { MAX_LISTED } from "../core/ChainAudit.js"
import { sha256 } from "../core/Hash.js"
import { frontierRoot } from "../core/Merkle.js"
import { formatCheckpoint, signNote, verifyCheckpointNote } from "../core/Note.js"
import { shouldProve } from "../core/ProofSampling.js"
import type { ChainReportItem } from "../core/schema/Certificate.js"
import { PARAMS } from "../prover/Params.js"
import { publicInputs, statementOf } from "../prover/Statement.js"
import { securityFor, verifyVerdictProof } from "../prover/VerdictProof.js"

export const notFound = (what: string) => new NotFound({ error: `${what} not found` })

/** Hex SHA-256 of the JCS of the certificate without `verdict_proof` (the proof is attached later). */
export const certificateHash = (certificate: Certificate): string => {
  const { verdict_proof: _proof, ...rest } = certificate
  return toHex(sha256(canonicalBytes(rest)))
}

/** The stored note verifies under one of the ring's keys, for its own origin, with the stored size and root. */
const signedHeadValid = (head: TreeHead, keys: ReadonlyArray<Uint8Array>): boolean => {
  const origin = noteOrigin(head.note)
  if (origin === undefined) return false
  const checkpoint = verifyCheckpointNote(
    head.note,
    keys.map((publicKey) => ({ name: origin, publicKey })),
    origin
  )
  return checkpoint !== undefined && checkpoint.size === head.tree_size && toHex(checkpoint.root) === head.root
}

/**
 * The agent's chain recomputed from its stored certificates, its Merkle root from the chain hashes,
 * every signature checked (adapters/store/ChainVerifier.ts: cached per tree size, extended when the
 * log grows, one pass per agent at a time); `limit` certificates from position `offset` listed.
 */
const verifyChain = (agentId: string, offset: number, limit: number) =>
  Effect.gen(function* () {
    const { audit, head, keys } = yield* (yield* ChainVerifier).verify(agentId)
    const size = head?.tree_size ?? 0
    const { frontier } = audit
    const window =
      offset >= size || limit === 0
        ? []
        : yield* (yield* ProofRepo).agentCertificates(agentId, offset, Math.min(limit, size - offset))
    const items: Array<ChainReportItem> = window
      .filter((certificate) => certificate.chain.position >= offset && certificate.chain.position < offset + limit)
      .filter((certificate) => certificate.chain.position < size)
      .map((certificate) => ({
        checkpoint_id: certificate.subject.checkpoint_id,
        position: certificate.chain.position,
        verdict: certificate.claims.verdict,
        certificate_hash: certificateHash(certificate),
        chain_hash: certificate.chain.hash
      }))
    const computedRoot = toHex(frontierRoot(frontier))
    const headValid =
      head === undefined
        ? false
        : signedHeadValid(
            head,
            keys.map((key) => key.publicKey)
          )
    const merkleValid =
      head === undefined
        ? frontier.size === 0
        : head.tree_size === frontier.size && head.root === computedRoot && headValid
    const chainErrors = [...audit.chainErrors]
    if (frontier.size !== size && chainErrors.length < MAX_LISTED)
      chainErrors.push(`the log has ${size} entries, ${frontier.size} certificates are stored`)
    const chainValid = audit.chainErrorCount === 0 && frontier.size === size
    return {
      agent_id: agentId,
      valid: chainValid && merkleValid && audit.failedSignatureCount === 0,
      certificates: { total: frontier.size, offset, limit, items },
      signatures: {
        valid: audit.failedSignatureCount === 0,
        checked: frontier.size,
        failed: audit.failedSignatures
      },
      chain: {
        valid: chainValid,
        length: frontier.size,
        head: frontier.size === 0 ? null : toHex(audit.previous),
        errors: chainErrors
      },
      merkle: {
        valid: merkleValid,
        tree_size: frontier.size,
        root: head?.root ?? null,
        computed_root: computedRoot,
        signed_tree_head: head?.note ?? null,
        signed_tree_head_valid: headValid
      }
    }
  })

export const make = Effect.gen(function* () {
  const store = yield* Store
  const keyRepo = yield* KeyRepo
  const proofs = yield* ProofRepo
  const signing = yield* SigningKeys
  const reads = yield* Effect.context<WitnessRepo | ChainVerifier | ProofRepo>()

  /** The key ring as verifiers take it. */
  const ringKeys = Effect.map(keyRepo.list, (records) =>
    records.map((record) => ({ keyId: record.key_id, publicKey: record.public_key }))
  )

  /** The key ring as the API lists it. */
  const signingKeys = Effect.map(keyRepo.list, (records) => ({ keys: records.map(publicKeyInfo) }))

  /** The stored certificate of the checkpoint. */
  const certificate = (checkpointId: string) =>
    Effect.flatMap(store.getCertificate(checkpointId), (found) =>
      found === undefined ? Effect.fail(notFound(`checkpoint ${checkpointId}`)) : Effect.succeed(found)
    )

  const latestHead = (agentId: string) =>
    Effect.flatMap(store.treeHead(agentId), (head) =>
      head === undefined ? Effect.fail(notFound(`agent ${agentId}`)) : Effect.succeed(head)
    )

  /** The head with the witness cosignatures of its size, when there are any (docs/witnesses.md). */
  const cosigned = (head: TreeHead) => Effect.provide(cosignedHead(head), reads)

  /**
   * The signed head at `treeSize` (at most the latest's). Workers store one for the newest size of
   * each batch; for a size in between the same note is signed now: a C2SP checkpoint carries no time,
   * so it is the note the worker would have signed (byte for byte, with the same key).
   */
  const headAt = (latest: TreeHead, treeSize: number) =>
    Effect.gen(function* () {
      if (treeSize === latest.tree_size) return latest
      const stored = yield* store.treeHead(latest.agent_id, treeSize)
      if (stored !== undefined) return stored
      const root = yield* store.rootAt(latest.agent_id, treeSize)
      const origin = noteOrigin(latest.note)
      if (root === undefined || origin === undefined)
        return yield* notFound(`tree head of size ${treeSize} for agent ${latest.agent_id}`)
      const note = signNote(formatCheckpoint({ origin, size: treeSize, root: fromHex(root)!, extensions: [] }), {
        name: origin,
        key: signing.active
      })
      const now = yield* Clock.currentTimeMillis
      return {
        agent_id: latest.agent_id,
        tree_size: treeSize,
        root,
        note,
        created_at: new Date(now).toISOString()
      } satisfies TreeHead
    })

  /** A posted certificate checked against the key ring (and the signed tree head sent with it, if any). */
  const verifyCertificate = (posted: unknown, treeHead: string | undefined) =>
    Effect.map(ringKeys, (keys) => verifyWithKeys(posted, keys, { treeHead, verifyVerdictProof }))

  /** The agent's newest signed tree head, cosigned, with what a verifier needs to check its note. */
  const merkleRoot = (agentId: string) =>
    Effect.gen(function* () {
      const head = yield* Effect.flatMap(latestHead(agentId), cosigned)
      const keys = yield* ringKeys
      return {
        agent_id: agentId,
        tree_size: head.tree_size,
        root: head.root,
        signed_tree_head: head.note,
        checkpoint: head.note,
        log_origin: noteOrigin(head.note) ?? "",
        note_verifier_key: noteVerifierKeyOf(head.note, keys) ?? null,
        timestamp: head.created_at
      }
    })

  /** The witness cosignatures of the agent's head at `treeSize` (default: the newest). */
  const cosignatures = (agentId: string, size: number | undefined) =>
    Effect.gen(function* () {
      const latest = yield* latestHead(agentId)
      const treeSize = size ?? latest.tree_size
      if (treeSize > latest.tree_size)
        return yield* new BadRequest({ error: `tree_size: must be at most the log's size ${latest.tree_size}` })
      const { head, cosignatures } = yield* Effect.provide(withCosignatures(yield* headAt(latest, treeSize)), reads)
      return {
        agent_id: agentId,
        tree_size: treeSize,
        signed_tree_head: head.note,
        cosignatures: cosignatures.map((cosignature) => ({
          witness: cosignature.witness_name,
          witness_key: cosignature.witness_key,
          cosigned_at: new Date(cosignature.cosigned_at * 1000).toISOString(),
          timestamp: cosignature.cosigned_at,
          line: cosignature.line
        }))
      }
    })

  /** `limit` of the agent's certificates from position `from`, those under its newest signed head. */
  const agentCertificates = (agentId: string, from: number, limit: number) =>
    Effect.gen(function* () {
      const head = yield* latestHead(agentId)
      if (from > head.tree_size)
        return yield* new BadRequest({ error: `from: must be at most the log's size ${head.tree_size}` })
      const stored = yield* proofs.agentCertificates(agentId, from, limit)
      // Certificates committed after the newest signed head are not in a signed tree yet.
      const certificates = stored.filter((certificate) => certificate.chain.position < head.tree_size)
      const after = (certificates.at(-1)?.chain.position ?? head.tree_size) + 1
      const next = stored.length === limit && after < head.tree_size ? after : null
      return { agent_id: agentId, from, limit, tree_size: head.tree_size, certificates, next }
    })

  /** The audit path of the checkpoint's certificate to the agent's head at `size` (default: the newest). */
  const inclusionProof = (checkpointId: string, certificate: Certificate, size: number | undefined) =>
    Effect.gen(function* () {
      const agentId = certificate.subject.agent_id
      const { leaf_index, leaf_hash } = certificate.merkle
      const latest = yield* latestHead(agentId)
      const treeSize = size ?? latest.tree_size
      if (treeSize <= leaf_index || treeSize > latest.tree_size) {
        return yield* new BadRequest({
          error: `tree_size: must be greater than the leaf index ${leaf_index} and at most the log's size ${latest.tree_size}`
        })
      }
      const head = yield* Effect.flatMap(headAt(latest, treeSize), cosigned)
      const auditPath = yield* store.inclusionProof(agentId, leaf_index, treeSize)
      if (auditPath === undefined) return yield* notFound(`inclusion proof at tree size ${treeSize}`)
      return {
        checkpoint_id: checkpointId,
        agent_id: agentId,
        leaf_index,
        leaf_hash,
        tree_size: treeSize,
        root: head.root,
        audit_path: auditPath,
        proof: auditPath,
        signed_tree_head: head.note,
        checkpoint: head.note
      }
    })

  /** The consistency proof of the agent's log from size `from` to `size` (default: the newest). */
  const consistencyProof = (agentId: string, from: number, size: number | undefined) =>
    Effect.gen(function* () {
      const latest = yield* latestHead(agentId)
      const to = size ?? latest.tree_size
      if (to > latest.tree_size)
        return yield* new BadRequest({ error: `to: must be at most the log's size ${latest.tree_size}` })
      if (from > to) return yield* new BadRequest({ error: `from: must be at most to (${to})` })
      const toHead = yield* Effect.flatMap(headAt(latest, to), cosigned)
      const fromHead = yield* Effect.flatMap(headAt(latest, from), cosigned)
      const proof = yield* store.consistencyProof(agentId, from, to)
      if (proof === undefined) return yield* notFound(`consistency proof from ${from} to ${to}`)
      const at = (head: TreeHead) => ({ tree_size: head.tree_size, root: head.root, signed_tree_head: head.note })
      return { agent_id: agentId, from: at(fromHead), to: at(toHead), proof }
    })

  /** The verdict proof's status for the certificate's checkpoint, with the statement it proves. */
  const proofStatus = (certificate: Certificate) =>
    Effect.gen(function* () {
      const checkpointId = certificate.subject.checkpoint_id
      const record = yield* proofs.get(checkpointId)
      const sampled = shouldProve(checkpointId, certificate.claims.verdict)
      const statement = statementOf(certificate)
      return {
        checkpoint_id: checkpointId,
        agent_id: certificate.subject.agent_id,
        status: record?.status ?? (sampled ? ("pending" as const) : ("not_sampled" as const)),
        sampled,
        verdict_proof: record?.proof ?? certificate.verdict_proof,
        attempts: record?.attempts ?? 0,
        error: record?.error ?? null,
        updated_at: record?.updated_at ?? null,
        public_inputs: publicInputs(statement, PARAMS),
        security: securityFor(statement)
      }
    })

  /** The checkpoint's analysis as canonical JSON (it quotes the thinking's evidence), undefined when gone. */
  const analysisJson = (checkpointId: string) =>
    Effect.map(store.getCheckpoint(checkpointId), (checkpoint) =>
      checkpoint === undefined ? undefined : canonicalJson(analysisOf(checkpoint))
    )

  /** Queues a verdict proof of the checkpoint (its certificate's); its status after. */
  const requestProof = (checkpointId: string, certificate: Certificate) =>
    Effect.zipRight(
      proofs.request({ checkpoint_id: checkpointId, agent_id: certificate.subject.agent_id }),
      proofStatus(certificate)
    )

  /** Whether the agent's chain is verified at its current size already (a `chain` call then reads it back). */
  const chainVerified = (agentId: string) => Context.get(reads, ChainVerifier).isCurrent(agentId)

  /** The agent's whole chain recomputed (`verifyChain`). */
  const chain = (agentId: string, offset: number, limit: number) =>
    Effect.provide(verifyChain(agentId, offset, limit), reads)

  return {
    signingKeys,
    certificate,
    verifyCertificate,
    merkleRoot,
    cosignatures,
    agentCertificates,
    inclusionProof,
    consistencyProof,
    proofStatus,
    analysisJson,
    requestProof,
    chainVerified,
    chain
  }
})

export class Verification extends Context.Tag("candor/services/Verification")<
  Verification,
  Effect.Effect.Success<typeof make>
>() {}

export const layer = Layer.effect(Verification, make)
