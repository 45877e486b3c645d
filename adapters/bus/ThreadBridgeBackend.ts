/**
 * The backend thread's side of the thread bridge (ThreadBridgeProtocol.ts), in two layers because
 * they are needed at two depths of the backend's layers:
 *
 * - `agentStateLayer`: the backend's `AgentState` (the in-process one) whose changes (agents' and
 *   keys' settings) are also pushed to the gateway thread's copy: `update` resolves once the gateway has applied it, so what the API
 *   has answered is in force for the gateway's next request. Nudges left here go to the gateway, which
 *   takes them. It also answers `GatewayThreadMetrics` (the gateway's metrics for `/metrics`), and it
 *   starts listening on the port: publishes that arrive before `serveLayer` is built wait in a queue.
 * - `serveLayer`: stores the gateway's publishes in the backend's bus and feed, one batch after the
 *   other in arrival order (each agent's events stay in response order), and answers which were stored.
 *   It also answers the MCP proxy's approval desk calls with the store's desk, each on a fiber of its
 *   own (a wait lasts until the approval settles: it must not hold up the publishes).
 *
 * When the gateway's end closes, changes are applied here only and metrics come back empty.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import type { MessagePort } from "node:worker_threads"
import type { WebhookEnvelope } from "../../core/schema/WebhookEvents.js"
import type { Family } from "../metrics/Prometheus.js"
import * as Schema from "effect/Schema"
import { AgentState, KeySettings } from "./AgentState.js"
import { Bus } from "./Bus.js"
import { EventFeed } from "./EventFeed.js"
import * as FiberSet from "effect/FiberSet"
import { ApprovalAsk } from "../../core/schema/Approval.js"
import { ApprovalDesk } from "./ApprovalDesk.js"
import type { ApprovalAnswer, ApprovalCall, PublishFailure, ToBackend, ToGateway } from "./ThreadBridgeProtocol.js"

/** The gateway thread's metric families, asked for at scrape time. */
export class GatewayThreadMetrics extends Context.Tag("candor/adapters/bus/GatewayThreadMetrics")<
  GatewayThreadMetrics,
  Effect.Effect<ReadonlyArray<Family>>
>() {}

/** Publishes from the gateway waiting to be stored, in arrival order. */
export class ThreadBridgeInbox extends Context.Tag("candor/adapters/bus/ThreadBridgeInbox")<
  ThreadBridgeInbox,
  Queue.Queue<Inbound>
>() {}

/** A gateway's patch is decoded like any stored key settings, never cast. */
const decodeKeyPatch = Schema.decodeUnknownEither(Schema.partialWith(KeySettings, { exact: true }))

const post = (port: MessagePort, message: ToGateway) => port.postMessage(message)

/** What the gateway sends to be done in order (publishes, catalogue events, its changes of key settings), and its desk calls. */
type Inbound = Extract<ToBackend, { _tag: "Publish" | "Feed" | "KeyPatch" | "ApprovalCall" }>

/** An ask is decoded like any input of the desk, never cast. */
const decodeAsk = Schema.decodeUnknownEither(ApprovalAsk)

export const agentStateLayer = (
  port: MessagePort
): Layer.Layer<AgentState | GatewayThreadMetrics | ThreadBridgeInbox> =>
  Layer.scopedContext(
    Effect.gen(function* () {
      const local = yield* Effect.provide(AgentState, AgentState.layerMemory)
      const inbox = yield* Queue.unbounded<Inbound>()
      const applied = new Map<number, () => void>()
      const scraped = new Map<number, (families: ReadonlyArray<Family>) => void>()
      let nextId = 0
      let closed = false

      const onMessage = (message: ToBackend) => {
        switch (message._tag) {
          case "Publish":
          case "Feed":
          case "KeyPatch":
          case "ApprovalCall":
            Queue.unsafeOffer(inbox, message)
            return
          case "Applied": {
            applied.get(message.id)?.()
            applied.delete(message.id)
            return
          }
          case "Families": {
            scraped.get(message.id)?.(message.families)
            scraped.delete(message.id)
            return
          }
        }
      }
      const onClose = () => {
        closed = true
        for (const done of applied.values()) done()
        for (const done of scraped.values()) done([])
        applied.clear()
        scraped.clear()
      }
      port.on("message", onMessage)
      port.on("close", onClose)
      yield* Effect.addFinalizer(() =>
        Effect.sync(() => {
          port.off("message", onMessage)
          port.off("close", onClose)
          port.close()
          onClose()
        })
      )

      /** Sends the agent's settings as they are now; resolves once the gateway's copy has them. */
      const pushSettings = (agentId: string) =>
        Effect.flatMap(local.get(agentId), (settings) =>
          Effect.async<void>((resume) => {
            if (closed) return resume(Effect.void)
            const id = nextId++
            applied.set(id, () => resume(Effect.void))
            post(port, { _tag: "Settings", id, agentId, settings })
            return Effect.sync(() => void applied.delete(id))
          })
        )

      /** Sends the key's settings as they are now; resolves once the gateway's copy has them. */
      const pushKeySettings = (keyHash: string) =>
        Effect.async<void>((resume) => {
          if (closed) return resume(Effect.void)
          const id = nextId++
          applied.set(id, () => resume(Effect.void))
          post(port, { _tag: "KeySettings", id, keyHash, settings: local.peekKey(keyHash) })
          return Effect.sync(() => void applied.delete(id))
        })

      const agentState: AgentState["Type"] = {
        ...local,
        update: (agentId, patch) => Effect.zipRight(local.update(agentId, patch), pushSettings(agentId)),
        updateKey: (keyHash, patch) => Effect.zipRight(local.updateKey(keyHash, patch), pushKeySettings(keyHash)),
        setNudge: (agentId, text) =>
          Effect.zipRight(
            local.setNudge(agentId, text),
            Effect.sync(() => (closed ? undefined : post(port, { _tag: "Nudge", agentId, text })))
          )
      }

      const gatewayMetrics = Effect.async<ReadonlyArray<Family>>((resume) => {
        if (closed) return resume(Effect.succeed([]))
        const id = nextId++
        scraped.set(id, (families) => resume(Effect.succeed(families)))
        post(port, { _tag: "Metrics", id })
        return Effect.sync(() => void scraped.delete(id))
      }).pipe(
        // A gateway too busy to answer within a scrape's patience leaves its series out of this one.
        Effect.timeoutTo({ duration: "1 second", onTimeout: () => [], onSuccess: (families) => families })
      )

      return Context.make(AgentState, agentState).pipe(
        Context.add(GatewayThreadMetrics, gatewayMetrics),
        Context.add(ThreadBridgeInbox, inbox)
      )
    })
  )

export const serveLayer = (
  port: MessagePort
): Layer.Layer<never, never, Bus | EventFeed | ThreadBridgeInbox | AgentState | ApprovalDesk> =>
  Layer.scopedDiscard(
    Effect.gen(function* () {
      const bus = yield* Bus
      const feed = yield* EventFeed
      const inbox = yield* ThreadBridgeInbox
      const state = yield* AgentState
      const desk = yield* ApprovalDesk
      const deskCalls = yield* FiberSet.make<void>()

      const answerDesk = (call: ApprovalCall): Effect.Effect<ApprovalAnswer> => {
        switch (call.op) {
          case "request":
            return Either.match(decodeAsk(call.ask), {
              onLeft: () => Effect.succeed<ApprovalAnswer>({ error: "not an approval request" }),
              onRight: (ask) =>
                desk.request(ask).pipe(
                  Effect.map((approval): ApprovalAnswer => ({ approval })),
                  Effect.catchAll((error) => Effect.succeed<ApprovalAnswer>({ error: error.reason }))
                )
            })
          case "await":
            return Effect.map(desk.awaitDecision(call.approval), (status): ApprovalAnswer => ({ status }))
          case "cancel":
            return Effect.as(desk.cancel(call.approvalId), { cancelled: true } as const)
        }
      }

      const store = (ids: ReadonlyArray<number>, attempts: ReadonlyArray<Effect.Effect<void, unknown>>) =>
        Effect.gen(function* () {
          const stored: Array<number> = []
          const failures: Array<PublishFailure> = []
          for (let i = 0; i < attempts.length; i++) {
            const result = yield* Effect.either(attempts[i]!)
            if (Either.isRight(result)) stored.push(ids[i]!)
            else {
              const error = result.left as { message?: unknown; permanent?: unknown }
              failures.push({
                id: ids[i]!,
                message: String(error.message ?? error),
                permanent: error.permanent === true
              })
            }
          }
          post(port, { _tag: "Stored", ids: stored, failures })
        })

      const handle = (message: Inbound) => {
        if (message._tag === "ApprovalCall")
          return FiberSet.run(
            deskCalls,
            Effect.map(answerDesk(message.call), (answer) =>
              post(port, { _tag: "ApprovalAnswer", id: message.id, answer })
            )
          )
        if (message._tag === "Feed") return store([message.id], [feed.publish(message.envelope as WebhookEnvelope)])
        if (message._tag === "KeyPatch") {
          const patch = decodeKeyPatch(message.patch)
          return store(
            [message.id],
            [Either.isRight(patch) ? state.updateKey(message.keyHash, patch.right) : Effect.fail(patch.left)]
          )
        }
        const entries = JSON.parse(message.json) as ReadonlyArray<
          readonly [string, unknown, string | null, (string | undefined)?]
        >
        return store(
          message.ids,
          entries.map(([subject, payload, msgId, traceparent]) =>
            bus.publish(
              subject,
              payload,
              msgId === null ? undefined : traceparent === undefined ? { msgId } : { msgId, traceparent }
            )
          )
        )
      }

      yield* Queue.take(inbox).pipe(Effect.flatMap(handle), Effect.forever, Effect.forkScoped)
    })
  )
