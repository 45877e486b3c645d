/**
 * Identity at the gateway, attacked over real HTTP with the real provider adapters (issue 24):
 *
 * - every Candor header is validated before the provider is called (400 `{error}` naming it):
 *   `x-candor-session` by the worker's `SessionId`, `x-candor-agent` as an `AgentName`,
 *   `x-transaction-id` as a `TransactionId`; a repeated one is refused too;
 * - one credential per request: a repeated or comma-joined credential header, two carriers, a
 *   repeated `?key=`, or a carrier Candor cannot read is 400 before the provider;
 * - a Gemini request with an OAuth bearer is identified (and contained) like one with an API key;
 * - a derived session id cannot be computed from what is public (the agent id and the hour).
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import { AgentState } from "../../../adapters/bus/AgentState.js"
import { Bus, type Subscription } from "../../../adapters/bus/Bus.js"
import { agentIdOf, derivedSessionId } from "../../../adapters/gateway/AgentIdentity.js"
import { Inspector } from "../../../adapters/gateway/Inspector.js"
import { sha256Hex } from "../../../adapters/providers/Identity.js"
import { toHex, utf8 } from "../../../core/Bytes.js"
import { taggedHash } from "../../../core/Hash.js"
import { GatewayEvent } from "../../../core/schema/Event.js"
import { inspectorWithFakes } from "./Fakes.js"
import {
  call,
  type FakeUpstream,
  type RawResponse,
  startGateway,
  startUpstream,
  type TestGateway,
  nextResponsePayload
} from "./Harness.js"

const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(effect)

let scope: Scope.CloseableScope
let upstream: FakeUpstream
let gateway: TestGateway
let state: AgentState["Type"]
let events: Subscription

beforeAll(async () => {
  scope = await run(Scope.make())
  const context = await run(Layer.buildWithScope(inspectorWithFakes, scope))
  state = Context.get(context, AgentState)
  events = await run(Scope.extend(Context.get(context, Bus).subscribe("candor.events."), scope))
  upstream = await startUpstream((r, res) => {
    const body = r.url.startsWith("/v1beta/")
      ? JSON.stringify({ modelVersion: "gemini-test", candidates: [{ content: { parts: [{ text: "ok" }] } }] })
      : JSON.stringify({ model: "claude-test", content: [{ type: "text", text: "ok" }] })
    res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
    res.end(body)
  })
  gateway = await startGateway(upstream.url, Context.get(context, Inspector))
})
afterAll(async () => {
  await gateway?.close()
  await upstream?.close()
  await run(Scope.close(scope, Exit.void))
})

let counter = 0
const newKey = () => `sk-ident-${++counter}-${"x".repeat(8)}`

const anthropic = (headers: Record<string, string | Array<string>>) =>
  call(`${gateway.url}/anthropic/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ model: "claude-test", max_tokens: 8, messages: [{ role: "user", content: "hi" }] })
  })

const gemini = (headers: Record<string, string | Array<string>>, query = "") =>
  call(`${gateway.url}/gemini/v1beta/models/gemini-test:generateContent${query}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "hi" }] }] })
  })

/** A 400 with only `{error}`, naming `header`, and the provider never called. */
const expectRefused = async (send: Promise<RawResponse>, header: string) => {
  const before = upstream.requests.length
  const res = await send
  const body = JSON.parse(res.body.toString()) as Record<string, unknown>
  expect(res.status, JSON.stringify(body)).toBe(400)
  expect(Object.keys(body)).toEqual(["error"])
  expect(body.error).toContain(header)
  expect(upstream.requests.length).toBe(before)
}

const nextEvent = async () => Schema.decodeUnknownSync(GatewayEvent)(await nextResponsePayload(events.take))

describe("Candor headers are validated before the provider is called", () => {
  it("x-candor-session: whitespace or more than 256 characters is 400 naming it; a valid one is the event's", async () => {
    const key = newKey()
    for (const value of ["a b", "x".repeat(257), "x".repeat(300), "tab\there", "nb\u00a0sp"]) {
      await expectRefused(anthropic({ "x-api-key": key, "x-candor-session": value }), "x-candor-session")
    }
    const session = "s".repeat(256)
    expect((await anthropic({ "x-api-key": key, "x-candor-session": session })).status).toBe(200)
    expect((await nextEvent()).session_id).toBe(session)
  })

  it("x-candor-agent: 1 to 128 printable ASCII characters, else 400 naming it", async () => {
    const key = newKey()
    for (const value of ["a".repeat(129), "caf\u00e9", "tab\tname", " x".repeat(3) + "\u00a0"]) {
      await expectRefused(anthropic({ "x-api-key": key, "x-candor-agent": value }), "x-candor-agent")
    }
    const name = `support bot #1 ~${"a".repeat(112)}`
    expect(name.length).toBe(128)
    expect((await anthropic({ "x-api-key": key, "x-candor-agent": name })).status).toBe(200)
    const event = await nextEvent()
    expect(event.agent_id).toBe(agentIdOf(sha256Hex(key), name))
    // The label rides on the event (the worker keeps it as the default name), never in what is published.
    expect(event.agent_name).toBe(name)
    expect(JSON.stringify([event.checkpoint, event.trace])).not.toContain(name)
    expect((await anthropic({ "x-api-key": key })).status).toBe(200)
    expect("agent_name" in (await nextEvent())).toBe(false)
  })

  it("x-transaction-id: anything but txn-<uuid> is 400 naming it (no lookup, no refresh)", async () => {
    const key = newKey()
    for (const value of ["txn-nope", "TXN-0B3F0C1E-6C5B-4A63-9F4F-7D1A4A9D2E10", "x".repeat(300), "txn-1 2"]) {
      await expectRefused(anthropic({ "x-api-key": key, "x-transaction-id": value }), "x-transaction-id")
    }
    // Well formed but not open: the transaction rule answers (403), as before.
    const res = await anthropic({ "x-api-key": key, "x-transaction-id": "txn-0b3f0c1e-6c5b-4a63-9f4f-7d1a4a9d2e10" })
    expect(res.status).toBe(403)
  })

  it("a repeated Candor header is 400 naming it, even when each value is valid", async () => {
    const key = newKey()
    await expectRefused(anthropic({ "x-api-key": key, "x-candor-agent": ["a", "b"] }), "x-candor-agent")
    await expectRefused(anthropic({ "x-api-key": key, "x-candor-session": ["s1", "s1"] }), "x-candor-session")
    const id = "txn-0b3f0c1e-6c5b-4a63-9f4f-7d1a4a9d2e10"
    await expectRefused(anthropic({ "x-api-key": key, "x-transaction-id": [id, id] }), "x-transaction-id")
  })
})

describe("one credential per request", () => {
  it("two x-api-key headers are 400, not a new agent", async () => {
    const key = newKey()
    await expectRefused(anthropic({ "x-api-key": [key, newKey()] }), "x-api-key")
    await expectRefused(anthropic({ "x-api-key": [key, key] }), "x-api-key")
  })

  it("a comma-joined credential is 400", async () => {
    await expectRefused(anthropic({ "x-api-key": `${newKey()}, ${newKey()}` }), "x-api-key")
    await expectRefused(anthropic({ "x-api-key": `${newKey()},${newKey()}` }), "x-api-key")
    await expectRefused(anthropic({ authorization: `Bearer ${newKey()},${newKey()}` }), "authorization")
  })

  it("two carriers (x-api-key with Authorization) are 400; two Authorization headers too", async () => {
    const key = newKey()
    await expectRefused(anthropic({ "x-api-key": key, authorization: `Bearer ${key}` }), "x-api-key")
    // Node keeps only the first Authorization in `headers`, but both would reach the provider.
    await expectRefused(anthropic({ authorization: [`Bearer ${key}`, `Bearer ${newKey()}`] }), "authorization")
  })

  it("a credential Candor cannot read is 400, never forwarded unattributed", async () => {
    await expectRefused(anthropic({ authorization: `Basic ${newKey()}` }), "authorization")
    await expectRefused(anthropic({ authorization: `Bearer a b` }), "authorization")
  })

  it("gemini: x-goog-api-key with ?key=, a repeated ?key=, or a bearer with a key are 400", async () => {
    const key = newKey()
    await expectRefused(gemini({ "x-goog-api-key": key }, `?key=${key}`), "key")
    await expectRefused(gemini({}, `?key=${key}&key=${newKey()}`), "key")
    await expectRefused(gemini({ authorization: `Bearer ${key}` }, `?key=${key}`), "authorization")
    await expectRefused(gemini({ authorization: `Bearer ${key}`, "x-goog-api-key": key }), "authorization")
  })

  it("gemini: an OAuth bearer identifies the agent, so its containment applies", async () => {
    const token = `ya29.${newKey()}`
    const agentId = agentIdOf(sha256Hex(token), undefined)
    expect((await gemini({ authorization: `Bearer ${token}` })).status).toBe(200)
    expect((await nextEvent()).agent_id).toBe(agentId)
    await run(
      state.update(agentId, {
        containment: { status: "killed", reason: null, contained_at: "2026-03-01T12:00:00Z", contained_by: "owner" }
      })
    )
    const before = upstream.requests.length
    const refused = await gemini({ authorization: `Bearer ${token}` })
    expect(refused.status).toBe(403)
    expect(JSON.parse(refused.body.toString()).containment_error.agent_id).toBe(agentId)
    expect(upstream.requests.length).toBe(before)
  })
})

describe("derived sessions", () => {
  it("are derived from the key's hash, not from the public agent id and the hour", async () => {
    const key = newKey()
    const agentId = agentIdOf(sha256Hex(key), "bot")
    const at = Date.now()
    expect((await anthropic({ "x-api-key": key, "x-candor-agent": "bot" })).status).toBe(200)
    const { session_id } = await nextEvent()
    const hours = [at, Date.now()]
    expect(hours.map((t) => derivedSessionId(sha256Hex(key), "bot", t))).toContain(session_id)
    // What anyone could compute before: the agent id (public) and the hour.
    const fromPublic = (t: number) =>
      "ses-" + toHex(taggedHash("session", utf8(`${agentId}\0${Math.floor(t / 3_600_000)}`))).slice(0, 32)
    expect(hours.map(fromPublic)).not.toContain(session_id)
    // Another name under the same key, or the same name under another key: another session.
    expect(derivedSessionId(sha256Hex(key), "other", at)).not.toBe(derivedSessionId(sha256Hex(key), "bot", at))
    expect(derivedSessionId(sha256Hex(newKey()), "bot", at)).not.toBe(derivedSessionId(sha256Hex(key), "bot", at))
  })
})
