/**
 * A `tools/call` an `approve` trigger holds (docs/approvals.md): an approval asked of the
 * `ApprovalDesk`, the client kept waiting (over SSE with `notifications/progress` when it accepts
 * it), the call forwarded only once a person approved it and its answer relayed (judged as any
 * other in `enforce`); a client cancelling a held call withdraws it. The calls held at once are
 * bounded (HeldCalls.ts).
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import type { IncomingMessage, ServerResponse } from "node:http"
import { argumentsHash, releases } from "../../core/Approval.js"
import { APPROVAL_REASON_MAX, TOOL_NAME_MAX } from "../../core/schema/Approval.js"
import type { ApprovalDesk } from "../bus/ApprovalDesk.js"
import type { CallDecision } from "./CallDecision.js"
import type { Forwarding } from "./Forwarding.js"
import { HeldCalls } from "./HeldCalls.js"
import type { HeldResults } from "./HeldResults.js"
import { errorMessage, INTERNAL_ERROR, INVALID_REQUEST, REFUSED_BY_CANDOR, serverAnswerOf } from "./JsonRpc.js"
import { type Caller, type CallWatch, headerValue, json, type ProxyContext, SESSION_HEADER } from "./ProxyContext.js"
import type { ResultJudging } from "./ResultJudging.js"
import { relayWithCopy, type SideReading } from "./SideReading.js"
import { messageEvent } from "./SseEvents.js"

/** A request's `params._meta.progressToken` (a string or a number), when it asks for progress. */
const progressTokenOf = (params: unknown): string | number | undefined => {
  if (typeof params !== "object" || params === null) return undefined
  const meta = (params as Record<string, unknown>)["_meta"]
  if (typeof meta !== "object" || meta === null) return undefined
  const token = (meta as Record<string, unknown>)["progressToken"]
  return typeof token === "string" || (typeof token === "number" && Number.isFinite(token)) ? token : undefined
}

export interface ApprovalHoldOptions {
  readonly desk: ApprovalDesk["Type"]
  readonly forwarding: Forwarding
  readonly heldResults: HeldResults
  readonly judging: ResultJudging
  readonly sideReading: SideReading
}

export const makeApprovalHold = (
  { blocked, logged, runFork, settings }: ProxyContext,
  {
    desk,
    forwarding: { dispatch, forward },
    heldResults: { relayEvents },
    judging: { judgeResult, settleMessage, unreadableMessage },
    sideReading: { readerFor }
  }: ApprovalHoldOptions
) => {
  const heldCalls = new HeldCalls(settings.heldCalls)

  /**
   * An approved call's answer into the held call's SSE stream, whose headers were sent when the
   * hold began: the server's SSE events pass (the one answering the call held until judged, in
   * `enforce`), a JSON answer becomes one event (read whole, up to `maxMessageBytes`, and judged
   * first in `enforce`); anything else is an error event in place of the answer.
   */
  const relayApproved = (req: IncomingMessage, res: ServerResponse, caller: Caller, body: Buffer, watch: CallWatch) => {
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
          return relayWithCopy(upstream, res, readerFor(caller, watch, 200, answer.headers), finish)
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
                  if (!res.destroyed) res.write(messageEvent(progressMessage(token, ++progress, approval.approval_id)))
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

  return { hold, withdrawHeld }
}
