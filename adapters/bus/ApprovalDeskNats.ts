/**
 * The approval desk (ApprovalDesk.ts) on a split deployment, where the MCP proxy runs in a gateway
 * without the store: a request or a cancellation is a NATS request on `<prefix>.approvals.desk`,
 * answered by one of the processes with the store (`serve`, in the api and worker roles, as one
 * queue group); the wait is the approval's KV key (ApprovalSignalKv.ts), bounded by its expiry.
 *
 * Core NATS request/reply, not JetStream: a request nobody answers within REQUEST_TIMEOUT is
 * refused (the call with it), never queued for later, since the agent is waiting on the other end.
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FiberSet from "effect/FiberSet"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { Approval, ApprovalAsk, ApprovalId } from "../../core/schema/Approval.js"
import { ApprovalDesk, ApprovalUnavailable, untilExpiry } from "./ApprovalDesk.js"
import { ApprovalSignal } from "./ApprovalSignal.js"
import { NatsConnection } from "./NatsConnection.js"
import { approvalDeskSubject, DEFAULT_PREFIX } from "./Subjects.js"

/** How long a gateway waits for a process with the store to take its request. */
const REQUEST_TIMEOUT_MS = 5_000
const QUEUE_GROUP = "candor-approval-desk"

const DeskCall = Schema.Union(
  Schema.Struct({ op: Schema.Literal("request"), ask: ApprovalAsk }),
  Schema.Struct({ op: Schema.Literal("cancel"), approval_id: ApprovalId })
)
type DeskCall = typeof DeskCall.Type

const DeskReply = Schema.Union(
  Schema.Struct({ approval: Approval }),
  Schema.Struct({ cancelled: Schema.Literal(true) }),
  Schema.Struct({ error: Schema.String })
)
type DeskReply = typeof DeskReply.Type

const decodeCall = Schema.decodeUnknownEither(Schema.parseJson(DeskCall))
const decodeReply = Schema.decodeUnknownEither(Schema.parseJson(DeskReply))

export interface ApprovalDeskNatsOptions {
  /** CANDOR_NATS_PREFIX. */
  readonly prefix?: string
}

/** The gateway's desk: requests over NATS, the wait on the approval's KV key. */
export const layer = (
  options: ApprovalDeskNatsOptions = {}
): Layer.Layer<ApprovalDesk, never, NatsConnection | ApprovalSignal> =>
  Layer.effect(
    ApprovalDesk,
    Effect.gen(function* () {
      const nc = yield* NatsConnection
      const signal = yield* ApprovalSignal
      const subject = approvalDeskSubject(options.prefix ?? DEFAULT_PREFIX)
      const ask = (call: DeskCall) =>
        Effect.tryPromise({
          try: () => nc.request(subject, JSON.stringify(call), { timeout: REQUEST_TIMEOUT_MS }),
          catch: (cause) =>
            new ApprovalUnavailable({
              reason: `no process that records approvals answered (${cause instanceof Error ? cause.message : "no answer"})`
            })
        }).pipe(
          Effect.flatMap((message) =>
            Either.match(decodeReply(message.string()), {
              onLeft: () =>
                Effect.fail(new ApprovalUnavailable({ reason: "the approval desk's answer was unreadable" })),
              onRight: Effect.succeed
            })
          )
        )
      return ApprovalDesk.of({
        request: (input) =>
          Effect.flatMap(ask({ op: "request", ask: input }), (reply) =>
            "approval" in reply
              ? Effect.succeed(reply.approval)
              : Effect.fail(new ApprovalUnavailable({ reason: "error" in reply ? reply.error : "no approval" }))
          ),
        // The KV watch sees a decision made before the wait began too; the expiry bounds a lost one.
        awaitDecision: (approval) => untilExpiry(approval, signal.wait(approval.approval_id)),
        cancel: (approvalId) => Effect.ignore(ask({ op: "cancel", approval_id: approvalId }))
      })
    })
  )

const replyBytes = (reply: DeskReply): string => JSON.stringify(reply)

/**
 * Answers the gateways' requests with this process's desk (the store's), as one of a queue group:
 * each request is answered by one process. Until the scope closes.
 */
export const serve = (
  options: ApprovalDeskNatsOptions = {}
): Layer.Layer<never, never, NatsConnection | ApprovalDesk> =>
  Layer.scopedDiscard(
    Effect.gen(function* () {
      const nc = yield* NatsConnection
      const desk = yield* ApprovalDesk
      const running = yield* FiberSet.make<void>()
      const run = yield* FiberSet.runtime(running)<never>()
      const answer = (call: DeskCall): Effect.Effect<DeskReply> =>
        call.op === "request"
          ? desk.request(call.ask).pipe(
              Effect.map((approval): DeskReply => ({ approval })),
              Effect.catchAll((error) => Effect.succeed<DeskReply>({ error: error.reason }))
            )
          : Effect.as(desk.cancel(call.approval_id), { cancelled: true } as const)
      yield* Effect.acquireRelease(
        Effect.sync(() =>
          nc.subscribe(approvalDeskSubject(options.prefix ?? DEFAULT_PREFIX), {
            queue: QUEUE_GROUP,
            callback: (error, message) => {
              if (error !== null) return
              const call = decodeCall(message.string())
              run(
                Either.match(call, {
                  onLeft: () => Effect.succeed<DeskReply>({ error: "not an approval desk request" }),
                  onRight: answer
                }).pipe(Effect.map((reply) => void message.respond(replyBytes(reply))))
              )
            }
          })
        ),
        (subscription) => Effect.sync(() => subscription.unsubscribe())
      )
      yield* Effect.promise(() => nc.flush())
    })
  )
