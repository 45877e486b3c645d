/**
 * Properties of the gateway's Candor headers (fast-check, fixed seed, bounded runs), at the module
 * and through the real gateway:
 *
 * - the check never throws, whatever the header values (any string, arrays, raw lists that disagree
 *   with the parsed ones);
 * - what it accepts, the worker decodes: an accepted `x-candor-session` in a gateway event passes the
 *   `GatewayEvent` schema the worker dead-letters by; an accepted name is an `AgentName`, an accepted
 *   transaction id a `TransactionId`; and it accepts exactly what those schemas accept;
 * - over HTTP, with any value Node lets a client send, the gateway answers 200 or a 400 `{error}`
 *   naming the header, never 500, and every event it publishes decodes.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import fc from "fast-check"
import type { IncomingHttpHeaders } from "node:http"
import { Bus, type Subscription } from "../../../adapters/bus/Bus.js"
import {
  AGENT_HEADER,
  readCandorHeaders,
  SESSION_HEADER,
  TRANSACTION_HEADER
} from "../../../adapters/gateway/CandorHeaders.js"
import { Inspector } from "../../../adapters/gateway/Inspector.js"
import { buildResponseEvent } from "../../../adapters/gateway/ResponseEvent.js"
import { GatewayEvent } from "../../../core/schema/Event.js"
import { AgentName, SessionId } from "../../../core/schema/Ids.js"
import { TransactionId } from "../../../core/schema/ScopedTransaction.js"
import { inspectorWithFakes } from "./Fakes.js"
import { call, type FakeUpstream, startGateway, startUpstream, type TestGateway } from "./Harness.js"
import { fuzzParameters } from "../../support/Fuzz.js"

const decodeEvent = Schema.decodeUnknownSync(GatewayEvent)

/** The event the gateway would publish for an exchange in `sessionId`, as the worker receives it (JSON). */
const eventIn = (sessionId: string) =>
  JSON.parse(
    JSON.stringify(
      buildResponseEvent({
        agentId: "agt-0123456789abcdef0123456789abcdef",
        cardId: undefined,
        sessionId,
        provider: "anthropic",
        outcome: { kind: "complete", status: 200, bytes: 2, cause: undefined },
        extraction: undefined,
        judgement: { verdict: "clear", thinkingHash: "none", analysis: undefined, synthetic: "no_thinking_block" },
        policy: undefined,
        now: new Date("2026-03-01T12:00:00Z")
      })
    )
  ) as unknown

/** Header values as an attacker would pick them: any text, near the limits, look-alikes of valid ones. */
const value = fc.oneof(
  fc.string({ unit: "binary", maxLength: 300 }),
  fc.string({ unit: "grapheme-ascii", minLength: 120, maxLength: 300 }),
  fc.string({ unit: fc.constantFrom(" ", "\t", "\u00a0", "\u3000", "\ufeff", "a", "-", ",", "\u0000", "\u007f", "é") }),
  fc.uuid().map((uuid) => `txn-${uuid}`),
  fc.uuid().map((uuid) => `TXN-${uuid.toUpperCase()}`),
  fc.stringMatching(/^\S{250,260}$/)
)

/** A header as Node might parse it: absent, one value, or (never for these names in Node, but typed so) several. */
const parsed = fc.oneof(fc.constant(undefined), value, fc.array(value, { minLength: 0, maxLength: 3 }))

const NAMES = [SESSION_HEADER, AGENT_HEADER, TRANSACTION_HEADER] as const

describe("readCandorHeaders", () => {
  it("never throws, and what it accepts the worker's schemas decode", () => {
    fc.assert(
      fc.property(
        fc.record({ session: parsed, agent: parsed, transaction: parsed }),
        fc.option(
          fc.array(fc.tuple(fc.constantFrom(...NAMES, "X-Candor-Agent", "x-api-key"), value), { maxLength: 6 })
        ),
        (values, raw) => {
          const headers: IncomingHttpHeaders = {}
          if (values.session !== undefined) headers[SESSION_HEADER] = values.session
          if (values.agent !== undefined) headers[AGENT_HEADER] = values.agent
          if (values.transaction !== undefined) headers[TRANSACTION_HEADER] = values.transaction
          const read = readCandorHeaders(headers, raw === null ? undefined : raw.flat())
          if (!read.ok) {
            expect(NAMES.some((name) => read.error.startsWith(`${name}: `))).toBe(true)
            return
          }
          const { agent, session, transaction } = read.headers
          if (session !== undefined) {
            expect(Schema.is(SessionId)(session)).toBe(true)
            expect(decodeEvent(eventIn(session)).session_id).toBe(session)
          }
          if (agent !== undefined) expect(Schema.is(AgentName)(agent)).toBe(true)
          if (transaction !== undefined) expect(Schema.is(TransactionId)(transaction)).toBe(true)
        }
      ),
      fuzzParameters(2_000)
    )
  })

  it("accepts a value sent once exactly when the worker's schema does (empty: absent)", () => {
    const schemas = { [SESSION_HEADER]: SessionId, [AGENT_HEADER]: AgentName, [TRANSACTION_HEADER]: TransactionId }
    fc.assert(
      fc.property(fc.constantFrom(...NAMES), value, (name, text) => {
        const read = readCandorHeaders({ [name]: text }, [name, text])
        const expected = text === "" || Schema.is(schemas[name])(text)
        expect(read.ok, JSON.stringify(text)).toBe(expected)
      }),
      fuzzParameters(2_000)
    )
  })

  it("refuses a header sent twice, whatever the case of its names, even with equal valid values", () => {
    const read = readCandorHeaders({ [AGENT_HEADER]: "bot, bot" }, ["x-candor-agent", "bot", "X-Candor-Agent", "bot"])
    expect(read).toEqual({ ok: false, error: "x-candor-agent: must be sent once" })
    // Joined by Node, "bot, bot" would otherwise be one valid name.
    expect(readCandorHeaders({ [AGENT_HEADER]: "bot, bot" }, ["x-candor-agent", "bot, bot"]).ok).toBe(true)
    expect(readCandorHeaders({ [SESSION_HEADER]: ["a", "b"] }, undefined)).toMatchObject({ ok: false })
  })
})

describe("Candor headers through the real gateway", () => {
  let scope: Scope.CloseableScope
  let upstream: FakeUpstream
  let gateway: TestGateway
  let events: Subscription

  beforeAll(async () => {
    scope = await Effect.runPromise(Scope.make())
    const context = await Effect.runPromise(Layer.buildWithScope(inspectorWithFakes, scope))
    events = await Effect.runPromise(Scope.extend(Context.get(context, Bus).subscribe("candor.events."), scope))
    upstream = await startUpstream((_r, res) => {
      const body = JSON.stringify({ model: "claude-test", content: [{ type: "text", text: "ok" }] })
      res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
      res.end(body)
    })
    gateway = await startGateway(upstream.url, Context.get(context, Inspector))
  })
  afterAll(async () => {
    await gateway?.close()
    await upstream?.close()
    await Effect.runPromise(Scope.close(scope, Exit.void))
  })

  /** What Node's client lets through in a header value: tab, visible ASCII and space, Latin-1's upper half. */
  const sendable = fc.string({
    unit: fc.oneof(
      fc.constantFrom("\t", " ", "\u00a0", "\u00ff"),
      fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)),
      fc.integer({ min: 0x80, max: 0xff }).map((c) => String.fromCharCode(c))
    ),
    maxLength: 300
  })

  it("answers 200 or a 400 naming the header, never anything else, and every event it publishes decodes", async () => {
    let key = 0
    await fc.assert(
      fc.asyncProperty(
        fc.record(
          { [SESSION_HEADER]: sendable, [AGENT_HEADER]: sendable, [TRANSACTION_HEADER]: sendable },
          { requiredKeys: [] }
        ),
        async (candor) => {
          const before = upstream.requests.length
          const res = await call(`${gateway.url}/anthropic/v1/messages`, {
            method: "POST",
            headers: { "content-type": "application/json", "x-api-key": `sk-prop-${++key}`, ...candor },
            body: JSON.stringify({ model: "claude-test", messages: [] })
          })
          const body = JSON.parse(res.body.toString()) as Record<string, unknown>
          if (res.status === 400) {
            expect(Object.keys(body)).toEqual(["error"])
            expect(NAMES.some((name) => String(body.error).startsWith(`${name}: `))).toBe(true)
            expect(upstream.requests.length).toBe(before)
            return
          }
          // A well-formed transaction id the agent has not opened is refused by the transaction rule.
          if (res.status === 403) {
            expect(body.type).toBe("transaction_error")
            return
          }
          expect(res.status).toBe(200)
          const event = decodeEvent((await Effect.runPromise(events.take)).payload)
          // Node's client sends header text as UTF-8 and the server reads Latin-1: compare ASCII only.
          const sent = candor[SESSION_HEADER]?.trim()
          if (sent !== undefined && /^[\x21-\x7e]+$/.test(sent)) expect(event.session_id).toBe(sent)
        }
      ),
      fuzzParameters(60)
    )
  })
})
