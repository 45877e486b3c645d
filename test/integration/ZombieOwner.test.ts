/**
 * A zombie owner cannot fork a chain. After failover, the old owner of a partition may be stalled
 * rather than dead: it wakes with a batch attested on the chain head it cached before the stall,
 * while the new owner has since committed past it (the same events, redelivered by the rewind, and
 * newer ones). Its commit meets the store's chain compare-and-set: a moved head is a conflict, its
 * actor is rebuilt from the store, what is already committed is dropped (checkpoint-id dedupe) and
 * the rest is appended after the new head. Every chain stays one line: no position taken twice,
 * every prev hash the hash before, every checkpoint once. On PGlite: the store is what is tested.
 */
import { layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { expect } from "vitest"
import { generateSigningKey } from "../../core/Signing.js"
import type { Delivery } from "../../adapters/bus/Bus.js"
import { eventSubject } from "../../adapters/bus/Subjects.js"
import * as SqlStore from "../../adapters/store/SqlStore.js"
import { Store } from "../../adapters/store/Store.js"
import * as SecretKeys from "../../adapters/keys/SecretKeys.js"
import type { GatewayEvent } from "../../core/schema/Event.js"
import { defaultActorsOptions, makeAgentActors } from "../../streams/AgentActors.js"
import { commitDeliveries, type CommitOptions } from "../../streams/CommitDeliveries.js"
import { gatewayEvent } from "../support/Events.js"
import { verifyAgentRecord } from "../streams/PipelineChecks.js"
import { migratedPglite } from "../support/PgliteTemplate.js"

const options: CommitOptions = {
  key: generateSigningKey(),
  logOrigin: "candor.test",
  subjectPrefix: "candor",
  conflictRetries: 3,
  retryDelayMs: 1_000,
  keepAliveMs: 10_000
}

/** A delivery that counts its acks and naks. */
const deliveryOf = (event: GatewayEvent, settled: { acked: number; naked: number }, deliveryCount = 1): Delivery => ({
  subject: eventSubject(event.agent_id),
  payload: JSON.parse(JSON.stringify(event)),
  deliveryCount,
  ack: Effect.sync(() => void settled.acked++),
  nak: () => Effect.sync(() => void settled.naked++),
  working: Effect.void,
  deadLetter: () => Effect.void
})

const Pglite = SqlStore.layer.pipe(Layer.provide(SecretKeys.layerEphemeral), Layer.provideMerge(migratedPglite))

layer(Pglite, { timeout: "60 seconds" })("a zombie owner", (it) => {
  it.scoped("waking after a failover, cannot fork a chain: its stale batch conflicts, and is deduped or appended", () =>
    Effect.gen(function* () {
      const store = yield* Store
      const agentId = "agt-zombie"
      const [e1, e2, e3, e4, e5] = Array.from({ length: 5 }, () => gatewayEvent(agentId))
      const settled = { acked: 0, naked: 0 }
      // The old owner commits e1, e2: its actor caches the chain head at position 2.
      const zombie = yield* makeAgentActors(defaultActorsOptions)
      expect(
        yield* commitDeliveries(zombie, [deliveryOf(e1!, settled), deliveryOf(e2!, settled)], options)
      ).toMatchObject({ committed: 2 })
      // It stalls holding e3. Deemed dead, its partition goes to a new owner, whose rewound consumer
      // delivers e3 again, then e4: committed at positions 2 and 3.
      const owner = yield* makeAgentActors(defaultActorsOptions)
      expect(
        yield* commitDeliveries(owner, [deliveryOf(e3!, settled), deliveryOf(e4!, settled)], options)
      ).toMatchObject({ committed: 2 })
      const headBefore = yield* store.loadLogState(agentId)
      expect(headBefore.head.position).toBe(4)
      // The zombie wakes and commits what it had, e3 (and, to press the store harder, e5 that the new
      // owner has not seen), both attested on its cached head (position 2, prev = e2).
      const outcome = yield* commitDeliveries(zombie, [deliveryOf(e3!, settled), deliveryOf(e5!, settled)], options)
      // A conflict, retried at once from the store (nothing handed back): e3 is a duplicate (acked,
      // not committed again), e5 goes after e4, not after the zombie's stale head.
      expect(outcome).toMatchObject({ committed: 1, duplicates: 1, retried: 0 })
      expect(settled).toEqual({ acked: 6, naked: 0 })
      // One line: positions 0..4, each prev hash the hash before, every checkpoint once, in this order.
      expect(yield* verifyAgentRecord(agentId, options.key, options.logOrigin)).toBe(5)
      const page = yield* store.listCheckpoints({ agentId, limit: 10, offset: 0 })
      const certificates = yield* Effect.forEach(page.items, (c) => store.getCertificate(c.checkpoint_id))
      expect(
        certificates
          .map((c) => c!)
          .sort((a, b) => a.chain.position - b.chain.position)
          .map((c) => c.subject.checkpoint_id)
      ).toEqual([e1, e2, e3, e4, e5].map((e) => e!.checkpoint.checkpoint_id))
    })
  )
})
