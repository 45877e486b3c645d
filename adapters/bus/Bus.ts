/**
 * The event bus between gateways and the actors in `streams/`. Subjects are dot-separated
 * (`candor.events.<partition>.<agent_id>`); a subscription takes every subject under a prefix.
 * `layerMemory` is the embedded default (one process); a JetStream layer joins when NATS_URL is set.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as PubSub from "effect/PubSub"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"

export interface BusMessage {
  readonly subject: string
  /** A JSON-serialisable value: the JetStream layer sends its JSON text. */
  readonly payload: unknown
}

export interface Subscription {
  /** The next message under the prefix, in publish order. */
  readonly take: Effect.Effect<BusMessage>
}

export class Bus extends Context.Tag("candor/Bus")<Bus, {
  readonly publish: (subject: string, payload: unknown) => Effect.Effect<void>
  /** Subscribed from the moment this effect completes until its scope closes. */
  readonly subscribe: (subjectPrefix: string) => Effect.Effect<Subscription, never, Scope.Scope>
}>() {
  /** In-process: one unbounded PubSub; every subscriber filters by prefix. */
  static readonly layerMemory: Layer.Layer<Bus> = Layer.effect(
    Bus,
    Effect.map(PubSub.unbounded<BusMessage>(), (hub) => ({
      publish: (subject, payload) => Effect.asVoid(PubSub.publish(hub, { subject, payload })),
      subscribe: (prefix) =>
        Effect.map(PubSub.subscribe(hub), (queue): Subscription => {
          const take: Effect.Effect<BusMessage> = Effect.flatMap(
            Queue.take(queue),
            (m) => (m.subject.startsWith(prefix) ? Effect.succeed(m) : take)
          )
          return { take }
        })
    }))
  )
}
