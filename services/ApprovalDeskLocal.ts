/**
 * The approval desk (adapters/bus/ApprovalDesk.ts) of a process with the store: the approvals
 * service itself. It serves the MCP proxy of its own process, and the requests of gateways that have
 * no store (over NATS: adapters/bus/ApprovalDeskNats.ts `serve`; over the embedded default's thread
 * bridge: adapters/bus/ThreadBridgeBackend.ts).
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import { ApprovalDesk, ApprovalUnavailable, untilExpiry } from "../adapters/bus/ApprovalDesk.js"
import { Approvals, layer as approvalsLayer } from "./Approvals.js"

export const make = Effect.map(Approvals, (approvals) =>
  ApprovalDesk.of({
    request: (ask) =>
      approvals
        .request({
          agent_id: ask.agent_id,
          org_id: ask.org_id,
          server_id: ask.server_id,
          tool: ask.tool,
          arguments_hash: ask.arguments_hash,
          reason: ask.reason,
          timeout: Duration.seconds(ask.timeout_seconds)
        })
        .pipe(
          Effect.mapError(
            (error) => new ApprovalUnavailable({ reason: `the approval could not be stored (${error._tag})` })
          )
        ),
    // The service's wait reads the store again on its own; a store failure is waited out (tried again
    // every second) until the approval expires, which denies the call.
    awaitDecision: (approval) =>
      untilExpiry(
        approval,
        approvals.awaitDecision(approval.approval_id).pipe(Effect.retry(Schedule.spaced("1 second")), Effect.orDie)
      ),
    cancel: (approvalId) =>
      approvals.cancel(approvalId).pipe(
        Effect.asVoid,
        // Already settled (decided or expired): nothing to withdraw. A store failure: the expiry settles it.
        Effect.catchAll(() => Effect.void)
      )
  })
)

/** The desk on the process's store, approval repository and signal. */
export const layer = Layer.effect(ApprovalDesk, make).pipe(Layer.provide(approvalsLayer))
