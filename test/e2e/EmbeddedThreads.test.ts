/**
 * The embedded default's two threads (the gateway on the main thread, the API, workers and store in
 * a worker thread, joined by adapters/bus/ThreadBridge*.ts), seen from outside one `candor serve`:
 * - a pause answered by the API refuses the gateway's very next request (no polling: the API
 *   answers only once the gateway thread's copy of the agent's settings has it), a resume lets the
 *   next one through again;
 * - a mode set through the API is in force for the next request: in `nudge` mode, a boundary
 *   violation leaves a nudge that the gateway injects into a following request;
 * - every response the gateway published is committed by the backend as a checkpoint.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { startServe } from "./ServeProcess.js"
import {
  INJECTED_THINKING,
  SERVICE_ROLE_KEY,
  anthropicUpstream,
  asOperator,
  newAgent,
  poll,
  printLogsOnFailure,
  sendThroughGateway
} from "./Support.js"

layer(Layer.empty, { timeout: "180 seconds", excludeTestServices: true })("embedded default, two threads", (it) => {
  it.scoped(
    "containment, enforcement mode, nudges and checkpoints cross the thread boundary",
    () =>
      Effect.gen(function* () {
        const upstream = yield* anthropicUpstream(INJECTED_THINKING)
        const serve = yield* startServe({ env: { ANTHROPIC_BASE_URL: upstream.url, SERVICE_ROLE_KEY } })
        const { providerKey, agentId } = newAgent()
        const send = sendThroughGateway(serve.gatewayUrl, providerKey)
        const agent = (path: string, method: string, body?: unknown) =>
          asOperator(`${serve.apiUrl}/v1/agents/${agentId}/${path}`, {
            method,
            ...(body === undefined ? {} : { body: JSON.stringify(body) })
          })

        yield* Effect.gen(function* () {
          expect((yield* send).status).toBe(200)

          // Containment: in force for the next request, and lifted for the next one after a resume.
          expect((yield* agent("pause", "POST", { reason: "incident 7" })).status).toBe(200)
          const refused = yield* send
          expect(refused.status).toBe(403)
          expect(refused.body).toMatchObject({ type: "containment_error", reason: "agent_paused" })
          expect((yield* agent("resume", "POST")).status).toBe(200)
          expect((yield* send).status).toBe(200)

          // The mode: a violation in `nudge` mode leaves a nudge, injected into a later request.
          expect((yield* agent("enforcement", "PUT", { mode: "nudge" })).status).toBe(200)
          const forwardedBefore = upstream.requests.length
          expect((yield* send).status).toBe(200)
          yield* poll(
            Effect.zipRight(
              send,
              Effect.sync(() => upstream.requests.slice(forwardedBefore + 1))
            ),
            (forwarded) => forwarded.some((r) => r.body.toString("utf8").includes("INTEGRITY NOTICE")),
            "nudge injected",
            // Judged, committed and decided on the backend thread, then back across: seconds under CI's load.
            30_000
          )

          // Every answered request was published across the boundary and committed (the refused one is not an exchange).
          const answered = upstream.requests.length
          const checkpoints = yield* poll(
            agent("checkpoints?limit=100", "GET"),
            (res) => res.status === 200 && res.body.checkpoints?.length >= answered,
            "checkpoints committed",
            10_000
          )
          expect(checkpoints.body.checkpoints).toHaveLength(answered)
        }).pipe(printLogsOnFailure(serve))
      }),
    // A child process on two threads: its start alone takes most of vitest's default 30 s on a loaded machine.
    120_000
  )
})
