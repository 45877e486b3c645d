/**
 * An answer the MCP gateway lets pass, read on the side as it streams (MessageReader.ts): a
 * `tools/list` page's tools pinned (ToolPins.ts: changes recorded and announced, the pins shared),
 * a `tools/call` result judged (ResultJudging.ts) outside `enforce`; a message it cannot read counted.
 */
import * as Effect from "effect/Effect"
import { randomUUID } from "node:crypto"
import type { ServerResponse } from "node:http"
import type { Dispatcher } from "undici"
import { mcpRecord } from "../../core/EnforcementRecords.js"
import { toolChangedEvent } from "../../core/EventData.js"
import { countMcpUnreadable } from "../metrics/GatewayMetrics.js"
import { serverAnswerOf } from "./JsonRpc.js"
import { jsonReader, type MessageReader, type MessageSink, sseReader } from "./MessageReader.js"
import { type Caller, headerValue, type ProxyContext, type Watch } from "./ProxyContext.js"
import type { ResultJudging } from "./ResultJudging.js"
import type { ToolPins } from "./ToolPins.js"

export type SideReading = ReturnType<typeof makeSideReading>

export const makeSideReading = (
  { announce, logged, now, record, runAfter, runFork, settings, state }: ProxyContext,
  pins: ToolPins,
  { judgeResult }: ResultJudging
) => {
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

  /**
   * The side reader of an answer the proxy watches; undefined when the answer is not read. Whoever
   * feeds it has already sent the chunk to the client: a reader's bug stays on the side path.
   */
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
    if (type.startsWith("application/json")) return guarded(jsonReader(settings.maxMessageBytes, sink))
    if (type.startsWith("text/event-stream")) return guarded(sseReader(settings.maxMessageBytes, sink))
    return undefined
  }

  return { readerFor }
}

/** A reader whose failures end on the side path, never on the relay that feeds it. */
const guarded = (reader: MessageReader): MessageReader => ({
  push: (chunk) => {
    try {
      reader.push(chunk)
    } catch {
      // The copy is only for the side path; the client's bytes are already on their way.
    }
  },
  end: () => {
    try {
      reader.end()
    } catch {
      // as above
    }
  }
})

/**
 * An answer's body relayed to the client as it comes (paused while the client is slow), a copy to
 * the side reader: the client's bytes never wait for the reading.
 */
export const relayWithCopy = (
  upstream: Dispatcher.ResponseData["body"],
  res: ServerResponse,
  reader: MessageReader | undefined,
  finish: () => void
): void => {
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
}
