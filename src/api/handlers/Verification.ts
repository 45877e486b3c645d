/**
 * The public verification endpoints, through the Verification service (services/Verification.ts):
 * reads of the store shaped for third-party verifiers, and `POST /v1/verify`, which checks a posted
 * certificate. A private agent and its checkpoints are unknown ids here (./PublicAccess.ts). Unknown
 * ids are 404s; nothing a caller sends can make a 500.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as Effect from "effect/Effect"
import { AccessControl } from "../../../adapters/auth/AccessControl.js"
import { CurrentPrincipal } from "../../../adapters/auth/Principal.js"
import { BadRequest } from "../../../adapters/http/ApiErrors.js"
import { PROTOCOL_DISCLAIMER } from "../../../core/schema/Disclaimer.js"
import { notFound, Verification } from "../../../services/Verification.js"
import { CandorApi } from "../Api.js"
import { hidePrivate, viewerMayRead } from "./PublicAccess.js"

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

// ---------------------------------------------------------------------------------------------

export const VerificationLive = HttpApiBuilder.group(CandorApi, "verification", (handlers) =>
  Effect.map(Verification, (verification) => {
    /** A certificate as the public routes serve it: a private agent's checkpoint is an unknown one. */
    const publicCertificateOf = (checkpointId: string) =>
      Effect.gen(function* () {
        const certificate = yield* verification.certificate(checkpointId)
        yield* hidePrivate(certificate.subject.agent_id, notFound(`checkpoint ${checkpointId}`))
        return certificate
      })

    /** The agent, unless it is private and the request may not read it (then an unknown one). */
    const publicAgent = (agentId: string) => hidePrivate(agentId, notFound(`agent ${agentId}`))

    return handlers
      .handle("listSigningKeys", () => verification.signingKeys)
      .handle("getCertificate", ({ path }) => publicCertificateOf(path.checkpoint_id))
      .handle("verifyCertificate", ({ payload }) =>
        Effect.gen(function* () {
          const { certificate, treeHead } = yield* verifyRequest(yield* jsonBody(payload))
          return yield* verification.verifyCertificate(certificate, treeHead)
        }).pipe(Effect.map((result) => ({ ...result, disclaimer: PROTOCOL_DISCLAIMER })))
      )
      .handle("getMerkleRoot", ({ path }) =>
        Effect.zipRight(publicAgent(path.agent_id), verification.merkleRoot(path.agent_id))
      )
      .handle("getCosignatures", ({ path, urlParams }) =>
        Effect.zipRight(publicAgent(path.agent_id), verification.cosignatures(path.agent_id, urlParams.tree_size))
      )
      .handle("listAgentCertificates", ({ path, urlParams }) =>
        Effect.zipRight(
          publicAgent(path.agent_id),
          verification.agentCertificates(path.agent_id, urlParams.from, urlParams.limit)
        )
      )
      .handle("getInclusionProof", ({ path, urlParams }) =>
        Effect.gen(function* () {
          const certificate = yield* publicCertificateOf(path.checkpoint_id)
          return yield* verification.inclusionProof(path.checkpoint_id, certificate, urlParams.tree_size)
        })
      )
      .handle("getConsistencyProof", ({ path, urlParams }) =>
        Effect.zipRight(
          publicAgent(path.agent_id),
          verification.consistencyProof(path.agent_id, urlParams.from, urlParams.to)
        )
      )
      .handle("getVerdictProof", ({ path }) =>
        Effect.gen(function* () {
          const certificate = yield* publicCertificateOf(path.checkpoint_id)
          const status = yield* verification.proofStatus(certificate)
          // The analysis quotes the thinking (evidence excerpts): only for who may read the checkpoint itself.
          if (!(yield* viewerMayRead(certificate.subject.agent_id))) return status
          const analysis = yield* verification.analysisJson(path.checkpoint_id)
          return analysis === undefined ? status : { ...status, analysis_json: analysis }
        })
      )
      .handle("verifyAgentChain", ({ path, urlParams }) =>
        Effect.gen(function* () {
          yield* publicAgent(path.agent_id)
          const report = yield* verification.chain(path.agent_id, urlParams.offset, urlParams.limit)
          // An agent with no log at all is unknown here.
          if (report.merkle.signed_tree_head === null && report.chain.length === 0)
            return yield* notFound(`agent ${path.agent_id}`)
          return { ...report, disclaimer: PROTOCOL_DISCLAIMER }
        })
      )
      .handle("requestVerdictProof", ({ path }) =>
        Effect.gen(function* () {
          const certificate = yield* verification.certificate(path.checkpoint_id)
          const principal = yield* CurrentPrincipal
          const access = yield* AccessControl
          yield* access.agent(principal, certificate.subject.agent_id, "write")
          yield* access.write(principal)
          return yield* verification.requestProof(path.checkpoint_id, certificate)
        })
      )
  })
)
