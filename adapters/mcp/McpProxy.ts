/**
 * The MCP gateway (issue 28, docs/mcp.md): a transparent proxy for the MCP Streamable HTTP
 * transport at `/mcp/{server_id}` on the gateway's port. An agent presents its token
 * (`x-candor-agent-token`, never forwarded); requests and answers pass byte for byte (session and
 * protocol headers, JSON and SSE answers, GET streams, DELETE), while the JSON-RPC messages that
 * matter are read on the side:
 *
 * - a POST body is read whole (bounded: `maxRequestBytes`, 413 above) and parsed: one that is not
 *   JSON, a batch, or a `tools/call` without a readable tool name is refused with 400 and a
 *   JSON-RPC error (a call the proxy cannot read is never passed unchecked);
 * - a `tools/call` is decided before the server sees it (`decideCall`): the agent's containment
 *   (403), a scoped transaction it names, its tool's pin (a changed definition under an enforcing
 *   policy), then the agent's resolved policy with the call's arguments (core/ToolCallPolicy.ts).
 *   A refusal is a JSON-RPC error naming the rule, answered by Candor; `warn` records and forwards;
 * - the answer to a `tools/list` is read as it streams (MessageReader.ts: each message bounded by
 *   `maxMessageBytes`, a larger one passed and counted unreadable) and its tools pinned (ToolPins.ts);
 * - the result of a `tools/call` is judged (`judgeResult`: the LLM path's judge and memory, a
 *   `tool_result` checkpoint published with the agent's events). In `enforce` the message answering
 *   the call is held until judged (`held`: the JSON body, or that one SSE event) and a violation, or
 *   a message Candor cannot read, is replaced by a JSON-RPC error (-32003); in other modes the
 *   answer streams unchanged and is judged on the side.
 *
 * Lookups are the shared agent state's local copy (adapters/bus/AgentState.ts): a token's grant by
 * its SHA-256, a server by its id, the agent's settings. A revoked token or a deleted server is
 * refused as soon as the copy has the change: the API's write resolves once this process's copy
 * applied it (embedded), or within the KV watch's delay on NATS (normally well under a second).
 * Memory is the copy's: one entry per live token and server.
 *
 * Connections to servers go through the webhooks' SSRF guard at connect time (a DNS answer naming a
 * private address is refused; an IP literal is checked before dispatch) unless private addresses are
 * allowed (`CANDOR_MCP_ALLOW_PRIVATE`). Answers are asked for in `identity` coding, so they can be read.
 *
 * This module is the entry (the token, the server, containment) and the wiring: `make` builds the
 * modules each part above lives in (README.md names them) around one `ProxyContext`.
 */
import * as Effect from "effect/Effect"
import * as FiberSet from "effect/FiberSet"
import * as Layer from "effect/Layer"
import * as Runtime from "effect/Runtime"
import type { IncomingMessage, ServerResponse } from "node:http"
import { containmentErrorBody, containmentInForce } from "../../core/Containment.js"
import { IDENTIFIER_PATTERN } from "../../core/schema/Ids.js"
import { AnalysisModel } from "../analysis/AnalysisModel.js"
import { ApprovalDesk } from "../bus/ApprovalDesk.js"
import { hashSecret } from "../auth/Secrets.js"
import { AgentState } from "../bus/AgentState.js"
import { EventFeed } from "../bus/EventFeed.js"
import { ContainedRefusals } from "../gateway/ContainedRefusals.js"
import { makeEventPublisher } from "../gateway/EventPublisher.js"
import { makeApprovalHold } from "./ApprovalHold.js"
import { makeCallDecision } from "./CallDecision.js"
import { makeForwarding } from "./Forwarding.js"
import { makeHeldResults } from "./HeldResults.js"
import { AGENT_CONTAINED, errorMessage, type JsonRpcId } from "./JsonRpc.js"
import { McpGateway } from "./McpGateway.js"
import { defaultMcpProxyOptions, type McpProxyOptions } from "./McpProxyOptions.js"
import { makePostRequest } from "./PostRequest.js"
import { type Caller, headerValue, json, plainError, type ProxyContext, SESSION_HEADER } from "./ProxyContext.js"
import { makePublication } from "./Publication.js"
import { makeResultJudging } from "./ResultJudging.js"
import { makeSideReading } from "./SideReading.js"
import { ToolPins } from "./ToolPins.js"

export { defaultMcpProxyOptions, type McpProxyOptions } from "./McpProxyOptions.js"

export const AGENT_TOKEN_HEADER = "x-candor-agent-token"
const SERVER_PATH = /^\/mcp\/(mcp_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/

/** A token's use is shared at most this often per gateway (its `last_used_at` may be that much behind). */
const TOKEN_USE_INTERVAL_MS = 60_000
/** Tokens whose last report this gateway remembers (one entry each; past it, all are forgotten and reported again). */
const TOKEN_USES_KEPT = 100_000

/** How many times a header was sent (raw list: Node joins or drops repetitions in `headers`). */
const countHeader = (raw: ReadonlyArray<string>, name: string): number => {
  let n = 0
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.toLowerCase() === name) n++
  return n
}

/** The session a checkpoint names: the client's MCP session when it is a valid identifier. */
const sessionOf = (session: string | undefined, serverId: string): string =>
  session !== undefined && IDENTIFIER_PATTERN.test(session) ? session : serverId

export const make = (options: Partial<McpProxyOptions> = {}) =>
  Effect.gen(function* () {
    const settings = { ...defaultMcpProxyOptions, ...options }
    const state = yield* AgentState
    const peek = state.peek
    // Every agent state has a local copy; the proxy's lookups are synchronous map reads on it.
    if (peek === undefined) return yield* Effect.dieMessage("the MCP gateway needs an agent state with a local copy")
    const feed = yield* Effect.serviceOption(EventFeed)
    const publisher = yield* makeEventPublisher(settings.subjectPrefix)
    const judge = yield* AnalysisModel
    const desk = yield* ApprovalDesk
    const announcements = yield* FiberSet.make<void>()
    const runtime = yield* Effect.runtime<never>()
    const runFork = Runtime.runFork(runtime)
    /**
     * Side work (a record, a catalogue event, shared state) started after what the caller is doing
     * now: a fiber forked the default way runs at once, until its first wait, so a record published
     * while a held answer is settled would run its encoding and publish before the answer is written.
     */
    const runAfter = <A, E>(effect: Effect.Effect<A, E>) => runFork(effect, { immediate: false })
    const clock = yield* Effect.clock
    const pins = new ToolPins(state)
    const refusalsRecorded = new ContainedRefusals(settings.containedRefusals)

    const now = () => new Date(clock.unsafeCurrentTimeMillis())

    /** What the modules share (ProxyContext.ts), built once. */
    const ctx: ProxyContext = {
      settings,
      state,
      clock,
      now,
      runFork,
      runAfter,
      ...makePublication({ announcements, feed, now, publisher, runAfter })
    }
    const { blocked, logged } = ctx
    const judging = makeResultJudging(ctx, judge)
    const sideReading = makeSideReading(ctx, pins, judging)
    const heldResults = makeHeldResults(ctx, judging)
    const forwarding = yield* makeForwarding(ctx, sideReading, heldResults)
    const { forward } = forwarding
    const { decideCall } = makeCallDecision(ctx, pins)
    const { hold, withdrawHeld } = makeApprovalHold(ctx, { desk, forwarding, heldResults, judging, sideReading })

    /** The refusal of a contained agent: 403 with `containment_error` (429 past the recorded rate). */
    const contained = (res: ServerResponse, caller: Caller, id: JsonRpcId): boolean => {
      const containment = containmentInForce(caller.settings.containment, undefined)
      if (containment === undefined) return false
      const wait = refusalsRecorded.take(caller.agentId, clock.unsafeCurrentTimeMillis())
      if (wait !== undefined) {
        json(
          res,
          429,
          Buffer.from(
            JSON.stringify({ error: `agent ${caller.agentId} is contained and calling too often; retry later` })
          ),
          {
            "retry-after": String(wait)
          }
        )
        return true
      }
      const body = containmentErrorBody(caller.agentId, containment.containment, containment.scope)
      blocked(caller, "containment", body.reason)
      json(res, 403, errorMessage(id, AGENT_CONTAINED, body.error, { containment_error: body.containment_error }))
      return true
    }

    const post = makePostRequest(ctx, { contained, decideCall, forward, hold, withdrawHeld })

    /** When each token was last reported used by this gateway (ms); at most TOKEN_USES_KEPT, then forgotten at once. */
    const tokenUses = new Map<string, number>()
    /** A token let in: its last use shared (for `GET …/mcp-tokens`), at most once a minute per token. */
    const noteTokenUse = (tokenId: string) => {
      const nowMs = clock.unsafeCurrentTimeMillis()
      const last = tokenUses.get(tokenId)
      if (last !== undefined && nowMs - last < TOKEN_USE_INTERVAL_MS) return
      if (tokenUses.size >= TOKEN_USES_KEPT) tokenUses.clear()
      tokenUses.set(tokenId, nowMs)
      const at = new Date(nowMs).toISOString()
      runAfter(logged(state.updateKey(tokenId, { mcpTokenUsedAt: at }), "MCP token use not shared"))
    }

    const handle = (req: IncomingMessage, res: ServerResponse): void => {
      const url = req.url ?? "/"
      const query = url.indexOf("?")
      const match = SERVER_PATH.exec(query < 0 ? url : url.slice(0, query))
      const tokens = countHeader(req.rawHeaders, AGENT_TOKEN_HEADER)
      if (tokens === 0) {
        req.resume()
        return plainError(res, 401, `an agent token is required: send it as ${AGENT_TOKEN_HEADER}`)
      }
      if (tokens > 1) {
        req.resume()
        return plainError(res, 400, `send ${AGENT_TOKEN_HEADER} once`)
      }
      const token = headerValue(req.headers[AGENT_TOKEN_HEADER]) ?? ""
      const grant = state.peekKey(hashSecret(token)).mcpToken
      if (grant === undefined) {
        req.resume()
        return plainError(res, 401, "unknown or revoked agent token")
      }
      noteTokenUse(grant.token_id)
      const serverId = match?.[1]
      const server = serverId === undefined ? undefined : state.peekKey(serverId).mcpServer
      // Another organization's server is as unknown as a server that does not exist.
      if (serverId === undefined || server === undefined || server.org_id !== grant.org_id) {
        req.resume()
        return plainError(res, 404, "unknown MCP server")
      }
      const caller: Caller = {
        agentId: grant.agent_id,
        orgId: grant.org_id,
        serverId,
        server,
        settings: peek(grant.agent_id),
        sessionId: sessionOf(headerValue(req.headers[SESSION_HEADER]), serverId)
      }
      if (req.method === "POST") return post(req, res, caller)
      req.resume()
      if (contained(res, caller, null)) return
      // GET (the server's stream), DELETE (the session's end), anything else: passed through unread.
      forward(req, res, caller, undefined, undefined)
    }

    return McpGateway.of({ handle })
  })

/** Needs the agent state, the bus (records) and the judge; announces on the `EventFeed` when the process has one. */
export const layer = (options: Partial<McpProxyOptions> = {}) => Layer.scoped(McpGateway, make(options))
