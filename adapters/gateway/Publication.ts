/**
 * What the gateway publishes of its own decisions, beside the response events.
 *
 * Every act of enforcement is an enforcement record (core/EnforcementRecords.ts): each 403 and each
 * nudge injected is published with the agent's events (`GatewayEnforcement`, EventPublisher.ts), so
 * it is stored at least once, held through a bus outage like a checkpoint. A contained agent's
 * refusals past 10 a second are answered 429 and counted instead (ContainedRefusals.ts).
 *
 * The gateway announces what it decides on its own: `enforcement.blocked` for every 403 it answers
 * (containment, tool policy, an enforce-mode boundary violation) and `policy.violation` when the
 * request's declared tools break the policy (warn or fail). Each is published to the `EventFeed`
 * on a fiber of its own, never on the client's path: a feed that is slow or down delays and fails
 * no answer (a failed publish is logged, without content). A process built without a feed announces nothing.
 */
import * as Cause from "effect/Cause"
import type * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as FiberSet from "effect/FiberSet"
import * as Option from "effect/Option"
import { randomUUID } from "node:crypto"
import { blockedEvent, type GatewayBlock } from "../../core/EventData.js"
import { blockedRecord } from "../../core/EnforcementRecords.js"
import { type EventOccurrence, newEnvelope } from "../../core/Events.js"
import type { AgentSettings } from "../bus/AgentState.js"
import { EventFeed } from "../bus/EventFeed.js"
import type { EventPublisher } from "./EventPublisher.js"

/** A loggable name for an unknown failure, never its message. */
export const errorKind = (error: unknown): string =>
  typeof error === "object" && error !== null && "_tag" in error
    ? String(error._tag)
    : error instanceof Error
      ? error.name
      : typeof error

/** A failure of the analysis, logged by its kind. */
export const logFailure = (cause: Cause.Cause<unknown>) =>
  // Only the error's kind: messages of parse errors can quote the text they failed on (thinking).
  Effect.logWarning("gateway analysis failed").pipe(Effect.annotateLogs({ error: errorKind(Cause.squash(cause)) }))

/** Announces the gateway's decisions and records its 403s; the announcements' fibers live as long as the scope. */
export const makePublication = (publish: EventPublisher["publish"], clock: Clock.Clock) =>
  Effect.gen(function* () {
    const feed = yield* Effect.serviceOption(EventFeed)
    /** Catalogue events on their way to the feed, each on its own fiber. */
    const announcements = yield* FiberSet.make<void>()

    /** Publishes an event off the caller's path: never waited on, a failure only logged (its kind, not the event). */
    const announce = (occurrence: EventOccurrence | undefined): Effect.Effect<void> =>
      Option.isNone(feed) || occurrence === undefined
        ? Effect.void
        : FiberSet.run(
            announcements,
            feed.value.publish(newEnvelope(occurrence)).pipe(
              Effect.catchAllCause((cause) =>
                Effect.logWarning("gateway event not published").pipe(
                  Effect.annotateLogs({
                    type: occurrence.type,
                    agent_id: occurrence.agent_id,
                    error: errorKind(Cause.squash(cause))
                  })
                )
              )
            )
          ).pipe(Effect.asVoid)

    /** A 403: its enforcement record, published with the agent's events (at least once), then announced. */
    const blocked = (settings: AgentSettings, block: GatewayBlock) =>
      Effect.suspend(() => {
        const uuid = randomUUID()
        const at = new Date(clock.unsafeCurrentTimeMillis())
        return Effect.zipRight(
          publish(block.agentId, {
            type: "gateway.enforcement",
            mode: settings.mode,
            record: blockedRecord(block, uuid, at)
          }),
          announce(blockedEvent(block, uuid, settings.orgId ?? null, at))
        )
      })

    return { announce, blocked }
  })
