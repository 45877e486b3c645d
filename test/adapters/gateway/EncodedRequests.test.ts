/**
 * Request bodies the provider reads are read by the tool policy too (issue 24): a body sent with
 * `Content-Encoding` (gzip, deflate, br) or behind a UTF-8 byte order mark declares its tools like a
 * plain one; a body that still cannot be read (corrupt, a compression bomb) never passes the policy
 * silently. The provider always gets the client's bytes, or, with a nudge injected, the rewritten
 * JSON in the body's own coding.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import type { ServerResponse } from "node:http"
import { brotliCompressSync, deflateRawSync, deflateSync, gunzipSync, gzipSync } from "node:zlib"
import { AgentState } from "../../../adapters/bus/AgentState.js"
import { Bus, type Subscription } from "../../../adapters/bus/Bus.js"
import { agentIdOf } from "../../../adapters/gateway/AgentIdentity.js"
import { MAX_DECODED_BYTES } from "../../../adapters/gateway/ContentCoding.js"
import { Inspector } from "../../../adapters/gateway/Inspector.js"
import { sha256Hex } from "../../../adapters/providers/Identity.js"
import { GatewayEvent } from "../../../core/schema/Event.js"
import { Policy, type PolicyEncoded } from "../../../core/schema/Policy.js"
import {
  call,
  type FakeUpstream,
  startGateway,
  startUpstream,
  type TestGateway,
  nextResponsePayload
} from "./Harness.js"
import { inspectorWithFakes } from "./Fakes.js"

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
  upstream = await startUpstream((_r, res: ServerResponse) => {
    const text = JSON.stringify({ model: "claude-test", content: [{ type: "text", text: "ok" }] })
    res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
    res.end(text)
  })
  gateway = await startGateway(upstream.url, Context.get(context, Inspector))
})
afterAll(async () => {
  await gateway.close()
  await upstream.close()
  await run(Scope.close(scope, Exit.void))
})

const ENFORCED: PolicyEncoded = {
  forbidden: [{ pattern: "shell_exec", reason: "no shell" }],
  defaults: { enforcement_mode: "enforce", unmapped_tool_action: "allow" }
}

let keyCounter = 0
const newAgent = async (policy: PolicyEncoded = ENFORCED) => {
  const key = `sk-encoded-${++keyCounter}`
  const agentId = agentIdOf(sha256Hex(key), undefined)
  await run(state.update(agentId, { policy: Schema.decodeUnknownSync(Policy)(policy) }))
  const send = (body: Buffer, encoding?: string) =>
    call(`${gateway.url}/anthropic/v1/messages`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-api-key": key,
        ...(encoding === undefined ? {} : { "content-encoding": encoding })
      },
      body
    })
  return { agentId, send }
}

const eventOf = async (agentId: string): Promise<GatewayEvent> => {
  for (;;) {
    const event = Schema.decodeUnknownSync(GatewayEvent)(await nextResponsePayload(events.take))
    if (event.agent_id === agentId) return event
  }
}

const request = (tool: string) =>
  JSON.stringify({ model: "claude-test", messages: [], tools: [{ name: tool, input_schema: {} }] })

const ENCODED: ReadonlyArray<readonly [string, string, (text: string) => Buffer]> = [
  ["gzip", "gzip", (text) => gzipSync(text)],
  ["deflate", "deflate", (text) => deflateSync(text)],
  ["raw deflate (as some clients send it)", "deflate", (text) => deflateRawSync(text)],
  ["br", "br", (text) => brotliCompressSync(text)],
  ["a UTF-8 byte order mark", "", (text) => Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)])]
]

describe("encoded request bodies under the tool policy", () => {
  for (const [name, encoding, encode] of ENCODED) {
    it(`${name}: a forbidden tool is refused (403) before the provider; an allowed one passes unchanged`, async () => {
      const agent = await newAgent()
      const before = upstream.requests.length
      const refused = await agent.send(encode(request("shell_exec")), encoding || undefined)
      expect(refused.status).toBe(403)
      expect(refused.headers["x-policy-verdict"]).toBe("fail")
      expect(JSON.parse(refused.body.toString()).error).toContain("shell_exec")
      expect(upstream.requests.length).toBe(before)

      const allowed = encode(request("get_weather"))
      const passed = await agent.send(allowed, encoding || undefined)
      expect(passed.status).toBe(200)
      expect(passed.headers["x-policy-verdict"]).toBe("pass")
      expect(upstream.requests.at(-1)!.body.equals(allowed)).toBe(true)
      await eventOf(agent.agentId)
    })
  }

  const unreadable: ReadonlyArray<readonly [string, string, Buffer]> = [
    [
      "a corrupt gzip body",
      "gzip",
      Buffer.concat([gzipSync(request("shell_exec")).subarray(0, 14), Buffer.alloc(40, 9)])
    ],
    ["a coding the gateway does not decode", "zstd", Buffer.from("(zstd bytes)")],
    // Decodes past the gateway's bound (a compression bomb): never inflated in full.
    ["a compression bomb", "gzip", gzipSync(Buffer.alloc(MAX_DECODED_BYTES + 1024, 0x20))]
  ]
  for (const [name, encoding, body] of unreadable) {
    it(`${name}: refused under fail_open false (enforce); forwarded marked warn, and recorded so, under fail_open`, async () => {
      const closed = await newAgent({ ...ENFORCED, defaults: { ...ENFORCED.defaults, fail_open: false } })
      const before = upstream.requests.length
      const refused = await closed.send(body, encoding)
      expect(refused.status).toBe(403)
      expect(JSON.parse(refused.body.toString()).error).toContain("cannot be read")
      expect(upstream.requests.length).toBe(before)

      const open = await newAgent()
      const forwarded = await open.send(body, encoding)
      expect(forwarded.status).toBe(200)
      expect(forwarded.headers["x-policy-verdict"]).toBe("warn")
      expect(upstream.requests.at(-1)!.body.equals(body)).toBe(true)
      const event = await eventOf(open.agentId)
      expect(event.trace.context?.metadata).toMatchObject({
        policy: { request_verdict: "warn", request_unreadable: true }
      })
    })
  }

  it("a pending nudge goes into a gzip body, which reaches the provider gzip-encoded as its header says", async () => {
    const agent = await newAgent({ defaults: { enforcement_mode: "off" } })
    await run(state.setNudge(agent.agentId, "NUDGE-TEXT"))
    const res = await agent.send(gzipSync(JSON.stringify({ model: "claude-test", messages: [] })), "gzip")
    expect(res.status).toBe(200)
    const forwarded = upstream.requests.at(-1)!
    expect(forwarded.req.headers["content-encoding"]).toBe("gzip")
    expect(JSON.parse(gunzipSync(forwarded.body).toString())).toMatchObject({
      system: expect.stringContaining("NUDGE-TEXT")
    })
    await eventOf(agent.agentId)
  })
})
