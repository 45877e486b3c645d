/**
 * The approval desk over NATS (adapters/bus/ApprovalDeskNats.ts): a gateway without the store asks
 * a process with it (`serve`, here over a recording desk) on the real server, each with its own
 * connection; the wait is the approval's KV key, written by the deciding process's signal.
 */
import { expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import { ApprovalDesk } from "../../../adapters/bus/ApprovalDesk.js"
import * as ApprovalDeskNats from "../../../adapters/bus/ApprovalDeskNats.js"
import { ApprovalSignal } from "../../../adapters/bus/ApprovalSignal.js"
import * as ApprovalSignalKv from "../../../adapters/bus/ApprovalSignalKv.js"
import type { Approval, ApprovalAsk } from "../../../core/schema/Approval.js"
import { describeIntegration } from "../../support/Integration.js"
import { NatsTest, removeNatsResources, uniquePrefix } from "./NatsSupport.js"

const ask: ApprovalAsk = {
  org_id: "org-1",
  agent_id: "agt-1",
  server_id: null,
  tool: "delete_file",
  arguments_hash: "b".repeat(64),
  reason: "deletions need a person",
  timeout_seconds: 300
}

const APPROVAL_ID = "apr-00000000-0000-4000-8000-000000000002"

/** The store's side: a desk that records what it is asked (the real one is services/ApprovalDeskLocal.ts). */
const recordingDesk = () => {
  const asked: Array<ApprovalAsk> = []
  const cancelled: Array<string> = []
  const desk = ApprovalDesk.of({
    request: (input) =>
      Effect.sync((): Approval => {
        asked.push(input)
        return {
          ...input,
          approval_id: APPROVAL_ID,
          requested_at: new Date().toISOString(),
          expires_at: new Date(Date.now() + 300_000).toISOString(),
          status: "pending",
          decided_at: null,
          decided_by: null,
          decision_reason: null
        }
      }),
    awaitDecision: () => Effect.never,
    cancel: (id) => Effect.sync(() => void cancelled.push(id))
  })
  return { desk, asked, cancelled }
}

const withPrefix = <A, E, R>(body: (prefix: string) => Effect.Effect<A, E, R>) => {
  const prefix = uniquePrefix("desk")
  return Effect.gen(function* () {
    yield* Effect.addFinalizer(() => removeNatsResources(prefix).pipe(Effect.provide(NatsTest)))
    return yield* body(prefix)
  }).pipe(Effect.scoped)
}

describeIntegration("nats", "ApprovalDeskNats", () => {
  it.live(
    "a gateway's request is stored by the serving process; its wait wakes on the KV signal; cancel reaches it",
    () =>
      withPrefix((prefix) =>
        Effect.gen(function* () {
          const store = recordingDesk()
          const storeSide = yield* Layer.build(
            Layer.merge(
              ApprovalDeskNats.serve({ prefix }).pipe(Layer.provide(Layer.succeed(ApprovalDesk, store.desk))),
              ApprovalSignalKv.layer({ prefix })
            ).pipe(Layer.provide(NatsTest))
          )
          const gateway = Context.get(
            yield* Layer.build(
              ApprovalDeskNats.layer({ prefix }).pipe(
                Layer.provide(ApprovalSignalKv.layer({ prefix })),
                Layer.provide(NatsTest)
              )
            ),
            ApprovalDesk
          )
          const approval = yield* gateway.request(ask)
          expect(approval).toMatchObject({ approval_id: APPROVAL_ID, status: "pending", tool: "delete_file" })
          expect(store.asked).toEqual([ask])
          const waiting = yield* Effect.fork(gateway.awaitDecision(approval))
          yield* Context.get(storeSide, ApprovalSignal).publish(APPROVAL_ID, "denied")
          expect(yield* Fiber.join(waiting).pipe(Effect.timeout("10 seconds"))).toBe("denied")
          yield* gateway.cancel(APPROVAL_ID)
          expect(store.cancelled).toEqual([APPROVAL_ID])
        })
      )
  )

  it.live("with no process serving, a request is refused (the call with it), not queued", () =>
    withPrefix((prefix) =>
      Effect.gen(function* () {
        const gateway = Context.get(
          yield* Layer.build(
            ApprovalDeskNats.layer({ prefix }).pipe(
              Layer.provide(ApprovalSignalKv.layer({ prefix })),
              Layer.provide(NatsTest)
            )
          ),
          ApprovalDesk
        )
        const error = yield* Effect.flip(gateway.request(ask))
        expect(error._tag).toBe("ApprovalUnavailable")
        expect(error.reason).toContain("no process that records approvals answered")
      })
    )
  )
})
