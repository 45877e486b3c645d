/**
 * Witnessing on PostgreSQL: the due logs found through the chain heads, cosignatures stored and the
 * witness's size moved up in one transaction, a 409's size taken over, and the served tree head
 * carrying the cosignature, with the pipeline committing on a real PostgreSQL.
 */
import { expect } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { verifyWitnessQuorum } from "../../core/Cosignature.js"
import { ApiHarness } from "../api/Support.js"
import { layerIntegration } from "../support/Integration.js"
import { commitEvents, originOf, world } from "./Support.js"
import { cycle, fakeWitness, requestsFor } from "./WitnessChecks.js"

layerIntegration("postgres", world({ prover: false, harness: { database: "postgres" } }), {
  timeout: "120 seconds",
  excludeTestServices: true
})("witnessing on PostgreSQL", (it) => {
  it.scoped("cosigns, retries a 409 from the witness's size, serves the cosigned head", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const agentId = "agt-witness-pg"
      const witness = yield* fakeWitness()
      yield* commitEvents(agentId, [[]])
      expect((yield* cycle([witness], agentId))[witness.key.name]).toMatchObject([{ _tag: "Cosigned", treeSize: 1 }])

      yield* commitEvents(agentId, [[], []])
      // The witness forgot nothing, but Candor's record is behind: the witness saw size 3 elsewhere.
      const three = (yield* api.call("GET", `/v1/agents/${agentId}/merkle-root`)).body
      witness.setRecord(originOf(agentId), 3, Buffer.from(three.root, "hex"))
      yield* commitEvents(agentId, [[]])
      expect((yield* cycle([witness], agentId))[witness.key.name]).toMatchObject([{ _tag: "Cosigned", treeSize: 4 }])
      expect(requestsFor(witness, agentId).map((r) => [r.status, r.body.split("\n")[0]])).toEqual([
        [200, "old 0"],
        [409, "old 1"],
        [200, "old 3"]
      ])

      const root = (yield* api.call("GET", `/v1/agents/${agentId}/merkle-root`)).body
      expect(root.tree_size).toBe(4)
      const verified = verifyWitnessQuorum(root.signed_tree_head, [witness.key])
      expect(verified.ok).toBe(true)
      const listed = (yield* api.call("GET", `/v1/agents/${agentId}/cosignatures?tree_size=1`)).body
      expect(listed.cosignatures).toHaveLength(1)
      expect(listed.cosignatures[0].timestamp).toBeGreaterThan(1_700_000_000)
      // Nothing due any more for this witness.
      expect((yield* cycle([witness], agentId))[witness.key.name]).toEqual([])
    })
  )
})
