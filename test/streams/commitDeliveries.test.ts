/**
 * One partition batch through `commitDeliveries`, on the real store (PGlite): first deliveries are
 * committed without looking up stored ids, a duplicate among them is still caught (and acked, not
 * committed twice), and a batch the store cannot take is handed back with a redelivery delay that
 * grows with each delivery, so an outage is waited out rather than dead-lettered.
 */
import { layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { expect } from "vitest"
import { generateSigningKey } from "../../core/signing.js"
import type { Delivery } from "../../adapters/bus/Bus.js"
import { eventSubject } from "../../adapters/bus/subjects.js"
import * as PgliteClient from "../../adapters/store/PgliteClient.js"
import * as SqlStore from "../../adapters/store/SqlStore.js"
import { Store, StoreError } from "../../adapters/store/Store.js"
import { migrated } from "../../adapters/store/StoreLive.js"
import { defaultActorsOptions, makeAgentActors } from "../../streams/AgentActors.js"
import { commitDeliveries, type CommitOptions } from "../../streams/commitDeliveries.js"
import { gatewayEvent } from "../support/events.js"

const options: CommitOptions = {
  key: generateSigningKey(),
  logOrigin: "candor.test",
  subjectPrefix: "candor",
  conflictRetries: 3,
  retryDelayMs: 1_000
}

interface Settled {
  acked: number
  naks: Array<number | undefined>
}

/** A delivery of `payload` that counts how it was settled. */
const deliveryOf = (payload: ReturnType<typeof gatewayEvent>, settled: Settled, deliveryCount = 1): Delivery => ({
  subject: eventSubject(payload.agent_id),
  payload: JSON.parse(JSON.stringify(payload)),
  deliveryCount,
  ack: Effect.sync(() => void settled.acked++),
  nak: (delayMs) => Effect.sync(() => void settled.naks.push(delayMs))
})

const noDeadLetter = () => Effect.die("no event here is invalid")

const Pglite = SqlStore.layer.pipe(Layer.provideMerge(migrated(PgliteClient.layer())))

layer(Pglite, { timeout: "60 seconds" })("commitDeliveries", (it) => {
  it.scoped("commits first deliveries and catches a duplicate among them", () =>
    Effect.gen(function*() {
      const actors = yield* makeAgentActors(defaultActorsOptions)
      const agentId = "agt-cd-dup"
      const first = gatewayEvent(agentId)
      const settled: Settled = { acked: 0, naks: [] }
      expect(yield* commitDeliveries(actors, [deliveryOf(first, settled)], options, noDeadLetter))
        .toEqual({ committed: 1, duplicates: 0, invalid: 0, retried: 0 })
      // The same checkpoint published again (beyond the bus's duplicate window): a first delivery too.
      const next = gatewayEvent(agentId)
      const outcome = yield* commitDeliveries(actors, [deliveryOf(first, settled), deliveryOf(next, settled)], options, noDeadLetter)
      expect(outcome).toEqual({ committed: 1, duplicates: 1, invalid: 0, retried: 0 })
      expect(settled).toEqual({ acked: 3, naks: [] })
      const store = yield* Store
      expect((yield* store.listCheckpoints({ agentId, limit: 10, offset: 0 })).total).toBe(2)
      expect((yield* store.loadLogState(agentId)).head.position).toBe(2)
    }))

  it.scoped("hands back a batch the store cannot take, later with each delivery", () =>
    Effect.gen(function*() {
      const store = yield* Store
      const down = Store.of({
        ...store,
        commitBatch: () => Effect.fail(new StoreError({ operation: "commitBatch", cause: "connection refused" }))
      })
      const actors = yield* makeAgentActors(defaultActorsOptions).pipe(Effect.provideService(Store, down))
      const settled: Settled = { acked: 0, naks: [] }
      const deliveries = [1, 2, 3, 4, 5].map((count) => deliveryOf(gatewayEvent("agt-cd-down"), settled, count))
      const outcome = yield* commitDeliveries(actors, deliveries, options, noDeadLetter).pipe(Effect.provideService(Store, down))
      expect(outcome).toEqual({ committed: 0, duplicates: 0, invalid: 0, retried: 5 })
      expect(settled).toEqual({ acked: 0, naks: [1_000, 4_000, 16_000, 60_000, 60_000] })
    }))
})
