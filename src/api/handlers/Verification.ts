/**
 * The public verification endpoints: reads of the store shaped for third-party verifiers, and
 * `POST /v1/verify`, which runs core's `verifyCertificate` with the key ring and the prover's
 * verdict-proof verifier. Unknown ids are 404s; nothing a caller sends can make a 500.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { AccessControl } from "../../../adapters/auth/AccessControl.js"
import { CurrentPrincipal } from "../../../adapters/auth/Principal.js"
import { BadRequest, NotFound } from "../../../adapters/http/ApiErrors.js"
import { noteOrigin, noteVerifierKeyOf, publicKeyInfo, verifyWithKeys } from "../../../adapters/keys/Trust.js"
import { SigningKeys } from "../../../adapters/keys/SigningKeys.js"
import { ChainVerifier } from "../../../adapters/store/ChainVerifier.js"
import * as KeyRepo from "../../../adapters/store/KeyRepo.js"
import * as ProofRepo from "../../../adapters/store/ProofRepo.js"
import { Store, type TreeHead } from "../../../adapters/store/Store.js"
import * as WitnessRepo from "../../../adapters/store/WitnessRepo.js"
import { fromHex, toHex } from "../../../core/Bytes.js"
import { canonicalBytes, canonicalJson } from "../../../core/Canonical.js"
import { analysisOf } from "../../../core/Commitments.js"
import type { Certificate } from "../../../core/Certificate.js"
import { MAX_LISTED } from "../../../core/ChainAudit.js"
import { sha256 } from "../../../core/Hash.js"
import { frontierRoot } from "../../../core/Merkle.js"
import { formatCheckpoint, signNote, verifyCheckpointNote } from "../../../core/Note.js"
import { shouldProve } from "../../../core/ProofSampling.js"
import type { ChainReportItem } from "../../../core/schema/Certificate.js"
import { PROTOCOL_DISCLAIMER } from "../../../core/schema/Disclaimer.js"
import { PARAMS } from "../../../prover/Params.js"
import { publicInputs, statementOf } from "../../../prover/Statement.js"
import { securityFor, verifyVerdictProof } from "../../../prover/VerdictProof.js"
import { CandorApi } from "../Api.js"
import { internal } from "./Access.js"
import { hidePrivate, viewerMayRead } from "./PublicAccess.js"

const notFound = (what: string) => new NotFound({ error: `${what} not found` })

/** The key ring as verifiers take it. */
const ringKeys = Effect.flatMap(KeyRepo.KeyRepo, (repo) => repo.list).pipe(
  Effect.map((records) => records.map((record) => ({ keyId: record.key_id, publicKey: record.public_key })))
)

const certificateOf = (checkpointId: string) =>
  Effect.flatMap(Store, (store) => store.getCertificate(checkpointId)).pipe(
    Effect.flatMap((certificate) =>
      certificate === undefined ? Effect.fail(notFound(`checkpoint ${checkpointId}`)) : Effect.succeed(certificate)
    )
  )

/** A certificate as the public routes serve it: a private agent's checkpoint is an unknown one. */
const publicCertificateOf = (checkpointId: string) =>
  Effect.gen(function* () {
    const certificate = yield* certificateOf(checkpointId)
    yield* hidePrivate(certificate.subject.agent_id, notFound(`checkpoint ${checkpointId}`))
    return certificate
  }).pipe(Effect.catchTag("StoreError", internal))

const latestHead = (agentId: string) =>
  Effect.flatMap(Store, (store) => store.treeHead(agentId)).pipe(
    Effect.flatMap((head) => (head === undefined ? Effect.fail(notFound(`agent ${agentId}`)) : Effect.succeed(head)))
  )

/**
 * The signed head at `treeSize` (at most the latest's). Workers store one for the newest size of
 * each batch; for a size in between the same note is signed now: a C2SP checkpoint carries no time,
 * so it is the note the worker would have signed (byte for byte, with the same key).
 */
const headAt = (latest: TreeHead, treeSize: number) =>
  Effect.gen(function* () {
    if (treeSize === latest.tree_size) return latest
    const store = yield* Store
    const stored = yield* store.treeHead(latest.agent_id, treeSize)
    if (stored !== undefined) return stored
    const root = yield* store.rootAt(latest.agent_id, treeSize)
    const origin = noteOrigin(latest.note)
    if (root === undefined || origin === undefined)
      return yield* notFound(`tree head of size ${treeSize} for agent ${latest.agent_id}`)
    const { active } = yield* SigningKeys
    const note = signNote(formatCheckpoint({ origin, size: treeSize, root: fromHex(root)!, extensions: [] }), {
      name: origin,
      key: active
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

// ---------------------------------------------------------------------------------------------
// POST /v1/verify

/**
 * The body as JSON. HttpApi hands over parsed JSON for a JSON (or absent) content type, and text or
 * bytes for others, which are parsed here: a certificate posted as `text/plain` is still one.
 */
const jsonBody = (payload: unknown) =>
  Effect.gen(function* () {
    const contentType = (yield* HttpServerRequest.HttpServerRequest).headers["content-type"] ?? "application/json"
    // The platform reads an empty JSON body as null: there is nothing to verify either way.
    if (payload === null || payload === "")
      return yield* new BadRequest({ error: "request body is empty: post a certificate" })
    if (contentType.toLowerCase().includes("application/json")) return payload
    const text =
      typeof payload === "string"
        ? payload
        : payload instanceof Uint8Array
          ? new TextDecoder().decode(payload)
          : undefined
    if (text === undefined) return payload
    return yield* Effect.try({
      try: () => JSON.parse(text) as unknown,
      catch: () => new BadRequest({ error: "request body is not valid JSON" })
    })
  })

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** A bare certificate, or `{certificate, signed_tree_head?}`. */
const verifyRequest = (
  body: unknown
): Effect.Effect<{ certificate: unknown; treeHead: string | undefined }, BadRequest> => {
  if (!isObject(body) || !("certificate" in body) || "type" in body)
    return Effect.succeed({ certificate: body, treeHead: undefined })
  const head = body["signed_tree_head"]
  if (head !== undefined && head !== null && typeof head !== "string") {
    return Effect.fail(new BadRequest({ error: "signed_tree_head: must be the signed note as a string" }))
  }
  return Effect.succeed({ certificate: body["certificate"], treeHead: head ?? undefined })
}

const verify = (payload: unknown) =>
  Effect.gen(function* () {
    const { certificate, treeHead } = yield* verifyRequest(yield* jsonBody(payload))
    return verifyWithKeys(certificate, yield* ringKeys, { treeHead, verifyVerdictProof })
  })

// ---------------------------------------------------------------------------------------------
// GET /v1/reputation/{agent_id}/verify

/** Hex SHA-256 of the JCS of the certificate without `verdict_proof` (the proof is attached later). */
export const certificateHash = (certificate: Certificate): string => {
  const { verdict_proof: _proof, ...rest } = certificate
  return toHex(sha256(canonicalBytes(rest)))
}

/**
 * The agent's chain recomputed from its stored certificates, its Merkle root from the chain hashes,
 * every signature checked (adapters/store/ChainVerifier.ts: cached per tree size, extended when the
 * log grows, one pass per agent at a time); `limit` certificates from position `offset` listed.
 */
export const verifyChain = (agentId: string, offset: number, limit: number) =>
  Effect.gen(function* () {
    const { audit, head, keys } = yield* (yield* ChainVerifier).verify(agentId)
    const size = head?.tree_size ?? 0
    const { frontier } = audit
    const window =
      offset >= size || limit === 0
        ? []
        : yield* (yield* ProofRepo.ProofRepo).agentCertificates(agentId, offset, Math.min(limit, size - offset))
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

// ---------------------------------------------------------------------------------------------
// Proof status

const proofStatus = (certificate: Certificate) =>
  Effect.gen(function* () {
    const checkpointId = certificate.subject.checkpoint_id
    const record = yield* (yield* ProofRepo.ProofRepo).get(checkpointId)
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

// ---------------------------------------------------------------------------------------------

const Handlers = HttpApiBuilder.group(CandorApi, "verification", (handlers) =>
  handlers
    .handle("listSigningKeys", () =>
      Effect.flatMap(KeyRepo.KeyRepo, (repo) => repo.list).pipe(
        Effect.map((records) => ({ keys: records.map(publicKeyInfo) })),
        Effect.catchTag("StoreError", internal)
      )
    )
    .handle("getCertificate", ({ path }) => publicCertificateOf(path.checkpoint_id))
    .handle("verifyCertificate", ({ payload }) =>
      verify(payload).pipe(
        Effect.map((result) => ({ ...result, disclaimer: PROTOCOL_DISCLAIMER })),
        Effect.catchTag("StoreError", internal)
      )
    )
    .handle("getMerkleRoot", ({ path }) =>
      Effect.gen(function* () {
        yield* hidePrivate(path.agent_id, notFound(`agent ${path.agent_id}`))
        const head = yield* Effect.flatMap(latestHead(path.agent_id), WitnessRepo.cosignedHead)
        const keys = yield* ringKeys
        return {
          agent_id: path.agent_id,
          tree_size: head.tree_size,
          root: head.root,
          signed_tree_head: head.note,
          checkpoint: head.note,
          log_origin: noteOrigin(head.note) ?? "",
          note_verifier_key: noteVerifierKeyOf(head.note, keys) ?? null,
          timestamp: head.created_at
        }
      }).pipe(Effect.catchTag("StoreError", internal))
    )
    .handle("getCosignatures", ({ path, urlParams }) =>
      Effect.gen(function* () {
        yield* hidePrivate(path.agent_id, notFound(`agent ${path.agent_id}`))
        const latest = yield* latestHead(path.agent_id)
        const treeSize = urlParams.tree_size ?? latest.tree_size
        if (treeSize > latest.tree_size)
          return yield* new BadRequest({ error: `tree_size: must be at most the log's size ${latest.tree_size}` })
        const { head, cosignatures } = yield* WitnessRepo.withCosignatures(yield* headAt(latest, treeSize))
        return {
          agent_id: path.agent_id,
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
      }).pipe(Effect.catchTag("StoreError", internal))
    )
    .handle("listAgentCertificates", ({ path, urlParams }) =>
      Effect.gen(function* () {
        yield* hidePrivate(path.agent_id, notFound(`agent ${path.agent_id}`))
        const head = yield* latestHead(path.agent_id)
        const { from, limit } = urlParams
        if (from > head.tree_size)
          return yield* new BadRequest({ error: `from: must be at most the log's size ${head.tree_size}` })
        const stored = yield* (yield* ProofRepo.ProofRepo).agentCertificates(path.agent_id, from, limit)
        // Certificates committed after the newest signed head are not in a signed tree yet.
        const certificates = stored.filter((certificate) => certificate.chain.position < head.tree_size)
        const after = (certificates.at(-1)?.chain.position ?? head.tree_size) + 1
        const next = stored.length === limit && after < head.tree_size ? after : null
        return { agent_id: path.agent_id, from, limit, tree_size: head.tree_size, certificates, next }
      }).pipe(Effect.catchTag("StoreError", internal))
    )
    .handle("getInclusionProof", ({ path, urlParams }) =>
      Effect.gen(function* () {
        const certificate = yield* publicCertificateOf(path.checkpoint_id)
        const agentId = certificate.subject.agent_id
        const { leaf_index, leaf_hash } = certificate.merkle
        const latest = yield* latestHead(agentId)
        const treeSize = urlParams.tree_size ?? latest.tree_size
        if (treeSize <= leaf_index || treeSize > latest.tree_size) {
          return yield* new BadRequest({
            error: `tree_size: must be greater than the leaf index ${leaf_index} and at most the log's size ${latest.tree_size}`
          })
        }
        const head = yield* Effect.flatMap(headAt(latest, treeSize), WitnessRepo.cosignedHead)
        const auditPath = yield* (yield* Store).inclusionProof(agentId, leaf_index, treeSize)
        if (auditPath === undefined) return yield* notFound(`inclusion proof at tree size ${treeSize}`)
        return {
          checkpoint_id: path.checkpoint_id,
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
      }).pipe(Effect.catchTag("StoreError", internal))
    )
    .handle("getConsistencyProof", ({ path, urlParams }) =>
      Effect.gen(function* () {
        yield* hidePrivate(path.agent_id, notFound(`agent ${path.agent_id}`))
        const latest = yield* latestHead(path.agent_id)
        const to = urlParams.to ?? latest.tree_size
        if (to > latest.tree_size)
          return yield* new BadRequest({ error: `to: must be at most the log's size ${latest.tree_size}` })
        if (urlParams.from > to) return yield* new BadRequest({ error: `from: must be at most to (${to})` })
        const toHead = yield* Effect.flatMap(headAt(latest, to), WitnessRepo.cosignedHead)
        const fromHead = yield* Effect.flatMap(headAt(latest, urlParams.from), WitnessRepo.cosignedHead)
        const proof = yield* (yield* Store).consistencyProof(path.agent_id, urlParams.from, to)
        if (proof === undefined) return yield* notFound(`consistency proof from ${urlParams.from} to ${to}`)
        const at = (head: TreeHead) => ({ tree_size: head.tree_size, root: head.root, signed_tree_head: head.note })
        return { agent_id: path.agent_id, from: at(fromHead), to: at(toHead), proof }
      }).pipe(Effect.catchTag("StoreError", internal))
    )
    .handle("getVerdictProof", ({ path }) =>
      Effect.gen(function* () {
        const certificate = yield* publicCertificateOf(path.checkpoint_id)
        const status = yield* proofStatus(certificate)
        // The analysis quotes the thinking (evidence excerpts): only for who may read the checkpoint itself.
        if (!(yield* viewerMayRead(certificate.subject.agent_id))) return status
        const checkpoint = yield* (yield* Store).getCheckpoint(path.checkpoint_id)
        return checkpoint === undefined ? status : { ...status, analysis_json: canonicalJson(analysisOf(checkpoint)) }
      }).pipe(Effect.catchTag("StoreError", internal))
    )
    .handle("verifyAgentChain", ({ path, urlParams }) =>
      Effect.gen(function* () {
        yield* hidePrivate(path.agent_id, notFound(`agent ${path.agent_id}`))
        const report = yield* verifyChain(path.agent_id, urlParams.offset, urlParams.limit)
        // An agent with no log at all is unknown here.
        if (report.merkle.signed_tree_head === null && report.chain.length === 0)
          return yield* notFound(`agent ${path.agent_id}`)
        return { ...report, disclaimer: PROTOCOL_DISCLAIMER }
      }).pipe(Effect.catchTag("StoreError", internal))
    )
    .handle("requestVerdictProof", ({ path }) =>
      Effect.gen(function* () {
        const certificate = yield* certificateOf(path.checkpoint_id)
        const agentId = certificate.subject.agent_id
        const principal = yield* CurrentPrincipal
        const access = yield* AccessControl
        yield* access.agent(principal, agentId, "write")
        yield* access.write(principal)
        yield* (yield* ProofRepo.ProofRepo).request({ checkpoint_id: path.checkpoint_id, agent_id: agentId })
        return yield* proofStatus(certificate)
      }).pipe(Effect.catchTag("StoreError", internal))
    )
)

/** The handlers, with their repositories on the process's `SqlClient`. */
export const VerificationLive = Handlers.pipe(
  Layer.provide(Layer.mergeAll(KeyRepo.layer, ProofRepo.layer, WitnessRepo.layer))
)
