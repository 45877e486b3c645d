/**
 * `GET /agents/{agent_id}/reputation` on the API port: the agent's public reputation page
 * (adapters/http/ReputationPage.ts renders it; docs/reputation-badges.md). No credentials, one
 * self-contained HTML document; the same 404 page for an unknown and a private agent.
 *
 * A plain router route (like /health): it is a page for people, outside /v1 and the OpenAPI document.
 * The chain is verified on the page for logs up to `PAGE_VERIFY_MAX` certificates (through the
 * process's cached verifier, at the cost of one `chain` token when the log is not verified at its
 * size yet); larger logs, and clients out of `chain` tokens, show "not checked" with the command
 * that checks them.
 */
import * as HttpLayerRouter from "@effect/platform/HttpLayerRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { type PageVerification, reputationPageResponse } from "../../adapters/http/ReputationPage.js"
import type { AccessControl } from "../../adapters/auth/AccessControl.js"
import type { Authentication } from "../../adapters/auth/Authentication.js"
import { ChainVerifier } from "../../adapters/store/ChainVerifier.js"
import * as KeyRepo from "../../adapters/store/KeyRepo.js"
import * as ProofRepo from "../../adapters/store/ProofRepo.js"
import * as ReputationRepo from "../../adapters/store/ReputationRepo.js"
import type { Store } from "../../adapters/store/Store.js"
import type * as SqlClient from "@effect/sql/SqlClient"
import { publicReputation } from "../api/handlers/Reputation.js"
import * as PublicAccess from "../../services/PublicAccess.js"
import { verifyChain } from "../../services/Verification.js"
import { PublicClient } from "./PublicRateLimit.js"

export const PAGE_PATH = "/agents/:agent_id/reputation"
/** Logs up to this size are verified whole when the page is rendered. */
export const PAGE_VERIFY_MAX = 20_000

const DAY_MS = 86_400_000

/** The base URL the page prints in its commands: the one the reader used. */
const apiBaseOf = (request: HttpServerRequest.HttpServerRequest): string => {
  const proto = request.headers["x-forwarded-proto"]?.split(",")[0]?.trim() === "https" ? "https" : "http"
  return `${proto}://${request.headers["host"] ?? "localhost"}`
}

/**
 * Whether the page may verify the log now: always when the verification is cached at the log's
 * size; otherwise it is whole-log work, and costs the client one token of the `chain` class (./PublicRateLimit.ts).
 * Without one the page shows "not checked", with the command that checks it.
 */
const mayVerify = (agentId: string) =>
  Effect.gen(function* () {
    if (yield* (yield* ChainVerifier).isCurrent(agentId)) return true
    const client = yield* Effect.serviceOption(PublicClient)
    return Option.isNone(client) || (yield* client.value.take("chain")).allowed
  })

const page = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  const agentId = (yield* HttpLayerRouter.params).agent_id ?? ""
  const shown = yield* publicReputation(agentId)
  // Answered only when this request may see it (a private agent: to its readers, ./PublicAccess.ts); the
  // page renders a private agent's reputation as an unlisted one's (adapters/http/ReputationPage.ts
  // refuses "private" itself, so no other caller can render one by mistake).
  const reputation =
    shown === undefined
      ? undefined
      : { ...shown, visibility: shown.visibility === "private" ? "unlisted" : shown.visibility }
  let input = null
  if (reputation !== undefined) {
    const now = yield* Clock.currentTimeMillis
    const history = yield* (yield* ReputationRepo.ReputationRepo).history(
      agentId,
      new Date(now - 90 * DAY_MS).toISOString(),
      1000
    )
    let verification: PageVerification | null = null
    if (reputation.computed_over.tree_size <= PAGE_VERIFY_MAX && (yield* mayVerify(agentId))) {
      const report = yield* verifyChain(agentId, 0, 1)
      verification = {
        chain_valid: report.chain.valid && report.signatures.valid && report.merkle.valid,
        signed_tree_head_valid: report.merkle.signed_tree_head_valid,
        tree_size: report.merkle.tree_size,
        root: report.merkle.root,
        signed_tree_head: report.merkle.signed_tree_head
      }
    }
    input = { reputation, history, verification, apiBase: apiBaseOf(request) }
  }
  const response = reputationPageResponse(agentId, input)
  return HttpServerResponse.text(response.body, {
    status: response.status,
    headers: response.headers,
    contentType: response.headers["content-type"]
  })
}).pipe(
  Effect.catchAll((error) =>
    Effect.as(
      Effect.logWarning("reputation page failed").pipe(Effect.annotateLogs({ error: String(error) })),
      HttpServerResponse.unsafeJson({ error: "internal error" }, { status: 500 })
    )
  )
)

/** The page route, on the process's SqlClient, store and repositories. */
export const ReputationPageRoute = Layer.unwrapEffect(
  Effect.map(
    Effect.context<
      | SqlClient.SqlClient
      | Store
      | ReputationRepo.ReputationRepo
      | PublicAccess.PublicAccess
      | ProofRepo.ProofRepo
      | KeyRepo.KeyRepo
      | ChainVerifier
      | AccessControl
      | Authentication
    >(),
    (context) => HttpLayerRouter.add("GET", PAGE_PATH, Effect.provide(page, context))
  )
).pipe(
  // What is private (the agent's visibility), as the API's public routes read it.
  Layer.provide(PublicAccess.layer)
)
