/**
 * The gateway thread's side of the thread bridge (ThreadBridgeProtocol.ts): a `Bus`, an `AgentState`
 * and an `EventFeed` for a gateway whose store, actors and API run in another thread of the process.
 *
 * - `Bus.publish` joins the batch of the current event-loop turn (sent by `setImmediate`, or at once
 *   past MAX_BATCH events) and resolves once the backend's in-process bus has stored it, or fails with
 *   the bus's error: EventPublisher's back-pressure and retries work as on any bus. The gateway only
 *   publishes; consuming is the backend's.
 * - `AgentState` is a local copy (agents' and keys' settings), kept current by the backend: `get` is a map lookup, and the
 *   backend's `update` resolves only once this copy has applied it, so a change the API has answered
 *   is in force for the gateway's next request. Nudges are the gateway's own (it leaves them and
 *   takes them), kept here; the backend may leave one too. So are the tools' first sightings (the
 *   policy's grace period): this gateway is the process's only one, and the embedded default keeps
 *   nothing past its process, so they are new again after a restart (NATS keeps them: KvAgentState.ts).
 * - `EventFeed.publish` forwards to the backend's feed (blocked requests, policy violations).
 * - `ApprovalDesk` asks the backend's (the store's) desk; a wait is answered when the approval settles.
 *
 * When the backend thread is gone, publishes fail as a bus outage would (transient).
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as PubSub from "effect/PubSub"
import * as Stream from "effect/Stream"
import type { MessagePort } from "node:worker_threads"
import { fromSnapshot } from "../metrics/Prometheus.js"
import { ApprovalDesk, ApprovalUnavailable, untilExpiry } from "./ApprovalDesk.js"
import { type AgentSettings, AgentState, defaultKeySettings, defaultSettings, type KeySettings } from "./AgentState.js"
import { Bus } from "./Bus.js"
import type { BusService } from "./BusContract.js"
import { BusError } from "./BusError.js"
import { EventFeed } from "./EventFeed.js"
import {
  type ApprovalAnswer,
  type ApprovalCall,
  isGatewayFamily,
  type ToBackend,
  type ToGateway
} from "./ThreadBridgeProtocol.js"
import { ToolSightingsCopy } from "./ToolSightings.js"

/** Events per message at most: a burst is sent in slices rather than one huge string. */
const MAX_BATCH = 512

export interface GatewayBridgeOptions {
  /** The gateway's end of the channel; the backend thread holds the other. */
  readonly port: MessagePort
  /** P, as the backend's bus has it (the subjects name the partition). */
  readonly partitions: number
}

type Resume = (effect: Effect.Effect<void, BusError>) => void

const stopped = (operation: string) =>
  new BusError({ operation, cause: "the backend thread has stopped", permanent: false })

const make = ({ partitions, port }: GatewayBridgeOptions) =>
  Effect.gen(function* () {
    const settings = new Map<string, AgentSettings>()
    const keys = new Map<string, KeySettings>()
    const nudges = new Map<string, string>()
    const tools = new ToolSightingsCopy()
    const changed = yield* PubSub.unbounded<string>()
    /** Publishes (bus and feed) sent and not yet answered, by id. */
    const waiting = new Map<number, Resume>()
    /** Approval desk calls sent and not yet answered, by id. */
    const deskCalls = new Map<number, (answer: ApprovalAnswer) => void>()
    let nextId = 0
    let closed = false
    let ids: Array<number> = []
    let entries: Array<readonly [string, unknown, string | null] | readonly [string, unknown, string | null, string]> =
      []
    let scheduled = false

    const post = (message: ToBackend) => port.postMessage(message)

    const flush = () => {
      scheduled = false
      if (ids.length === 0) return
      const batchIds = ids
      const batch = entries
      ids = []
      entries = []
      let json: string
      try {
        json = JSON.stringify(batch)
      } catch {
        // One payload JSON cannot encode (a bigint, a cycle): refuse that one, send the others.
        const kept: Array<number> = []
        const parts: Array<string> = []
        batch.forEach((entry, i) => {
          try {
            parts.push(JSON.stringify(entry))
            kept.push(batchIds[i]!)
          } catch (cause) {
            answer(batchIds[i]!, Effect.fail(new BusError({ operation: "publish", cause, permanent: true })))
          }
        })
        if (kept.length > 0) post({ _tag: "Publish", ids: kept, json: `[${parts.join(",")}]` })
        return
      }
      post({ _tag: "Publish", ids: batchIds, json })
    }

    const answer = (id: number, effect: Effect.Effect<void, BusError>) => {
      const resume = waiting.get(id)
      waiting.delete(id)
      resume?.(effect)
    }

    const onMessage = (message: ToGateway) => {
      switch (message._tag) {
        case "Stored": {
          for (const id of message.ids) answer(id, Effect.void)
          for (const failure of message.failures)
            answer(
              failure.id,
              Effect.fail(new BusError({ operation: "publish", cause: failure.message, permanent: failure.permanent }))
            )
          return
        }
        case "Settings": {
          settings.set(message.agentId, message.settings)
          Effect.runSync(PubSub.publish(changed, message.agentId))
          post({ _tag: "Applied", id: message.id })
          return
        }
        case "KeySettings": {
          keys.set(message.keyHash, message.settings)
          post({ _tag: "Applied", id: message.id })
          return
        }
        case "Nudge": {
          nudges.set(message.agentId, message.text)
          return
        }
        case "Metrics": {
          const families = fromSnapshot(Metric.unsafeSnapshot()).filter((family) => isGatewayFamily(family.name))
          post({ _tag: "Families", id: message.id, families })
          return
        }
        case "ApprovalAnswer": {
          const resume = deskCalls.get(message.id)
          deskCalls.delete(message.id)
          resume?.(message.answer)
          return
        }
      }
    }
    const onClose = () => {
      closed = true
      for (const id of Array.from(waiting.keys())) answer(id, Effect.fail(stopped("publish")))
      for (const resume of deskCalls.values()) resume({ error: "the backend thread has stopped" })
      deskCalls.clear()
    }
    port.on("message", onMessage)
    port.on("close", onClose)
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        flush()
        port.off("message", onMessage)
        port.off("close", onClose)
        port.close()
        onClose()
      })
    )

    /** Sends now (`immediate`) or with the turn's batch; resolves when the backend answers. */
    const send = (enqueue: (id: number) => void, immediate: boolean, operation: string) =>
      Effect.async<void, BusError>((resume) => {
        if (closed) return resume(Effect.fail(stopped(operation)))
        const id = nextId++
        waiting.set(id, resume)
        enqueue(id)
        if (immediate || ids.length >= MAX_BATCH) flush()
        else if (!scheduled) {
          scheduled = true
          setImmediate(flush)
        }
        // Interrupted: no longer waited for (the backend may still store it; publishes are idempotent by msgId).
        return Effect.sync(() => void waiting.delete(id))
      })

    const bus: BusService = {
      partitions,
      publish: (subject, payload, options) =>
        send(
          (id) => {
            ids.push(id)
            const traceparent = options?.traceparent
            entries.push(
              traceparent === undefined
                ? [subject, payload, options?.msgId ?? null]
                : [subject, payload, options?.msgId ?? null, traceparent]
            )
          },
          false,
          "publish"
        ),
      consumePartition: () => Stream.dieMessage("the gateway thread consumes no partition: the backend thread does"),
      consumeDeadLetters: Stream.dieMessage("dead letters are recorded on the backend thread"),
      subscribe: () => Effect.dieMessage("subscribe on the backend thread's bus")
    }

    const agentState: AgentState["Type"] = {
      get: (agentId) => Effect.sync(() => settings.get(agentId) ?? defaultSettings),
      // A local copy: the gateway's synchronous fast path reads it without a fiber.
      peek: (agentId) => settings.get(agentId) ?? defaultSettings,
      peekKey: (keyHash) => keys.get(keyHash) ?? defaultKeySettings,
      nudgePending: (agentId) => nudges.has(agentId),
      toolsFirstSeen: (agentId) => tools.lookup(agentId),
      noteTools: (agentId, seen, nowMs) => void tools.note(agentId, seen, nowMs),
      update: () => Effect.dieMessage("agent settings are changed on the backend thread"),
      // The gateway's own changes (MCP tool pins): applied here at once, then by the backend, which
      // pushes the result back (what the backend already held, merged).
      updateKey: (keyHash, patch) =>
        Effect.suspend(() => {
          keys.set(keyHash, { ...(keys.get(keyHash) ?? defaultKeySettings), ...patch })
          return send((id) => post({ _tag: "KeyPatch", id, keyHash, patch }), true, "key settings")
        }),
      takeNudge: (agentId) =>
        Effect.sync(() => {
          const text = nudges.get(agentId)
          nudges.delete(agentId)
          return text
        }),
      setNudge: (agentId, text) => Effect.sync(() => void nudges.set(agentId, text)),
      subscribeChanges: PubSub.subscribe(changed)
    }

    const feed: EventFeed["Type"] = {
      publish: (envelope) => send((id) => post({ _tag: "Feed", id, envelope }), true, "feed publish"),
      read: () => Effect.dieMessage("the feed is read on the backend thread"),
      consume: () => Stream.dieMessage("the feed is consumed on the backend thread")
    }

    /** One call to the backend's desk; interrupted, its answer is dropped when it comes. */
    const callDesk = (call: ApprovalCall) =>
      Effect.async<ApprovalAnswer>((resume) => {
        if (closed) return resume(Effect.succeed({ error: "the backend thread has stopped" }))
        const id = nextId++
        deskCalls.set(id, (answer) => resume(Effect.succeed(answer)))
        post({ _tag: "ApprovalCall", id, call })
        return Effect.sync(() => void deskCalls.delete(id))
      })

    const desk = ApprovalDesk.of({
      request: (ask) =>
        Effect.flatMap(callDesk({ op: "request", ask }), (answer) =>
          "approval" in answer
            ? Effect.succeed(answer.approval)
            : Effect.fail(new ApprovalUnavailable({ reason: "error" in answer ? answer.error : "no approval" }))
        ),
      // The backend's wait ends by the expiry too; this bound holds if the backend stops meanwhile.
      awaitDecision: (approval) =>
        untilExpiry(
          approval,
          Effect.flatMap(callDesk({ op: "await", approval }), (answer) =>
            "status" in answer ? Effect.succeed(answer.status) : Effect.never
          )
        ),
      cancel: (approvalId) => Effect.asVoid(callDesk({ op: "cancel", approvalId }))
    })

    return { bus, agentState, feed, desk }
  })

/** Bus, AgentState, EventFeed and ApprovalDesk over `port`, until the scope closes (then the port is closed). */
export const layer = (options: GatewayBridgeOptions): Layer.Layer<Bus | AgentState | EventFeed | ApprovalDesk> =>
  Layer.scopedContext(
    Effect.map(make(options), ({ agentState, bus, desk, feed }) =>
      Context.make(Bus, bus).pipe(
        Context.add(AgentState, agentState),
        Context.add(EventFeed, feed),
        Context.add(ApprovalDesk, desk)
      )
    )
  )
