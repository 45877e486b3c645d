/**
 * What the MCP gateway publishes of its own decisions: enforcement records with the agent's events
 * (stored at least once by the workers), catalogue events on the `EventFeed` when the process has
 * one, each started after what the caller is doing now and never on the request's path (a failure
 * only logged, by its kind).
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as FiberSet from "effect/FiberSet"
import * as Option from "effect/Option"
import { randomUUID } from "node:crypto"
import { blockedRecord } from "../../core/EnforcementRecords.js"
import { blockedEvent, type GatewayBlock } from "../../core/EventData.js"
import { type EventOccurrence, newEnvelope } from "../../core/Events.js"
import type { EventFeed } from "../bus/EventFeed.js"
import type { EventPublisher } from "../gateway/EventPublisher.js"
import { type Caller, errorKind, PROVIDER, type ProxyContext } from "./ProxyContext.js"

export interface PublicationOptions {
  readonly feed: Option.Option<EventFeed["Type"]>
  readonly publisher: EventPublisher
  /** The catalogue events' fibers, which live as long as the gateway's scope. */
  readonly announcements: FiberSet.FiberSet<void>
  readonly runAfter: ProxyContext["runAfter"]
  readonly now: () => Date
}

export const makePublication = ({
  announcements,
  feed,
  now,
  publisher,
  runAfter
}: PublicationOptions): Pick<ProxyContext, "logged" | "announce" | "record" | "blocked"> => {
  const logged = (effect: Effect.Effect<void, unknown>, what: string) =>
    effect.pipe(
      Effect.catchAllCause((cause) =>
        Effect.logWarning(what).pipe(Effect.annotateLogs({ error: errorKind(Cause.squash(cause)) }))
      )
    )

  /** A catalogue event, off the request's path (the feed slow or down delays nothing). */
  const announce = (occurrence: EventOccurrence | undefined) => {
    if (Option.isNone(feed) || occurrence === undefined) return
    runAfter(
      FiberSet.run(
        announcements,
        logged(feed.value.publish(newEnvelope(occurrence)), "MCP gateway event not published")
      )
    )
  }

  /** An enforcement record, published with the agent's events (stored at least once by the workers). */
  const record = (caller: Caller, message: Parameters<typeof publisher.publish>[1]) =>
    runAfter(logged(publisher.publish(caller.agentId, message), "MCP gateway record not published"))

  const blocked = (caller: Caller, rule: GatewayBlock["rule"], reason: string, checkpointId: string | null = null) => {
    const uuid = randomUUID()
    const at = now()
    const block: GatewayBlock = {
      agentId: caller.agentId,
      sessionId: null,
      provider: PROVIDER,
      rule,
      reason,
      checkpointId
    }
    record(caller, {
      type: "gateway.enforcement",
      mode: caller.settings.mode,
      record: blockedRecord(block, uuid, at)
    })
    announce(blockedEvent(block, uuid, caller.orgId, at))
  }

  return { logged, announce, record, blocked }
}
