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
 */
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import * as FiberSet from "effect/FiberSet"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"
import { randomUUID } from "node:crypto"
import type { IncomingMessage, ServerResponse } from "node:http"
import { Agent, type Dispatcher } from "undici"
import {
  approvalTimeoutSeconds,
  approvalTrigger,
  argumentsHash,
  releases,
  withoutApproveTriggers
} from "../../core/Approval.js"
import { APPROVAL_REASON_MAX, TOOL_NAME_MAX } from "../../core/schema/Approval.js"
import { containmentErrorBody, containmentInForce } from "../../core/Containment.js"
import { blockedRecord, mcpRecord } from "../../core/EnforcementRecords.js"
import { blockedEvent, type GatewayBlock, policyViolationEvent, toolChangedEvent } from "../../core/EventData.js"
import { type EventOccurrence, newEnvelope } from "../../core/Events.js"
import { isPolicyActive, type PolicyEvaluation } from "../../core/Policy.js"
import { lookupTransaction, transactionErrorBody, transactionPolicy } from "../../core/ScopedTransaction.js"
import type { Policy } from "../../core/schema/Policy.js"
import { evaluateToolCall } from "../../core/ToolCallPolicy.js"
import type { EvidenceRedactionMode } from "../../core/schema/EvidenceRedaction.js"
import { IDENTIFIER_PATTERN } from "../../core/schema/Ids.js"
import { AnalysisModel } from "../analysis/AnalysisModel.js"
import { ApprovalDesk } from "../bus/ApprovalDesk.js"
import { hashSecret } from "../auth/Secrets.js"
import { type AgentSettings, AgentState, type McpServerEntry } from "../bus/AgentState.js"
import { EventFeed } from "../bus/EventFeed.js"
import { DEFAULT_PREFIX } from "../bus/Subjects.js"
import {
  ContainedRefusals,
  type ContainedRefusalLimits,
  defaultContainedRefusalLimits
} from "../gateway/ContainedRefusals.js"
import { makeEventPublisher } from "../gateway/EventPublisher.js"
import { requestHeadersForUpstream, responseHeadersForClient } from "../gateway/Headers.js"
import { DEFAULT_ANALYSIS_TIMEOUT_MS } from "../gateway/Judging.js"
import { makeToolResultJudging } from "../gateway/ToolResultJudging.js"
import {
  defaultToolResultMemoryLimits,
  ToolResultMemory,
  type ToolResultMemoryLimits
} from "../gateway/ToolResultMemory.js"
import { countMcpUnreadable, countToolResultJudged } from "../metrics/GatewayMetrics.js"
import { sha256Hex } from "../providers/Identity.js"
import { guardedLookup } from "../webhooks/WebhookUrlGuard.js"
import {
  AGENT_CONTAINED,
  clientMessageOf,
  errorMessage,
  INTERNAL_ERROR,
  INVALID_PARAMS,
  INVALID_REQUEST,
  type JsonRpcId,
  PARSE_ERROR,
  REFUSED_BY_CANDOR,
  serverAnswerOf,
  TOOL_RESULT_WITHHELD
} from "./JsonRpc.js"
import { callResultText } from "./CallResultText.js"
import { hasDuplicateMembers } from "./DuplicateMembers.js"
import { defaultHeldCallLimits, HeldCalls, type HeldCallLimits } from "./HeldCalls.js"
import { McpGateway } from "./McpGateway.js"
import { blockedLiteral } from "./McpNetwork.js"
import { jsonReader, type MessageReader, type MessageSink, sseReader } from "./MessageReader.js"
import { messageEvent, sseEventSplitter } from "./SseEvents.js"
import { ToolPins } from "./ToolPins.js"

export interface McpProxyOptions {
  /** `CANDOR_MCP_ALLOW_PRIVATE`: servers on private addresses and plain http (development, tests). */
  readonly allowPrivate: boolean
  readonly subjectPrefix: string
  /** Largest POST body read (413 above): MCP requests are small; 4 MiB leaves room for large arguments. */
  readonly maxRequestBytes: number
  /** Largest answer message read on the side; a larger one passes, counted unreadable (not pinned). */
  readonly maxMessageBytes: number
  readonly containedRefusals: ContainedRefusalLimits
  /** How long a server may take to answer with headers. Bodies (SSE streams) have no deadline. */
  readonly headersTimeoutMs: number
  /** The judge's deadline for a tool result (as the LLM gateway's `ANALYSIS_TIMEOUT_MS`). */
  readonly analysisTimeoutMs: number
  readonly evidenceRedaction: EvidenceRedactionMode
  /** The tool results remembered as judged, per agent and overall (ToolResultMemory.ts). */
  readonly toolResultMemory: ToolResultMemoryLimits
  /** Calls held for approval at once, per agent and overall (HeldCalls.ts): each keeps a connection open. */
  readonly heldCalls: HeldCallLimits
  /** How often a held call's client gets `notifications/progress` (docs/approvals.md: every 15 s). */
  readonly progressIntervalMs: number
}

export const defaultMcpProxyOptions: McpProxyOptions = {
  allowPrivate: false,
  subjectPrefix: DEFAULT_PREFIX,
  maxRequestBytes: 4 * 1024 * 1024,
  maxMessageBytes: 4 * 1024 * 1024,
  containedRefusals: defaultContainedRefusalLimits,
  headersTimeoutMs: 60_000,
  analysisTimeoutMs: DEFAULT_ANALYSIS_TIMEOUT_MS,
  evidenceRedaction: "none",
  toolResultMemory: defaultToolResultMemoryLimits,
  heldCalls: defaultHeldCallLimits,
  progressIntervalMs: 15_000
}

export const AGENT_TOKEN_HEADER = "x-candor-agent-token"
const TRANSACTION_HEADER = "x-transaction-id"
const SESSION_HEADER = "mcp-session-id"
const SERVER_PATH = /^\/mcp\/(mcp_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/

/** A token's use is shared at most this often per gateway (its `last_used_at` may be that much behind). */
const TOKEN_USE_INTERVAL_MS = 60_000
/** Tokens whose last report this gateway remembers (one entry each; past it, all are forgotten and reported again). */
const TOKEN_USES_KEPT = 100_000

/** The `provider` Candor's events name for an MCP exchange. */
const PROVIDER = "mcp"

/** Who a request is, once its token and server are known. */
interface Caller {
  readonly agentId: string
  readonly orgId: string
  readonly serverId: string
  readonly server: McpServerEntry
  readonly settings: AgentSettings
  /** The checkpoints' session: the MCP session when the client names one, else the server's id. */
  readonly sessionId: string
}

/** What the answer to a forwarded POST is read for. */
type CallWatch = { readonly kind: "call"; readonly id: string | number; readonly tool: string }
type Watch = { readonly kind: "list"; readonly id: string | number } | CallWatch

type CallDecision =
  | { readonly _tag: "forward" }
  /** An `approve` trigger matched (docs/approvals.md): held until a person decides, at most `timeoutSeconds`. */
  | { readonly _tag: "hold"; readonly reason: string; readonly timeoutSeconds: number }
  | {
      readonly _tag: "refuse"
      readonly rule: GatewayBlock["rule"]
      readonly reason: string
      readonly data: Record<string, unknown>
    }
/** How a `tools/call` result came out of judging: passed, or withheld (in `enforce`) with why. */
type ResultJudgement =
  | { readonly _tag: "pass" }
  | { readonly _tag: "withhold"; readonly reason: string; readonly checkpointId: string | null }

const PASS: ResultJudgement = { _tag: "pass" }

const json = (res: ServerResponse, status: number, body: Buffer, headers: Record<string, string> = {}) => {
  if (res.headersSent) return
  res.writeHead(status, { "content-type": "application/json", "content-length": String(body.length), ...headers })
  res.end(body)
}

const plainError = (res: ServerResponse, status: number, error: string) =>
  json(res, status, Buffer.from(JSON.stringify({ error })))

/** How many times a header was sent (raw list: Node joins or drops repetitions in `headers`). */
const countHeader = (raw: ReadonlyArray<string>, name: string): number => {
  let n = 0
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.toLowerCase() === name) n++
  return n
}

const headerValue = (value: string | ReadonlyArray<string> | undefined): string | undefined =>
  typeof value === "string" ? value : value?.[0]

/** Upstream headers: the gateway's rules (no hop-by-hop, no `x-candor-*`, no transaction id), and answers in `identity`. */
const upstreamHeaders = (req: IncomingMessage): Array<string> => {
  const forwarded = requestHeadersForUpstream(req.rawHeaders, headerValue(req.headers.connection))
  const out: Array<string> = []
  for (let i = 0; i + 1 < forwarded.length; i += 2)
    if (forwarded[i]!.toLowerCase() !== "accept-encoding") out.push(forwarded[i]!, forwarded[i + 1]!)
  out.push("accept-encoding", "identity")
  return out
}

const errorKind = (error: unknown): string =>
  typeof error === "object" && error !== null && "_tag" in error
    ? String(error._tag)
    : error instanceof Error
      ? error.name
      : typeof error

/** The session a checkpoint names: the client's MCP session when it is a valid identifier. */
const sessionOf = (session: string | undefined, serverId: string): string =>
  session !== undefined && IDENTIFIER_PATTERN.test(session) ? session : serverId

/** A request's `params._meta.progressToken` (a string or a number), when it asks for progress. */
const progressTokenOf = (params: unknown): string | number | undefined => {
  if (typeof params !== "object" || params === null) return undefined
  const meta = (params as Record<string, unknown>)["_meta"]
  if (typeof meta !== "object" || meta === null) return undefined
  const token = (meta as Record<string, unknown>)["progressToken"]
  return typeof token === "string" || (typeof token === "number" && Number.isFinite(token)) ? token : undefined
}

const findingsText = (evaluation: PolicyEvaluation): string =>
  evaluation.violations.map((v) => `${v.type} ${v.tool}: ${v.reason}`).join("; ")

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
    const heldCalls = new HeldCalls(settings.heldCalls)
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
    const dispatcher = new Agent({
      headersTimeout: settings.headersTimeoutMs,
      bodyTimeout: 0,
      connect: settings.allowPrivate ? {} : { lookup: guardedLookup }
    })
    yield* Effect.addFinalizer(() => Effect.promise(() => dispatcher.close().catch(() => dispatcher.destroy())))

    const now = () => new Date(clock.unsafeCurrentTimeMillis())

    const logged = (effect: Effect.Effect<void, unknown>, what: string) =>
      effect.pipe(
        Effect.catchAllCause((cause) =>
          Effect.logWarning(what).pipe(Effect.annotateLogs({ error: errorKind(Cause.squash(cause)) }))
        )
      )

    /** A catalogue event, off the request's path (the feed slow or down delays nothing). */
    const announce = (occurrence: EventOccurrence | undefined) => {
      if (Option.isNone(feed) || occurrence === undefined) return
      runAfter(
        FiberSet.run(
          announcements,
          logged(feed.value.publish(newEnvelope(occurrence)), "MCP gateway event not published")
        )
      )
    }

    /** An enforcement record, published with the agent's events (stored at least once by the workers). */
    const record = (caller: Caller, message: Parameters<typeof publisher.publish>[1]) =>
      runAfter(logged(publisher.publish(caller.agentId, message), "MCP gateway record not published"))

    const blocked = (
      caller: Caller,
      rule: GatewayBlock["rule"],
      reason: string,
      checkpointId: string | null = null
    ) => {
      const uuid = randomUUID()
      const at = now()
      const block: GatewayBlock = {
        agentId: caller.agentId,
        sessionId: null,
        provider: PROVIDER,
        rule,
        reason,
        checkpointId
      }
      record(caller, {
        type: "gateway.enforcement",
        mode: caller.settings.mode,
        record: blockedRecord(block, uuid, at)
      })
      announce(blockedEvent(block, uuid, caller.orgId, at))
    }

    const judgeToolResult = makeToolResultJudging(judge, settings.analysisTimeoutMs, settings.evidenceRedaction, now)
    /** The tool results each agent already had judged (ToolResultMemory.ts): each is judged once. */
    const toolResults = new ToolResultMemory(settings.toolResultMemory)

    /**
     * A `tools/call` result (docs/mcp.md "Tool results"): its text judged, unless this agent had it
     * judged already, and its checkpoint published with the agent's events; `withhold` when it is a
     * boundary violation (now or when first judged). The caller decides what that means in its mode.
     */
    const judgeResult = (caller: Caller, tool: string, result: unknown): Effect.Effect<ResultJudgement> =>
      Effect.suspend(() => {
        const text = callResultText(result)
        if (text === undefined)
          return Effect.succeed<ResultJudgement>({
            _tag: "withhold",
            reason: "the result is not a tool result Candor can read",
            checkpointId: null
          })
        if (text === "") return Effect.succeed(PASS)
        const hash = sha256Hex(text)
        const remembered = toolResults.recall(caller.agentId, hash)
        if (remembered === null) return Effect.succeed(PASS)
        if (remembered !== undefined)
          return Effect.succeed<ResultJudgement>({
            _tag: "withhold",
            reason: "it was judged a boundary violation before",
            checkpointId: remembered
          })
        return Effect.map(
          judgeToolResult({
            settings: caller.settings,
            agentId: caller.agentId,
            sessionId: caller.sessionId,
            provider: PROVIDER,
            tenant: caller.orgId,
            toolName: tool,
            text,
            hash
          }),
          ({ event }): ResultJudgement => {
            const { checkpoint } = event
            countToolResultJudged(checkpoint.verdict)
            const violates = checkpoint.verdict === "boundary_violation"
            toolResults.remember(caller.agentId, hash, violates ? checkpoint.checkpoint_id : null)
            record(caller, event)
            if (!violates) return PASS
            const categories = [...new Set(checkpoint.concerns.map((c) => c.category))].join(", ")
            return {
              _tag: "withhold",
              reason: `judged a boundary violation${categories === "" ? "" : ` (${categories})`}`,
              checkpointId: checkpoint.checkpoint_id
            }
          }
        )
      })

    /** The JSON-RPC error a withheld result is replaced by: the same id, the reason, the checkpoint. */
    const withheldMessage = (caller: Caller, watch: CallWatch, reason: string, checkpointId: string | null) => {
      const text = `the result of tool ${watch.tool} was withheld by Candor: ${reason}`
      blocked(caller, "enforce", text, checkpointId)
      return errorMessage(watch.id, TOOL_RESULT_WITHHELD, text, {
        candor: { rule: "tool_result", reason, tool_name: watch.tool, checkpoint_id: checkpointId }
      })
    }

    /**
     * One message of a held answer (the JSON body, or one SSE event's data), once complete: the bytes
     * to send the client. The answer to the call is judged and replaced when withheld; any other
     * message (a notification, an error answer, another id) passes as it is.
     */
    const settleMessage = (
      caller: Caller,
      watch: CallWatch,
      message: unknown
    ): Effect.Effect<{ readonly replacement: Buffer | undefined }> => {
      const answer = serverAnswerOf(message)
      if (answer === undefined || answer.id !== watch.id) return Effect.succeed({ replacement: undefined })
      return judgeResult(caller, watch.tool, answer.result).pipe(
        // A defect in judging never lets the result through unjudged, nor leaves the call unanswered.
        Effect.catchAllCause((cause) =>
          Effect.as(
            Effect.logWarning("MCP tool result not judged").pipe(
              Effect.annotateLogs({ error: errorKind(Cause.squash(cause)) })
            ),
            { _tag: "withhold", reason: "the result could not be judged", checkpointId: null } as const
          )
        ),
        Effect.map((judgement) => ({
          replacement:
            judgement._tag === "pass"
              ? undefined
              : withheldMessage(caller, watch, judgement.reason, judgement.checkpointId)
        }))
      )
    }

    /** The caller's policy for this request: the agent's, or narrowed by the transaction it names. */
    const policyOf = (
      caller: Caller,
      req: IncomingMessage
    ): { readonly policy: Policy | undefined } | { readonly refusal: CallDecision } => {
      const transactionId = headerValue(req.headers[TRANSACTION_HEADER])
      if (transactionId === undefined)
        return { policy: isPolicyActive(caller.settings.policy) ? caller.settings.policy : undefined }
      const lookup = lookupTransaction(caller.settings.transactions, transactionId, clock.unsafeCurrentTimeMillis())
      if (lookup.kind !== "open") {
        const body = transactionErrorBody(caller.agentId, transactionId, lookup)
        return { refusal: { _tag: "refuse", rule: "transaction", reason: body.reason, data: { ...body } } }
      }
      const { transaction } = lookup
      return { policy: transactionPolicy(caller.settings.policy, transaction.tools, transaction.policy) }
    }

    /** A `tools/call`, before the server sees it: what the module comment lists, in that order. */
    const decideCall = (caller: Caller, req: IncomingMessage, tool: string, args: unknown): CallDecision => {
      const resolved = policyOf(caller, req)
      if ("refusal" in resolved) return resolved.refusal
      const { policy } = resolved
      const mode = policy?.defaults.enforcement_mode
      const changed = pins.changed(caller.serverId, tool)
      const unpinnable = pins.unpinnable(caller.serverId, tool)
      if (mode === "enforce" && (changed !== undefined || unpinnable !== undefined)) {
        return {
          _tag: "refuse",
          rule: "tool_changed",
          reason:
            changed !== undefined
              ? `tool ${tool}: its definition changed (${changed}) and waits for an Owner's or Admin's acceptance`
              : `tool ${tool}: its definition cannot be pinned (${unpinnable})`,
          data: {
            server_id: caller.serverId,
            tool_name: tool,
            ...(changed === undefined ? {} : { definition_hash: changed })
          }
        }
      }
      if (policy === undefined) return { _tag: "forward" }
      const at = now()
      // What the policy refuses is refused before anyone is asked; the approve triggers hold instead.
      const approval = approvalTrigger(policy, tool)
      const held: CallDecision =
        approval === undefined
          ? { _tag: "forward" }
          : { _tag: "hold", reason: approval.reason, timeoutSeconds: approvalTimeoutSeconds(policy) }
      const evaluation = evaluateToolCall(
        withoutApproveTriggers(policy),
        caller.settings.card,
        tool,
        args,
        state.toolsFirstSeen(caller.agentId),
        at
      )
      state.noteTools(caller.agentId, [{ name: tool }], at.getTime())
      if (evaluation.verdict === "pass") return held
      const policyMode = mode ?? "warn"
      announce(
        policyViolationEvent(
          { agentId: caller.agentId, checkpointId: null, phase: "request", mode: policyMode, evaluation },
          randomUUID(),
          caller.orgId,
          at
        )
      )
      if (evaluation.verdict === "fail" && policyMode === "enforce")
        return {
          _tag: "refuse",
          rule: "policy",
          reason: findingsText(evaluation),
          data: { policy_verdict: { mode: policyMode, ...evaluation } }
        }
      record(caller, {
        type: "gateway.enforcement",
        mode: caller.settings.mode,
        record: mcpRecord(
          "warned",
          {
            agentId: caller.agentId,
            rule: "policy",
            reason:
              findingsText(evaluation) || evaluation.warnings.map((w) => `${w.type} ${w.tool}: ${w.reason}`).join("; ")
          },
          randomUUID(),
          at
        )
      })
      return held
    }

    /** A `tools/list` page's tools: pinned, changes recorded and announced, the pins shared. */
    const listed = (caller: Caller, result: unknown) => {
      const tools =
        typeof result === "object" && result !== null && Array.isArray((result as { tools?: unknown }).tools)
          ? (result as { tools: ReadonlyArray<unknown> }).tools
          : undefined
      if (tools === undefined) return
      const observed = pins.observe(caller.serverId, tools)
      const at = now()
      for (const change of observed.changes) {
        record(caller, {
          type: "gateway.enforcement",
          mode: caller.settings.mode,
          record: mcpRecord(
            "tool_changed",
            {
              agentId: caller.agentId,
              rule: "mcp_pin",
              reason: `MCP server ${caller.serverId}: tool ${change.tool} definition changed from ${change.previous} to ${change.hash}`
            },
            randomUUID(),
            at
          )
        })
        announce(
          toolChangedEvent(
            {
              agentId: caller.agentId,
              orgId: caller.orgId,
              serverId: caller.serverId,
              tool: change.tool,
              previousHash: change.previous,
              hash: change.hash
            },
            at
          )
        )
      }
      if (observed.patch !== undefined)
        runAfter(logged(state.updateKey(caller.serverId, { mcpPins: observed.patch }), "MCP tool pins not shared"))
      if (observed.unpinned > 0)
        runFork(
          Effect.logWarning("MCP tools past the per-server bound not pinned").pipe(
            Effect.annotateLogs({ server_id: caller.serverId, tools: observed.unpinned })
          )
        )
    }

    /** The side reader of an answer the proxy watches; undefined when the answer is not read. */
    const readerFor = (
      caller: Caller,
      watch: Watch,
      status: number,
      headers: Dispatcher.ResponseData["headers"]
    ): MessageReader | undefined => {
      // A `tools/call` answer read here is one the agent's mode lets pass (outside `enforce`): its
      // result is judged on the side, its bytes already on their way (`held` holds it in `enforce`).
      if (status !== 200) return undefined
      const type = headerValue(headers["content-type"]) ?? ""
      const coding = headerValue(headers["content-encoding"])
      const sink: MessageSink = {
        onMessage: (message) => {
          const answer = serverAnswerOf(message)
          if (answer === undefined || answer.id !== watch.id) return
          if (watch.kind === "list") return listed(caller, answer.result)
          runFork(logged(Effect.asVoid(judgeResult(caller, watch.tool, answer.result)), "MCP tool result not judged"))
        },
        onUnreadable: (reason) => {
          countMcpUnreadable()
          runFork(
            Effect.logWarning("MCP answer unreadable").pipe(
              Effect.annotateLogs({ server_id: caller.serverId, method: watch.kind, reason })
            )
          )
        }
      }
      if (coding !== undefined && coding !== "identity") {
        sink.onUnreadable("not_json")
        return undefined
      }
      if (type.startsWith("application/json")) return jsonReader(settings.maxMessageBytes, sink)
      if (type.startsWith("text/event-stream")) return sseReader(settings.maxMessageBytes, sink)
      return undefined
    }

    /** The JSON-RPC error withholding a result Candor could not read (over the bound, not JSON): never passed unjudged. */
    const unreadableMessage = (caller: Caller, watch: CallWatch, reason: "too_large" | "not_json") => {
      countMcpUnreadable()
      return withheldMessage(
        caller,
        watch,
        reason === "too_large"
          ? `the result is larger than Candor judges (${settings.maxMessageBytes} bytes)`
          : "the result could not be read to be judged",
        null
      )
    }

    /**
     * An SSE answer to a `tools/call` in `enforce`, its headers already sent: events pass as they come
     * but the one answering the call, which is held until judged and replaced when withheld; the
     * stream is paused meanwhile.
     */
    const relayEvents = (
      caller: Caller,
      watch: CallWatch,
      upstream: Dispatcher.ResponseData["body"],
      res: ServerResponse,
      done: () => void
    ) => {
      const splitter = sseEventSplitter(settings.maxMessageBytes)
      /** Events not yet settled, in order: the stream is paused while one is judged. */
      const queue: Array<Buffer | undefined> = []
      let answered = false
      let ended = false
      let busy = false
      const write = (bytes: Buffer) => {
        if (!res.write(bytes)) upstream.pause()
      }
      const drain = (): void => {
        while (!busy && queue.length > 0) {
          const event = queue.shift()
          if (answered) {
            // The call is answered: what follows passes unread (an event over the bound included).
            if (event !== undefined) write(event)
            continue
          }
          if (event === undefined) {
            // An event too large to read may be the answer: withheld, never passed unjudged.
            answered = true
            write(messageEvent(unreadableMessage(caller, watch, "too_large")))
            continue
          }
          let message: unknown = undefined
          let readable = true
          const reader = sseReader(settings.maxMessageBytes, {
            onMessage: (value) => {
              message = value
            },
            onUnreadable: () => {
              readable = false
            }
          })
          reader.push(event)
          reader.end()
          if (!readable) {
            write(event)
            continue
          }
          if (message === undefined || serverAnswerOf(message)?.id !== watch.id) {
            write(event)
            continue
          }
          busy = true
          upstream.pause()
          runFork(
            settleMessage(caller, watch, message).pipe(
              Effect.map(({ replacement }) => {
                busy = false
                answered = true
                if (res.destroyed) return
                write(replacement === undefined ? event : messageEvent(replacement))
                upstream.resume()
                drain()
              })
            )
          )
        }
        if (!busy && ended && !res.writableEnded) {
          done()
          res.end()
        }
      }
      upstream.on("data", (chunk: Buffer) => {
        queue.push(...splitter.push(chunk))
        drain()
      })
      res.on("drain", () => {
        if (!busy) upstream.resume()
      })
      upstream.once("end", () => {
        const rest = splitter.end()
        if (rest !== undefined) queue.push(rest)
        ended = true
        drain()
      })
    }

    /**
     * A `tools/call` answer in `enforce` (docs/mcp.md "Tool results"): the message answering the call
     * is held until its result is judged, and replaced by a JSON-RPC error when withheld. A JSON body
     * is that one message, held whole (up to `maxMessageBytes`); an SSE stream passes its events as
     * they come except the one answering the call. A message Candor cannot read (over the bound, not
     * JSON, another coding) is withheld too: never passed unjudged.
     */
    const held = (
      caller: Caller,
      watch: CallWatch,
      answer: Dispatcher.ResponseData,
      res: ServerResponse,
      done: () => void
    ) => {
      const upstream = answer.body
      const type = headerValue(answer.headers["content-type"]) ?? ""
      const coding = headerValue(answer.headers["content-encoding"])
      const headers = responseHeadersForClient(answer.headers)
      const unreadable = (reason: "too_large" | "not_json") => unreadableMessage(caller, watch, reason)
      const replaceWith = (body: Buffer) => {
        if (res.headersSent) return
        delete headers["content-encoding"]
        res.writeHead(200, { ...headers, "content-type": "application/json", "content-length": String(body.length) })
        res.end(body)
      }
      const sse = type.startsWith("text/event-stream")
      if ((coding !== undefined && coding !== "identity") || (!sse && !type.startsWith("application/json"))) {
        upstream.destroy()
        done()
        return replaceWith(unreadable("not_json"))
      }
      upstream.once("error", () => {
        done()
        res.destroy()
      })
      if (!sse) {
        const chunks: Array<Buffer> = []
        let size = 0
        upstream.on("data", (chunk: Buffer) => {
          if (size > settings.maxMessageBytes) return
          size += chunk.byteLength
          if (size > settings.maxMessageBytes) {
            chunks.length = 0
            upstream.destroy()
            done()
            return replaceWith(unreadable("too_large"))
          }
          chunks.push(chunk)
        })
        upstream.once("end", () => {
          if (size > settings.maxMessageBytes) return
          const body = Buffer.concat(chunks, size)
          let message: unknown
          try {
            message = JSON.parse(body.toString("utf8").replace(/^\uFEFF/, ""))
          } catch {
            done()
            return replaceWith(unreadable("not_json"))
          }
          runFork(
            settleMessage(caller, watch, message).pipe(
              Effect.map(({ replacement }) => {
                done()
                if (res.destroyed) return
                if (replacement !== undefined) return replaceWith(replacement)
                res.writeHead(200, headers)
                res.end(body)
              })
            )
          )
        })
        return
      }
      // The held event may be replaced by one of another length: the stream goes out chunked.
      delete headers["content-length"]
      res.writeHead(200, headers)
      // SSE: the client waits for the headers before the first event.
      res.flushHeaders()
      relayEvents(caller, watch, upstream, res, done)
    }

    /**
     * Sends the request to the server (aborted when the client leaves first): `onAnswer` gets the
     * answer, its `finish` to be called once the client has all of it; `onFailure` says why there is
     * none (an internal address refused, the server unreachable).
     */
    const dispatch = (
      req: IncomingMessage,
      res: ServerResponse,
      caller: Caller,
      body: Buffer | undefined,
      onAnswer: (answer: Dispatcher.ResponseData, finish: () => void) => void,
      onFailure: (message: string) => void
    ) => {
      const target = new URL(caller.server.url)
      if (blockedLiteral(target, settings.allowPrivate))
        return onFailure("the MCP server's address is internal: refused")
      const query = (req.url ?? "").indexOf("?")
      const path =
        target.pathname +
        (query < 0
          ? target.search
          : (target.search === "" ? "?" : target.search + "&") + (req.url ?? "").slice(query + 1))
      const abort = new AbortController()
      let finished = false
      const finish = () => {
        finished = true
      }
      res.once("close", () => {
        if (!finished) abort.abort()
      })
      dispatcher
        .request({
          origin: target.origin,
          path,
          method: (req.method ?? "GET") as Dispatcher.HttpMethod,
          headers: upstreamHeaders(req),
          body: body ?? null,
          signal: abort.signal
        })
        .then(
          (answer) => {
            if (res.destroyed) {
              answer.body.destroy()
              return
            }
            answer.body.once("error", () => {
              finish()
              res.destroy()
            })
            onAnswer(answer, finish)
          },
          (error: unknown) => {
            finish()
            if (abort.signal.aborted) return
            runFork(
              Effect.logWarning("MCP server unreachable").pipe(
                Effect.annotateLogs({ server_id: caller.serverId, error: errorKind(error) })
              )
            )
            onFailure("the MCP server could not be reached")
          }
        )
    }

    /** Sends the request on and the answer back byte for byte, reading it on the side when `watch` asks. */
    const forward = (
      req: IncomingMessage,
      res: ServerResponse,
      caller: Caller,
      body: Buffer | undefined,
      watch: Watch | undefined
    ) =>
      dispatch(
        req,
        res,
        caller,
        body,
        (answer, finish) => {
          if (watch?.kind === "call" && answer.statusCode === 200 && caller.settings.mode === "enforce")
            return held(caller, watch, answer, res, finish)
          const reader = watch === undefined ? undefined : readerFor(caller, watch, answer.statusCode, answer.headers)
          res.writeHead(answer.statusCode, responseHeadersForClient(answer.headers))
          // SSE: the client waits for the headers before the first event.
          res.flushHeaders()
          const upstream = answer.body
          upstream.on("data", (chunk: Buffer) => {
            if (!res.write(chunk)) upstream.pause()
            try {
              reader?.push(chunk)
            } catch {
              // A reader's bug never reaches the client: the copy is only for the side path.
            }
          })
          res.on("drain", () => upstream.resume())
          upstream.once("end", () => {
            finish()
            res.end()
            try {
              reader?.end()
            } catch {
              // as above
            }
          })
        },
        (message) => plainError(res, 502, message)
      )

    /**
     * An approved call's answer into the held call's SSE stream, whose headers were sent when the
     * hold began: the server's SSE events pass (the one answering the call held until judged, in
     * `enforce`), a JSON answer becomes one event (read whole, up to `maxMessageBytes`, and judged
     * first in `enforce`); anything else is an error event in place of the answer.
     */
    const relayApproved = (
      req: IncomingMessage,
      res: ServerResponse,
      caller: Caller,
      body: Buffer,
      watch: CallWatch
    ) => {
      const fail = (message: string) => {
        if (res.destroyed) return
        res.end(messageEvent(errorMessage(watch.id, INTERNAL_ERROR, message)))
      }
      dispatch(
        req,
        res,
        caller,
        body,
        (answer, finish) => {
          const upstream = answer.body
          const type = headerValue(answer.headers["content-type"]) ?? ""
          const coding = headerValue(answer.headers["content-encoding"])
          const enforce = caller.settings.mode === "enforce"
          const readable = coding === undefined || coding === "identity"
          if (answer.statusCode !== 200 || !readable) {
            upstream.destroy()
            finish()
            if (readable) return fail(`the MCP server answered the approved call with HTTP ${answer.statusCode}`)
            return enforce
              ? res.end(messageEvent(unreadableMessage(caller, watch, "not_json")))
              : fail("the MCP server's answer could not be read")
          }
          if (type.startsWith("text/event-stream")) {
            if (enforce) return relayEvents(caller, watch, upstream, res, finish)
            const reader = readerFor(caller, watch, 200, answer.headers)
            upstream.on("data", (chunk: Buffer) => {
              if (!res.write(chunk)) upstream.pause()
              reader?.push(chunk)
            })
            res.on("drain", () => upstream.resume())
            upstream.once("end", () => {
              finish()
              res.end()
              reader?.end()
            })
            return
          }
          const chunks: Array<Buffer> = []
          let size = 0
          upstream.on("data", (chunk: Buffer) => {
            size += chunk.byteLength
            if (size <= settings.maxMessageBytes) chunks.push(chunk)
            else chunks.length = 0
          })
          upstream.once("end", () => {
            finish()
            let message: unknown = undefined
            const whole = size <= settings.maxMessageBytes ? Buffer.concat(chunks, size) : undefined
            try {
              if (whole !== undefined) message = JSON.parse(whole.toString("utf8").replace(/^\uFEFF/, ""))
            } catch {
              message = undefined
            }
            if (whole === undefined || message === undefined) {
              const reason = whole === undefined ? "too_large" : "not_json"
              if (enforce) return res.end(messageEvent(unreadableMessage(caller, watch, reason)))
              return fail(`the MCP server's answer could not be relayed (${reason})`)
            }
            if (!enforce) {
              const answered = serverAnswerOf(message)
              if (answered !== undefined && answered.id === watch.id)
                runFork(
                  logged(Effect.asVoid(judgeResult(caller, watch.tool, answered.result)), "MCP tool result not judged")
                )
              return res.end(messageEvent(whole))
            }
            runFork(
              Effect.map(settleMessage(caller, watch, message), ({ replacement }) => {
                if (!res.destroyed) res.end(messageEvent(replacement ?? whole))
              })
            )
          })
        },
        fail
      )
    }

    /** The progress notification a held call's client gets every `progressIntervalMs`, when it asked for progress. */
    const progressMessage = (token: string | number, progress: number, approvalId: string) =>
      Buffer.from(
        JSON.stringify({
          jsonrpc: "2.0",
          method: "notifications/progress",
          params: {
            progressToken: token,
            progress,
            message: `waiting for a person's decision (approval ${approvalId})`
          }
        })
      )

    /**
     * A `tools/call` an `approve` trigger holds (docs/approvals.md): an approval is requested, the
     * client answered over SSE when it accepts it (with `notifications/progress` while it waits, when
     * it sent a progress token), and the call forwarded, as it was held, only once a person approved
     * it. Denied, expired or not requestable: a JSON-RPC error naming the approval. The client
     * cancelling (`notifications/cancelled`) or leaving first withdraws it: never sent, `cancelled`.
     */
    const hold = (
      req: IncomingMessage,
      res: ServerResponse,
      caller: Caller,
      body: Buffer,
      call: { readonly id: string | number; readonly tool: string; readonly args: unknown; readonly params: unknown },
      decision: Extract<CallDecision, { _tag: "hold" }>
    ) => {
      const refuse = (reason: string, data: Record<string, unknown> = {}) => {
        blocked(caller, "approval", reason)
        return errorMessage(call.id, REFUSED_BY_CANDOR, `refused by Candor (rule approval): ${reason}`, {
          candor: { rule: "approval", reason, tool_name: call.tool, ...data }
        })
      }
      const hash = argumentsHash(call.args)
      if (hash === undefined || call.tool.length > TOOL_NAME_MAX)
        return json(res, 200, refuse(`tool ${call.tool.slice(0, 64)}: the call cannot be held for approval`))
      const withdrawn = Deferred.unsafeMake<void>(FiberId.none)
      const release = heldCalls.hold(
        {
          agentId: caller.agentId,
          serverId: caller.serverId,
          session: headerValue(req.headers[SESSION_HEADER]),
          id: call.id
        },
        () => Deferred.unsafeDone(withdrawn, Exit.void)
      )
      if (release === "duplicate")
        return json(res, 400, errorMessage(call.id, INVALID_REQUEST, "a call with this id already waits for approval"))
      if (release === "busy")
        return json(res, 200, refuse(`too many calls of agent ${caller.agentId} wait for approval: try again later`))
      const streaming = (headerValue(req.headers.accept) ?? "").includes("text/event-stream")
      if (streaming) {
        res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
        // The client waits for the headers before the first event.
        res.flushHeaders()
      }
      let answered = false
      res.once("close", () => {
        if (!answered) Deferred.unsafeDone(withdrawn, Exit.void)
      })
      const answer = (message: Buffer) => {
        answered = true
        if (res.destroyed) return
        if (streaming) res.end(messageEvent(message))
        else json(res, 200, message)
      }
      const token = progressTokenOf(call.params)
      const program = Effect.gen(function* () {
        const approval = yield* desk.request({
          org_id: caller.orgId,
          agent_id: caller.agentId,
          server_id: caller.serverId,
          tool: call.tool,
          arguments_hash: hash,
          reason: decision.reason.slice(0, APPROVAL_REASON_MAX),
          timeout_seconds: decision.timeoutSeconds
        })
        let progress = 0
        const progressing =
          !streaming || token === undefined
            ? Effect.never
            : Effect.sleep(settings.progressIntervalMs).pipe(
                Effect.zipRight(
                  Effect.sync(() => {
                    if (!res.destroyed)
                      res.write(messageEvent(progressMessage(token, ++progress, approval.approval_id)))
                  })
                ),
                Effect.forever
              )
        const outcome = yield* Effect.raceFirst(
          Effect.raceFirst(desk.awaitDecision(approval), Effect.as(Deferred.await(withdrawn), "withdrawn" as const)),
          progressing
        )
        if (outcome === "withdrawn") {
          answered = true
          yield* desk.cancel(approval.approval_id)
          if (!res.destroyed) res.end()
          return
        }
        if (releases(outcome)) {
          answered = true
          const watch: CallWatch = { kind: "call", id: call.id, tool: call.tool }
          return streaming ? relayApproved(req, res, caller, body, watch) : forward(req, res, caller, body, watch)
        }
        answer(
          refuse(
            outcome === "denied"
              ? `the call to tool ${call.tool} was denied by a person`
              : outcome === "expired"
                ? `the call to tool ${call.tool} was not approved by ${approval.expires_at}`
                : `the approval of the call to tool ${call.tool} was cancelled`,
            { approval_id: approval.approval_id, status: outcome }
          )
        )
      }).pipe(
        Effect.catchTag("ApprovalUnavailable", (error) =>
          Effect.sync(() =>
            answer(refuse(`the call waits for a person's approval, which could not be requested: ${error.reason}`))
          )
        ),
        // A defect never leaves the client waiting, nor lets the call through: it is refused.
        Effect.tapErrorCause(() =>
          Effect.sync(() => {
            if (!answered) answer(refuse(`the call to tool ${call.tool} could not be held for approval`))
          })
        ),
        Effect.ensuring(Effect.sync(release))
      )
      runFork(logged(program, "MCP held call failed"))
    }

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

    /** A `notifications/cancelled` naming a call held here: withdrawn (true), else false (it goes to the server). */
    const withdrawHeld = (req: IncomingMessage, caller: Caller, params: unknown): boolean => {
      const requestId =
        typeof params === "object" && params !== null ? (params as Record<string, unknown>)["requestId"] : undefined
      if (typeof requestId !== "string" && (typeof requestId !== "number" || !Number.isFinite(requestId))) return false
      return heldCalls.withdraw({
        agentId: caller.agentId,
        serverId: caller.serverId,
        session: headerValue(req.headers[SESSION_HEADER]),
        id: requestId
      })
    }

    /** A POST: read whole, parsed, decided; then forwarded, held, or answered by Candor. */
    const post = (req: IncomingMessage, res: ServerResponse, caller: Caller) => {
      const declared = Number(req.headers["content-length"] ?? 0)
      if (declared > settings.maxRequestBytes) return tooLarge(req, res)
      const chunks: Array<Buffer> = []
      let size = 0
      req.on("data", (chunk: Buffer) => {
        size += chunk.byteLength
        if (size > settings.maxRequestBytes) return tooLarge(req, res)
        chunks.push(chunk)
      })
      req.on("end", () => {
        if (size > settings.maxRequestBytes || res.headersSent) return
        const body = Buffer.concat(chunks, size)
        let value: unknown
        const text = body.toString("utf8").replace(/^\uFEFF/, "")
        try {
          value = JSON.parse(text)
        } catch {
          if (contained(res, caller, null)) return
          return json(res, 400, errorMessage(null, PARSE_ERROR, "Candor could not parse the request as JSON: refused"))
        }
        if (Array.isArray(value)) {
          if (contained(res, caller, null)) return
          return json(
            res,
            400,
            errorMessage(
              null,
              INVALID_REQUEST,
              "JSON-RPC batches are not accepted by the Candor MCP gateway: send one message per request"
            )
          )
        }
        const message = clientMessageOf(value)
        if (message === undefined) return json(res, 400, errorMessage(null, INVALID_REQUEST, "not a JSON-RPC message"))
        const id = message._tag === "call" ? (message.id ?? null) : null
        if (contained(res, caller, id)) return
        if (message._tag !== "call") return forward(req, res, caller, body, undefined)
        // A client cancelling a call Candor holds: withdrawn here, the server never saw the call.
        if (message.method === "notifications/cancelled" && withdrawHeld(req, caller, message.params)) {
          res.writeHead(202).end()
          return
        }
        if (message.method === "tools/list")
          return forward(
            req,
            res,
            caller,
            body,
            message.id === undefined || message.id === null ? undefined : { kind: "list", id: message.id }
          )
        if (message.method !== "tools/call") return forward(req, res, caller, body, undefined)
        const params = message.params
        const tool =
          typeof params === "object" && params !== null && !Array.isArray(params)
            ? (params as Record<string, unknown>)["name"]
            : undefined
        if (typeof tool !== "string" || tool.length === 0)
          return json(
            res,
            400,
            errorMessage(id, INVALID_PARAMS, "tools/call needs params.name, the tool's name: refused")
          )
        // A name twice in one object: the server's parser may keep the other one than Candor read.
        if (hasDuplicateMembers(text))
          return json(
            res,
            400,
            errorMessage(id, INVALID_REQUEST, "a member name appears twice in one object of this tools/call: refused")
          )
        const args = (params as Record<string, unknown>)["arguments"]
        const decision = decideCall(caller, req, tool, args)
        if (decision._tag === "hold") {
          if (message.id === undefined || message.id === null)
            return json(res, 400, errorMessage(null, INVALID_REQUEST, "a tools/call held for approval needs an id"))
          return hold(req, res, caller, body, { id: message.id, tool, args, params }, decision)
        }
        if (decision._tag === "refuse") {
          blocked(caller, decision.rule, decision.reason)
          return json(
            res,
            200,
            errorMessage(id, REFUSED_BY_CANDOR, `refused by Candor (rule ${decision.rule}): ${decision.reason}`, {
              candor: { rule: decision.rule, reason: decision.reason, ...decision.data }
            })
          )
        }
        forward(
          req,
          res,
          caller,
          body,
          message.id === undefined || message.id === null ? undefined : { kind: "call", id: message.id, tool }
        )
      })
    }

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

const tooLarge = (req: IncomingMessage, res: ServerResponse) => {
  if (res.headersSent) return
  res.setHeader("connection", "close")
  plainError(res, 413, "request body too large")
  req.removeAllListeners("data")
  req.resume()
}

/** Needs the agent state, the bus (records) and the judge; announces on the `EventFeed` when the process has one. */
export const layer = (options: Partial<McpProxyOptions> = {}) => Layer.scoped(McpGateway, make(options))
