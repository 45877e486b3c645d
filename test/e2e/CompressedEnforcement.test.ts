/**
 * Issue 24's headline attack against `candor serve` (the embedded default, every role in one
 * process): the provider answers gzip, as providers do for the official SDKs (`accept-encoding:
 * gzip, deflate`), to an agent in `enforce` mode whose thinking follows a prompt injection. The
 * Anthropic SDK gets a 403 and the record a proved boundary violation that `candor verify` accepts.
 * And an answer the gateway cannot decode at all (`zstd`), under `fail_closed` set through
 * `PUT /v1/agents/{agent_id}/failure-policy`: 403, and a certificate of a violation `candor verify`
 * accepts and names as the failure policy's.
 */
import Anthropic from "@anthropic-ai/sdk"
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { gzipSync } from "node:zlib"
import { startUpstream } from "../adapters/gateway/Harness.js"
import { startServe } from "./ServeProcess.js"
import {
  asOperator,
  fetchJson,
  INJECTED_THINKING,
  newAgent,
  poll,
  printLogsOnFailure,
  SERVICE_ROLE_KEY,
  verifyOffline
} from "./Support.js"

/** Answers gzip to the key `gzipKey`, zstd (which the gateway does not decode) to any other. */
const compressingUpstream = (gzipKey: string) =>
  Effect.acquireRelease(
    Effect.promise(() =>
      startUpstream((r, res) => {
        const answer = JSON.stringify({
          id: "msg_e2e",
          type: "message",
          role: "assistant",
          model: "claude-e2e",
          stop_reason: "end_turn",
          stop_sequence: null,
          content: [
            { type: "thinking", thinking: INJECTED_THINKING, signature: "sig" },
            { type: "text", text: "Done." }
          ],
          usage: { input_tokens: 12, output_tokens: 30 }
        })
        // The SDK sends its key as x-api-key or as a bearer token, depending on its version.
        const gzip = String(r.req.headers["x-api-key"] ?? r.req.headers.authorization ?? "").endsWith(gzipKey)
        const body = gzip ? gzipSync(answer) : Buffer.from("(zstd frame)")
        res.writeHead(200, {
          "content-type": "application/json",
          "content-encoding": gzip ? "gzip" : "zstd",
          "content-length": String(body.byteLength)
        })
        res.end(body)
      })
    ),
    (upstream) => Effect.promise(() => upstream.close())
  )

/** The agent's first certificate, once its verdict proof is attached, and the keys to check it with. */
const provedCertificate = (apiUrl: string, agentId: string) =>
  Effect.gen(function* () {
    const chain = yield* poll(
      fetchJson(`${apiUrl}/v1/reputation/${agentId}/verify`),
      (res) => res.status === 200 && res.body.certificates.total >= 1,
      "certificate stored",
      30_000
    )
    const checkpointId: string = chain.body.certificates.items[0].checkpoint_id
    yield* poll(
      fetchJson(`${apiUrl}/v1/checkpoints/${checkpointId}/proof`),
      (res) => res.body.status === "completed",
      "verdict proof completed",
      30_000
    )
    const certificate = (yield* fetchJson(`${apiUrl}/v1/checkpoints/${checkpointId}/certificate`)).body
    return { certificate, keys: (yield* fetchJson(`${apiUrl}/v1/keys`)).body }
  })

layer(Layer.empty, { timeout: "300 seconds", excludeTestServices: true })("compressed answers end to end", (it) => {
  it.scoped(
    "embedded default: a gzip violation blocked for the SDK and proved; an undecodable answer under fail_closed certified by the failure policy",
    () =>
      Effect.gen(function* () {
        const gzipped = newAgent()
        const upstream = yield* compressingUpstream(gzipped.providerKey)
        const serve = yield* startServe({ env: { ANTHROPIC_BASE_URL: upstream.url, SERVICE_ROLE_KEY } })
        yield* Effect.gen(function* () {
          const enforce = (agentId: string) =>
            asOperator(`${serve.apiUrl}/v1/agents/${agentId}/enforcement`, {
              method: "PUT",
              body: JSON.stringify({ mode: "enforce" })
            })
          expect((yield* enforce(gzipped.agentId)).status).toBe(200)
          const client = new Anthropic({
            baseURL: `${serve.gatewayUrl}/anthropic`,
            apiKey: gzipped.providerKey,
            maxRetries: 0
          })
          const sent = yield* Effect.either(
            Effect.tryPromise(() =>
              client.messages.create({
                model: "claude-e2e",
                max_tokens: 64,
                messages: [{ role: "user", content: "Summarise this page" }]
              })
            )
          )
          expect(sent._tag).toBe("Left")
          if (sent._tag === "Left") expect(sent.left.cause).toBeInstanceOf(Anthropic.PermissionDeniedError)
          const judged = yield* provedCertificate(serve.apiUrl, gzipped.agentId)
          expect(judged.certificate.claims).toMatchObject({
            verdict: "boundary_violation",
            concerns: [expect.objectContaining({ category: "prompt_injection", severity: "critical" })]
          })
          const verified = yield* verifyOffline(judged.certificate, judged.keys)
          expect(verified.stdout).toContain("VALID")
          expect(verified.code).toBe(0)

          const undecodable = newAgent()
          expect((yield* enforce(undecodable.agentId)).status).toBe(200)
          const policy = yield* asOperator(`${serve.apiUrl}/v1/agents/${undecodable.agentId}/failure-policy`, {
            method: "PUT",
            body: JSON.stringify({ failure_policy: "fail_closed" })
          })
          expect(policy).toMatchObject({ status: 200, body: { failure_policy: "fail_closed" } })
          const blocked = yield* fetchJson(`${serve.gatewayUrl}/anthropic/v1/messages`, {
            method: "POST",
            headers: { "content-type": "application/json", "x-api-key": undecodable.providerKey },
            body: JSON.stringify({ model: "claude-e2e", max_tokens: 64, messages: [{ role: "user", content: "hi" }] })
          })
          expect(blocked.status).toBe(403)
          const unanalysed = yield* provedCertificate(serve.apiUrl, undecodable.agentId)
          expect(unanalysed.certificate.claims).toMatchObject({ verdict: "boundary_violation", analysis_model: "none" })
          const checked = yield* verifyOffline(unanalysed.certificate, unanalysed.keys)
          expect(checked.stdout).toContain("by the failure policy (fail_closed): not analysed, undecodable_encoding")
          expect(checked.stdout).toMatch(/verdict proof\s+ok\s+STARK/)
          expect(checked.stdout).toContain("VALID")
          expect(checked.code).toBe(0)
        }).pipe(printLogsOnFailure(serve))
      }),
    { timeout: 240_000 }
  )
})
