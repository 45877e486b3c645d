/**
 * The tool results of a request, judged before it is forwarded (issue 28, item 6): Anthropic
 * `tool_result` blocks, OpenAI `role: "tool"` messages and Responses `function_call_output` items,
 * Gemini `functionResponse` parts (`adapters/providers/ToolResults.ts`). The results this agent has
 * not had judged yet (`ToolResultMemory.ts`, by hash) are judged (`ToolResultJudging.ts`), at most
 * `MAX_JUDGED_PER_REQUEST` per request, 4 at a time, and each is recorded as a checkpoint of its own
 * (published with the agent's events) in every mode. The gateway then refuses the request in
 * `enforce` when one of them is a boundary violation (this time, or when it was first judged): the
 * model never reads it.
 *
 * Cost: a request whose bytes name no tool result (`mayCarryToolResults`, a few byte searches) does
 * none of this and parses nothing more. A request with results parses its body once (the parse the
 * policy shares), hashes each result's text once (`hashed`, by the parsed body), and calls the judge
 * only for results not yet judged.
 */
import * as Effect from "effect/Effect"
import type { GatewayEvent } from "../../core/schema/Event.js"
import type { AgentSettings } from "../bus/AgentState.js"
import { countToolResultJudged } from "../metrics/GatewayMetrics.js"
import { sha256Hex } from "../providers/Identity.js"
import type { ProviderAdapter, ToolResult } from "../providers/Provider.js"
import type { Admitted } from "./Admission.js"
import type { InspectedRequest } from "./Inspector.js"
import type { RequestBody } from "./RequestBody.js"
import type { JudgedToolResult, ToolResultJudgingInput } from "./ToolResultJudging.js"
import type { ToolResultMemory } from "./ToolResultMemory.js"

/** Results judged per request at most: bounds the judge work one request can cause. */
export const MAX_JUDGED_PER_REQUEST = 16

/** Judge calls in flight at once for one request's results. */
const CONCURRENCY = 4

export interface HashedResult extends ToolResult {
  readonly hash: string
}

/** Each parsed body's results, hashed once (the synchronous path and the effectful one share them). */
const hashedBodies = new WeakMap<object, ReadonlyArray<HashedResult>>()

/** The request's tool results with their texts' hashes; `[]` for a body this adapter reads none from. */
export const hashedResults = (adapter: ProviderAdapter, json: unknown): ReadonlyArray<HashedResult> => {
  if (adapter.toolResults === undefined || typeof json !== "object" || json === null) return []
  let hashed = hashedBodies.get(json)
  if (hashed === undefined) {
    hashed = adapter.toolResults(json).map((result) => ({ ...result, hash: sha256Hex(result.text) }))
    hashedBodies.set(json, hashed)
  }
  return hashed
}

/** What the memory says of a request's results. */
export type Screen =
  /** Every result already judged, none a violation the agent's mode refuses. */
  | { readonly kind: "pass" }
  /** A result already judged a boundary violation, and the agent is in `enforce`. */
  | { readonly kind: "refuse"; readonly checkpointId: string }
  /** Results to judge first (at most `MAX_JUDGED_PER_REQUEST`), and how many more were left for later. */
  | { readonly kind: "judge"; readonly pending: ReadonlyArray<HashedResult>; readonly left: number }

const PASS: Screen = { kind: "pass" }

/** Synchronous: hashes and the memory only, no judge. */
export const screenResults = (
  memory: ToolResultMemory,
  agentId: string,
  results: ReadonlyArray<HashedResult>,
  enforce: boolean
): Screen => {
  if (results.length === 0) return PASS
  const pending: Array<HashedResult> = []
  const seen = new Set<string>()
  let left = 0
  for (const result of results) {
    if (seen.has(result.hash)) continue
    seen.add(result.hash)
    const remembered = memory.recall(agentId, result.hash)
    if (remembered === undefined) {
      if (pending.length < MAX_JUDGED_PER_REQUEST) pending.push(result)
      else left++
    } else if (remembered !== null && enforce) return { kind: "refuse", checkpointId: remembered }
  }
  return pending.length === 0 ? PASS : { kind: "judge", pending, left }
}

export interface ScreeningContext {
  readonly settings: AgentSettings
  readonly agentId: string
  readonly agentName: string | undefined
  readonly sessionId: string
  readonly provider: string
  readonly model: string | undefined
  readonly tenant: string
}

/** How a request's results came out: refused in `enforce` (a violation), or forwarded. */
export type Screened =
  { readonly kind: "pass"; readonly left: number } | { readonly kind: "refuse"; readonly checkpointId: string }

/**
 * Judges the pending results, records each (`publish`, in the request's order) and remembers it;
 * then refuses in `enforce` when one is a boundary violation.
 */
export const judgePending = (
  memory: ToolResultMemory,
  judge: (input: ToolResultJudgingInput) => Effect.Effect<JudgedToolResult>,
  publish: (agentId: string, event: GatewayEvent) => Effect.Effect<void>,
  context: ScreeningContext,
  screen: Extract<Screen, { kind: "judge" }>
): Effect.Effect<Screened> =>
  Effect.gen(function* () {
    const judged = yield* Effect.forEach(
      screen.pending,
      (result) =>
        judge({
          settings: context.settings,
          agentId: context.agentId,
          agentName: context.agentName,
          sessionId: context.sessionId,
          provider: context.provider,
          model: context.model,
          tenant: context.tenant,
          toolName: result.toolName,
          text: result.text,
          hash: result.hash
        }),
      { concurrency: CONCURRENCY }
    )
    let violation: string | undefined
    for (const { event, hash } of judged) {
      const checkpoint = event.checkpoint
      countToolResultJudged(checkpoint.verdict)
      const violates = checkpoint.verdict === "boundary_violation"
      memory.remember(context.agentId, hash, violates ? checkpoint.checkpoint_id : null)
      if (violates) violation ??= checkpoint.checkpoint_id
      yield* publish(context.agentId, event)
    }
    return violation !== undefined && context.settings.mode === "enforce"
      ? { kind: "refuse", checkpointId: violation }
      : { kind: "pass", left: screen.left }
  })

/** A request with no tool result left to judge. */
export const NOTHING_LEFT: Screened = { kind: "pass", left: 0 }

/** The request path's screening of tool results, over the agent's memory of judged results and the judge. */
export const makeRequestScreening = (
  memory: ToolResultMemory,
  judge: (input: ToolResultJudgingInput) => Effect.Effect<JudgedToolResult>,
  publish: (agentId: string, event: GatewayEvent) => Effect.Effect<void>
) => {
  /**
   * Whether a plain request carries tool results not yet judged for the agent (or one judged a
   * violation, in `enforce`): then the effectful path judges them. A body whose bytes name no
   * tool result is not parsed for them (a few byte searches).
   */
  const unjudged = (
    adapter: ProviderAdapter,
    bytes: Uint8Array,
    json: () => unknown,
    agentId: string,
    settings: AgentSettings
  ): boolean =>
    adapter.mayCarryToolResults?.(bytes) === true &&
    screenResults(memory, agentId, hashedResults(adapter, json()), settings.mode === "enforce").kind !== "pass"

  /**
   * The tool results a request carries, screened against those the agent had judged, the new ones
   * judged and recorded (the effectful path's). A body whose bytes name no tool result is not parsed
   * for them.
   */
  const screenToolResults = (
    request: InspectedRequest,
    body: RequestBody,
    who: Admitted,
    settings: AgentSettings
  ): Effect.Effect<Screened> =>
    Effect.gen(function* () {
      const { adapter, agentId } = who
      const plain = yield* body.plain
      if (plain === undefined || adapter.mayCarryToolResults?.(plain) !== true) return NOTHING_LEFT
      const json = yield* body.json
      const screen = screenResults(memory, agentId, hashedResults(adapter, json), settings.mode === "enforce")
      if (screen.kind !== "judge") return screen.kind === "refuse" ? screen : NOTHING_LEFT
      return yield* judgePending(
        memory,
        judge,
        publish,
        {
          settings,
          agentId,
          agentName: who.agentName,
          sessionId: who.sessionId,
          provider: adapter.name,
          model: adapter.requestInfo(json, request.url).model,
          tenant: settings.orgId ?? who.keyHash
        },
        screen
      )
    })

  return { screenToolResults, unjudged }
}
