/**
 * On-chain anchoring (docs/on-chain.md): anchor the newest signed tree heads of agents, publish the
 * reputation scores Candor computed, check a leaf against the root the contract holds now, follow an
 * anchor's transaction, and list anchors. Writes need write access to every agent named (Owner or
 * Admin of its organization, or an organization key of that role, or the service-role key); reads
 * need read access to every agent of the anchor (any member). An agent or anchor the caller may not
 * read is 404. With anchoring off (CANDOR_CHAIN_* unset) the routes that touch the chain answer 503.
 * Sends are limited per organization (CANDOR_CHAIN_SENDS_PER_HOUR): 429 with Retry-After.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as Schema from "effect/Schema"
import { Authentication } from "../../../adapters/auth/Authentication.js"
import {
  BadRequest,
  Forbidden,
  InternalError,
  NotFound,
  ServiceUnavailable,
  TooManyRequests
} from "../../../adapters/http/ApiErrors.js"
import { AgentId } from "../../../core/schema/Ids.js"
import {
  AnchorHistory,
  AnchorId,
  AnchorProof,
  AnchorRootRequest,
  AnchorStatusResponse,
  PublishScoresRequest,
  ScorePublication,
  TreeHeadAnchor
} from "../../../core/schema/OnChain.js"
import { IntParam } from "./Checkpoints.js"

export const ANCHOR_HISTORY_LIMIT = { min: 1, max: 100, default: 20 } as const

export class OnChainApi extends HttpApiGroup.make("onChain")
  .add(
    HttpApiEndpoint.post("anchorRoot", "/on-chain/anchor-root").setPayload(AnchorRootRequest).addSuccess(TreeHeadAnchor)
  )
  .add(
    HttpApiEndpoint.post("publishScores", "/on-chain/publish-scores")
      .setPayload(PublishScoresRequest)
      .addSuccess(ScorePublication)
  )
  .add(
    HttpApiEndpoint.get("verifyAnchorProof", "/on-chain/verify-proof")
      .setUrlParams(Schema.Struct({ anchor_id: AnchorId, agent_id: AgentId }))
      .addSuccess(AnchorProof)
  )
  .add(
    HttpApiEndpoint.get("getAnchorStatus", "/on-chain/status/:anchor_id")
      .setPath(Schema.Struct({ anchor_id: AnchorId }))
      .addSuccess(AnchorStatusResponse)
  )
  .add(
    HttpApiEndpoint.get("getAnchorHistory", "/on-chain/history")
      .setUrlParams(
        Schema.Struct({
          agent_id: Schema.optionalWith(AgentId, { exact: true }),
          limit: Schema.optionalWith(IntParam(ANCHOR_HISTORY_LIMIT.min, ANCHOR_HISTORY_LIMIT.max), {
            default: () => ANCHOR_HISTORY_LIMIT.default,
            exact: true
          }),
          cursor: Schema.optionalWith(IntParam(1, Number.MAX_SAFE_INTEGER), { exact: true })
        })
      )
      .addSuccess(AnchorHistory)
  )
  .addError(BadRequest)
  .addError(Forbidden)
  .addError(NotFound)
  .addError(ServiceUnavailable)
  // Over the organization's on-chain sends (CANDOR_CHAIN_SENDS_PER_HOUR), with Retry-After.
  .addError(TooManyRequests)
  .addError(InternalError)
  .middleware(Authentication) {}
