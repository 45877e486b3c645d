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
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { type PageVerification, reputationPageResponse } from "../../adapters/http/ReputationPage.js"
import { storeFailure } from "../../adapters/http/StoreFailure.js"
import type { AccessControl } from "../../adapters/auth/AccessControl.js"
import type { Authentication } from "../../adapters/auth/Authentication.js"
import { agentShown } from "../api/handlers/PublicAccess.js"
import type { Visibility } from "../../core/schema/Reputation.js"
import * as PublicAccess from "../../services/PublicAccess.js"
import * as Reputation from "../../services/Reputation.js"
import * as Verification from "../../services/Verification.js"
import { PublicClient } from "./PublicRateLimit.js"

export const PAGE_PATH = "/agents/:agent_id/reputation"
/** Logs up to this size are verified whole when the page is rendered. */
export const PAGE_VERIFY_MAX = 20_000

/** The page's score history: the last 90 days, at most 1000 scores. */
const HISTORY_DAYS = 90
const HISTORY_LIMIT = 1000

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
    if (yield* (yield* Verification.Verification).chainVerified(agentId)) return true
    const client = yield* Effect.serviceOption(PublicClient)
    return Option.isNone(client) || (yield* client.value.take("chain")).allowed
  })

/**
 * `agentShown`, its store failure mapped here: this route is no HttpApi endpoint, so no API error
 * schema answers a `StoreError` (adapters/http/StoreFailure.ts); the failure is logged as every
 * route's is, then answered by the page's own 500 below.
 */
const shownOnPage = (agentId: string, visibility: Visibility) =>
  agentShown(agentId, visibility).pipe(Effect.catchTag("StoreError", storeFailure("store failure", { logCause: true })))

const page = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  const agentId = (yield* HttpLayerRouter.params).agent_id ?? ""
  // Answered only when this request may see it (a private agent: to its readers, ../api/handlers/PublicAccess.ts);
  // the page renders a private agent's reputation as an unlisted one's (adapters/http/ReputationPage.ts
  // refuses "private" itself, so no other caller can render one by mistake).
  const found = yield* (yield* Reputation.Reputation).publicPage(agentId, HISTORY_DAYS, HISTORY_LIMIT, shownOnPage)
  let input = null
  if (found !== undefined) {
    const { history, reputation: shown } = found
    const reputation = { ...shown, visibility: shown.visibility === "private" ? "unlisted" : shown.visibility }
    let verification: PageVerification | null = null
    if (reputation.computed_over.tree_size <= PAGE_VERIFY_MAX && (yield* mayVerify(agentId))) {
      const report = yield* (yield* Verification.Verification).chain(agentId, 0, 1)
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

/**
 * The page route, on the domain services it reads through (services/): the agent's reputation and
 * history, its chain's verification, what is private.
 */
export const ReputationPageRoute = Layer.unwrapEffect(
  Effect.map(
    Effect.context<
      Reputation.Reputation | Verification.Verification | PublicAccess.PublicAccess | AccessControl | Authentication
    >(),
    (context) => HttpLayerRouter.add("GET", PAGE_PATH, Effect.provide(page, context))
  )
).pipe(
  // The same service layers as the API's handlers (src/api/ApiLive.ts): built once per process.
  Layer.provide(Layer.mergeAll(Reputation.layer, Verification.layer, PublicAccess.layer))
)
