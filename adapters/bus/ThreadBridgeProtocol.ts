/**
 * The messages of the thread bridge (ThreadBridgeGateway.ts, ThreadBridgeBackend.ts): on the
 * embedded default the gateway runs on the process's main thread and everything else (API, workers,
 * prover, PGlite, event feed) in a worker thread; one MessagePort between them carries the gateway's
 * publishes to the backend's in-process bus and feed, the backend's agent-state changes to the
 * gateway's local copy, and the MCP proxy's calls to the approval desk (ApprovalDesk.ts).
 *
 * Why a raw MessagePort and not @effect/platform's Worker/WorkerRunner (which the prover uses): those
 * are a request/response pool, each request a fiber and a Schema-encoded message on either side. The
 * bridge carries every gateway event, so it batches them (one message per event-loop turn, events as
 * one JSON string) to keep the gateway's cost per event at a few microseconds, and it also pushes
 * state the other way (settings, nudges), which a request/response pool does not do.
 */
import type { Approval, ApprovalAsk } from "../../core/schema/Approval.js"
import type { Family } from "../metrics/Prometheus.js"
import type { AgentSettings, KeySettings } from "./AgentState.js"
import type { FinalStatus } from "./ApprovalSignal.js"

/** What the gateway's MCP proxy asks of the backend's approval desk (ApprovalDesk.ts), one call each. */
export type ApprovalCall =
  | { readonly op: "request"; readonly ask: ApprovalAsk }
  | { readonly op: "await"; readonly approval: Approval }
  | { readonly op: "cancel"; readonly approvalId: string }

/** The desk's answer: the approval requested, the final status awaited, a cancellation done, or why not. */
export type ApprovalAnswer =
  | { readonly approval: Approval }
  | { readonly status: FinalStatus }
  | { readonly cancelled: true }
  | { readonly error: string }

/** Gateway → backend. */
export type ToBackend =
  /** Bus publishes `ids[i]` ↔ `JSON.parse(json)[i]`, each `[subject, payload, msgId | null]`, plus its `traceparent` when it has one. */
  | { readonly _tag: "Publish"; readonly ids: ReadonlyArray<number>; readonly json: string }
  /** A catalogue event for the feed (rare: blocked requests and policy violations), structured-cloned. */
  | { readonly _tag: "Feed"; readonly id: number; readonly envelope: unknown }
  /**
   * A change of a key's settings made by the gateway (an MCP server's tool pins), applied by the
   * backend's state (which pushes the result back as `KeySettings`) and answered with `Stored`.
   */
  | { readonly _tag: "KeyPatch"; readonly id: number; readonly keyHash: string; readonly patch: unknown }
  /** The settings change (an agent's or a key's) numbered `id` is in the gateway's copy. */
  | { readonly _tag: "Applied"; readonly id: number }
  /** The answer to `Metrics`: the gateway thread's own metric families. */
  | { readonly _tag: "Families"; readonly id: number; readonly families: ReadonlyArray<Family> }
  /** A call to the backend's approval desk, answered with `ApprovalAnswer` (an `await` when the approval settles). */
  | { readonly _tag: "ApprovalCall"; readonly id: number; readonly call: ApprovalCall }

/** Why one publish failed, in terms the gateway side turns back into a BusError. */
export interface PublishFailure {
  readonly id: number
  readonly message: string
  readonly permanent: boolean
}

/** Backend → gateway. */
export type ToGateway =
  /** Publishes (bus or feed) stored, except `failures`. */
  | { readonly _tag: "Stored"; readonly ids: ReadonlyArray<number>; readonly failures: ReadonlyArray<PublishFailure> }
  /**
   * The agent's whole settings after a change, answered with `Applied`. Structured-cloned as they
   * are: AgentSettings is plain data (strings, numbers, arrays, objects), as the KV stores it.
   */
  | { readonly _tag: "Settings"; readonly id: number; readonly agentId: string; readonly settings: AgentSettings }
  /** A provider key's whole settings after a change (by its hash), answered with `Applied` likewise. */
  | { readonly _tag: "KeySettings"; readonly id: number; readonly keyHash: string; readonly settings: KeySettings }
  | { readonly _tag: "Nudge"; readonly agentId: string; readonly text: string }
  /** A `/metrics` scrape on the backend wants the gateway thread's metrics. */
  | { readonly _tag: "Metrics"; readonly id: number }
  | { readonly _tag: "ApprovalAnswer"; readonly id: number; readonly answer: ApprovalAnswer }

/** The gateway's metric families that `/metrics` (served by the backend) shows beside its own. */
export const isGatewayFamily = (name: string): boolean => name.startsWith("candor_gateway_")
