/**
 * Where the side holding a tool call (the MCP proxy, adapters/mcp/ApprovalHold.ts) asks for a person's
 * approval, waits for the decision and withdraws its request (docs/approvals.md). The approvals
 * live in the store, which a gateway does not open, so the desk is what reaches one:
 *
 * - in a process with the store: the approvals service itself (services/ApprovalDeskLocal.ts);
 * - on a split deployment: a NATS request to a process with the store, the wait on the approval's
 *   KV key (ApprovalDeskNats.ts);
 * - on the embedded default's gateway thread: the thread bridge (ThreadBridgeGateway.ts);
 * - nowhere to ask (a lone gateway without NATS): `layerNone`, which refuses every request, so a
 *   call that needs an approval is refused rather than passed.
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { Approval, ApprovalAsk } from "../../core/schema/Approval.js"
import type { FinalStatus } from "./ApprovalSignal.js"

/** No approval could be requested (no process with the store answered, or the store failed): the call is refused. */
export class ApprovalUnavailable extends Data.TaggedError("ApprovalUnavailable")<{ readonly reason: string }> {}

export class ApprovalDesk extends Context.Tag("candor/adapters/bus/ApprovalDesk")<
  ApprovalDesk,
  {
    /** A pending approval, stored with its `approval.requested` event. */
    readonly request: (ask: ApprovalAsk) => Effect.Effect<Approval, ApprovalUnavailable>
    /**
     * Its final status: when it is decided, cancelled or expires, and by its `expires_at` (plus a few
     * seconds of clock skew between processes) at the latest, `expired` then. Never fails: a desk
     * that cannot learn the decision waits out the expiry, and an expiry is a denial.
     */
    readonly awaitDecision: (approval: Approval) => Effect.Effect<FinalStatus>
    /** The holder gave up (the client cancelled or left): pending → cancelled. Best effort. */
    readonly cancel: (approvalId: string) => Effect.Effect<void>
  }
>() {
  /** Nowhere to ask: every request is refused (so is the call). */
  static readonly layerNone: Layer.Layer<ApprovalDesk> = Layer.succeed(
    ApprovalDesk,
    ApprovalDesk.of({
      request: () =>
        Effect.fail(new ApprovalUnavailable({ reason: "this gateway reaches no process that records approvals" })),
      awaitDecision: () => Effect.succeed("expired"),
      cancel: () => Effect.void
    })
  )
}

/** How long past `expires_at` a remote waiter still listens for the decision: clocks differ a little between processes. */
export const EXPIRY_SKEW_MS = 5_000

/** Waits for `wait` until the approval's `expires_at` plus the skew, `expired` after that. */
export const untilExpiry = (approval: Approval, wait: Effect.Effect<FinalStatus>): Effect.Effect<FinalStatus> =>
  Effect.flatMap(
    Effect.clockWith((clock) => clock.currentTimeMillis),
    (now) =>
      wait.pipe(
        Effect.timeoutTo({
          duration: Math.max(0, Date.parse(approval.expires_at) + EXPIRY_SKEW_MS - now),
          onTimeout: (): FinalStatus => "expired",
          onSuccess: (status) => status
        })
      )
  )
