/**
 * The gateway's event is a value of the one `GatewayEvent` schema, and its fast encoding equals the
 * schema's: on random drafts built by `buildResponseEvent` (random outcomes, extractions, judgements
 * with concerns of the schema's arbitrary, policy records), `encodeGatewayEvent` and
 * `Schema.encodeSync(GatewayEvent)` give the same value and the same JSON, and what the gateway
 * builds decodes as the workers decode it. (The whole event's `Arbitrary` is not used: fast-check
 * cannot generate the RFC 3339 pattern of its timestamps in reasonable time.)
 */
import { describe, expect, it } from "@effect/vitest"
import * as Arbitrary from "effect/Arbitrary"
import * as fc from "effect/FastCheck"
import * as Schema from "effect/Schema"
import type { PolicyFinding } from "../../../core/Policy.js"
import { Concern } from "../../../core/schema/Concern.js"
import { encodeGatewayEvent, GatewayEvent, OUTCOME_KINDS } from "../../../core/schema/Event.js"
import { buildResponseEvent, type EventInput } from "../../../adapters/gateway/ResponseEvent.js"

const encodeWithSchema = Schema.encodeSync(GatewayEvent)
/** What the workers do with a delivery: the bus's JSON round trip, then the schema. */
const decodeAsWorker = (published: unknown) =>
  Schema.decodeUnknownSync(GatewayEvent)(JSON.parse(JSON.stringify(published)))

const expectSameEncoding = (event: GatewayEvent) => {
  const fast = encodeGatewayEvent(event)
  const slow = encodeWithSchema(event)
  expect(fast).toStrictEqual(slow)
  expect(JSON.parse(JSON.stringify(fast))).toStrictEqual(JSON.parse(JSON.stringify(slow)))
}

const identifier = fc.stringMatching(/^[a-z0-9-]{1,40}$/)
const finding = fc.record({
  type: fc.constantFrom(
    "forbidden",
    "card_forbidden",
    "capability_exceeded",
    "unmapped_denied",
    "unmapped",
    "escalation"
  ),
  tool: fc.string(),
  reason: fc.string(),
  severity: fc.constantFrom("low", "medium", "high", "critical")
}) as fc.Arbitrary<PolicyFinding>

/** Random inputs of `buildResponseEvent`, as the Inspector's analysis produces them. */
const drafts: fc.Arbitrary<EventInput> = fc.record({
  agentId: identifier.map((s) => `agt-${s}`),
  cardId: fc.option(
    identifier.map((s) => `card-${s}`),
    { nil: undefined }
  ),
  sessionId: identifier.map((s) => `ses-${s}`),
  provider: fc.constantFrom("anthropic", "openai", "gemini"),
  outcome: fc.record({
    kind: fc.constantFrom(...OUTCOME_KINDS),
    status: fc.option(fc.integer({ min: 100, max: 599 }), { nil: undefined }),
    bytes: fc.nat(),
    cause: fc.option(fc.constantFrom("ECONNRESET", "UND_ERR_HEADERS_TIMEOUT"), { nil: undefined })
  }),
  extraction: fc.option(
    fc.record({
      thinking: fc.option(
        fc.record({
          text: fc.string(),
          source: fc.constant("native" as const),
          confidence: fc.double({ min: 0, max: 1, noNaN: true })
        }),
        { nil: undefined }
      ),
      redactedThinking: fc.boolean(),
      toolCalls: fc.array(fc.record({ name: fc.string(), arguments: fc.anything() }), { maxLength: 3 }),
      outputText: fc.string(),
      model: fc.option(fc.string(), { nil: undefined }),
      stopReason: fc.constant(undefined),
      providerError: fc.constant(undefined)
    }),
    { nil: undefined }
  ),
  judgement: fc.record({
    verdict: fc.constantFrom("clear", "review_needed", "boundary_violation"),
    thinkingHash: fc.oneof(fc.constant("none" as const), fc.stringMatching(/^[0-9a-f]{64}$/)),
    analysis: fc.option(
      fc.record({
        concerns: fc.array(Arbitrary.make(Concern), { maxLength: 3 }),
        reasoning_summary: fc.string(),
        llm_verdict: fc.option(fc.constantFrom("clear", "review_needed", "boundary_violation"), { nil: undefined }),
        analysis_model: fc.constantFrom("rules", "anthropic:claude-test"),
        analysis_duration_ms: fc.nat(),
        thinking_tokens_original: fc.nat(),
        thinking_tokens_analyzed: fc.nat(),
        truncated: fc.boolean(),
        raw_analysis: fc.string(),
        cross_validation_warnings: fc.array(fc.string(), { maxLength: 2 })
      }),
      { nil: undefined }
    ),
    synthetic: fc.option(fc.constantFrom("analysis_failed", "no_thinking_block"), { nil: undefined })
  }),
  policy: fc.option(
    fc.record({
      mode: fc.constantFrom("warn", "enforce"),
      requestVerdict: fc.constantFrom("pass", "warn", "fail"),
      response: fc.record({
        verdict: fc.constantFrom("pass", "warn", "fail"),
        violations: fc.array(finding, { maxLength: 2 }),
        warnings: fc.array(finding, { maxLength: 2 }),
        tools_evaluated: fc.nat()
      })
    }),
    { nil: undefined }
  ),
  now: fc.date({ min: new Date("2000-01-01T00:00:00Z"), max: new Date("2100-01-01T00:00:00Z"), noInvalidDate: true })
}) as fc.Arbitrary<EventInput>

describe("the gateway event", () => {
  it("as the gateway builds it, encodes the same both ways and decodes as the workers decode it", () => {
    fc.assert(
      fc.property(drafts, (input) => {
        const event = buildResponseEvent(input)
        expectSameEncoding(event)
        expect(decodeAsWorker(encodeGatewayEvent(event))).toStrictEqual(JSON.parse(JSON.stringify(event)))
      }),
      { numRuns: 200 }
    )
  })
})
