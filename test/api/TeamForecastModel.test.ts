/**
 * The forecast with a model (ANALYSIS_MODEL): a fake Anthropic-shaped provider on loopback answers
 * the narrative; the forecast records `method: "model"`, the model's name and its contribution
 * beside the unchanged deterministic probabilities; a provider that fails (HTTP 500, an answer that
 * is not the asked JSON, no answer) leaves `method: "deterministic"` with the failure recorded.
 */
import { afterAll, expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import * as ForecastNarrator from "../../adapters/analysis/ForecastNarrator.js"
import { ApiHarness, layer as harness } from "./Support.js"
import { freshTeam } from "./TeamIntelligenceCases.js"

const KEY = "sk-fake-analysis"

/** What the fake provider answers next, and what it was sent. */
const fake = {
  answer: (_res: ServerResponse) => {},
  requests: [] as Array<{ url: string; headers: IncomingMessage["headers"]; body: any }>
}
const server = createServer((req, res) => {
  const chunks: Array<Buffer> = []
  req.on("data", (c: Buffer) => chunks.push(c))
  req.on("end", () => {
    fake.requests.push({ url: req.url ?? "", headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString()) })
    fake.answer(res)
  })
})
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()))
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))
const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`

const anthropicText = (text: string) => (res: ServerResponse) => {
  const body = JSON.stringify({ model: "claude-fake", content: [{ type: "text", text }] })
  res.writeHead(200, { "content-type": "application/json" }).end(body)
}

const narrator = Layer.succeed(
  ForecastNarrator.ForecastNarrator,
  ForecastNarrator.make({ provider: "anthropic", model: "claude-fake", apiKey: Redacted.make(KEY), baseUrl })
)

layer(harness({ forecastNarrator: narrator }), { timeout: "120 seconds" })("forecast with a model", (it) => {
  const forecast = Effect.gen(function* () {
    const api = yield* ApiHarness
    const { teamId } = yield* freshTeam
    const res = yield* api.call("POST", "/v1/teams/forecast", {
      token: api.fixtures.admin.token,
      body: { team_id: teamId }
    })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    return res.body
  })

  it.effect("the model's narrative is recorded beside the deterministic probabilities", () =>
    Effect.gen(function* () {
      fake.answer = anthropicText(
        '{"narrative": "Escalation conflict leads: two members hold privacy, one conflicts with it."}'
      )
      const before = fake.requests.length
      const body = yield* forecast
      expect(body).toMatchObject({
        method: "model",
        model: "anthropic:claude-fake",
        model_contribution: {
          narrative: "Escalation conflict leads: two members hold privacy, one conflicts with it."
        },
        model_error: null
      })
      // The probabilities are the formulas' (docs/intelligence.md's worked example: 0.5 · 0.6667).
      const escalation = body.failure_modes.find((m: { mode: string }) => m.mode === "escalation_conflict")
      expect(escalation.probability).toBe(0.3334)
      // One call, to the configured provider, with the key, holding the forecast and nothing else.
      expect(fake.requests.length).toBe(before + 1)
      const sent = fake.requests.at(-1)!
      expect(sent.url).toBe("/v1/messages")
      expect(sent.headers["x-api-key"]).toBe(KEY)
      expect(sent.body.model).toBe("claude-fake")
      const prompt = JSON.parse(sent.body.messages[0].content)
      expect(prompt.failure_modes).toEqual(body.failure_modes)
      expect(prompt.method).toBeUndefined()
    })
  )

  it.effect("a Member, or a member-role key, is refused (403) before any model call; an admin-role key is served", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { owner, member } = api.fixtures
      const { orgId, teamId } = yield* freshTeam
      fake.answer = anthropicText('{"narrative": "n"}')
      const before = fake.requests.length
      const memberKey = yield* api.createApiKey(owner.userId, { orgId, role: "member" })
      for (const who of [{ token: member.token }, { apiKey: memberKey }]) {
        const res = yield* api.call("POST", "/v1/teams/forecast", { ...who, body: { team_id: teamId } })
        expect(res.status).toBe(403)
        expect(Object.keys(res.body)).toEqual(["error"])
        expect(res.body.error).toContain("may call a model")
      }
      expect(fake.requests.length).toBe(before)
      const adminKey = yield* api.createApiKey(owner.userId, { orgId, role: "admin" })
      const served = yield* api.call("POST", "/v1/teams/forecast", { apiKey: adminKey, body: { team_id: teamId } })
      expect(served).toMatchObject({ status: 200, body: { method: "model" } })
      expect(fake.requests.length).toBe(before + 1)
    })
  )

  it.effect("a failing model leaves the deterministic forecast, with the failure recorded", () =>
    Effect.gen(function* () {
      const failures: ReadonlyArray<readonly [(res: ServerResponse) => void, string]> = [
        [(res) => res.writeHead(500).end("{}"), "model answered HTTP 500"],
        [anthropicText("The team looks fine."), 'model answer is not {"narrative": "<text>"}'],
        [(res) => res.writeHead(200, { "content-type": "application/json" }).end("{}"), "model answer has no text"]
      ]
      for (const [answer, reason] of failures) {
        fake.answer = answer
        const body = yield* forecast
        expect(body).toMatchObject({
          method: "deterministic",
          model: "anthropic:claude-fake",
          model_contribution: null,
          model_error: reason
        })
        expect(body.failure_modes).toHaveLength(5)
      }
    })
  )
})
