/**
 * A POST to the MCP gateway: its body read whole (bounded, 413 above) and parsed; one that is not
 * JSON, a batch, or a `tools/call` without a readable tool name is refused with 400 and a JSON-RPC
 * error; a `tools/call` decided (CallDecision.ts), then forwarded, held for approval, or answered
 * by Candor; a cancellation of a call held here withdrawn.
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import type { makeApprovalHold } from "./ApprovalHold.js"
import type { makeCallDecision } from "./CallDecision.js"
import { hasDuplicateMembers } from "./DuplicateMembers.js"
import type { Forwarding } from "./Forwarding.js"
import {
  clientMessageOf,
  errorMessage,
  INVALID_PARAMS,
  INVALID_REQUEST,
  type JsonRpcId,
  PARSE_ERROR,
  REFUSED_BY_CANDOR
} from "./JsonRpc.js"
import { type Caller, json, plainError, type ProxyContext } from "./ProxyContext.js"

export interface PostRequestOptions {
  /** The refusal of a contained agent, when it is (McpProxy.ts). */
  readonly contained: (res: ServerResponse, caller: Caller, id: JsonRpcId) => boolean
  readonly decideCall: ReturnType<typeof makeCallDecision>["decideCall"]
  readonly forward: Forwarding["forward"]
  readonly hold: ReturnType<typeof makeApprovalHold>["hold"]
  readonly withdrawHeld: ReturnType<typeof makeApprovalHold>["withdrawHeld"]
}

export const makePostRequest = (
  { blocked, settings }: ProxyContext,
  { contained, decideCall, forward, hold, withdrawHeld }: PostRequestOptions
) => {
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

  return post
}

const tooLarge = (req: IncomingMessage, res: ServerResponse) => {
  if (res.headersSent) return
  res.setHeader("connection", "close")
  plainError(res, 413, "request body too large")
  req.removeAllListeners("data")
  req.resume()
}
