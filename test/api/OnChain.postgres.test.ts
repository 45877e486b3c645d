/**
 * On-chain anchoring on PostgreSQL: the anchors' json leaves and bigint columns read back as pg
 * returns them, so the batch root recomputed from the stored leaves is the one on chain, and the
 * history's cursor (a bigserial) pages.
 */
import { expect } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { anchorChainLayer } from "../support/AnchorChainFixture.js"
import { layerIntegration } from "../support/Integration.js"
import { anchorAndCheck, publishAndCheck } from "./OnChainCases.js"
import { ApiHarness, layer as harness } from "./Support.js"

layerIntegration(
  "postgres",
  Layer.merge(harness({ database: "postgres", chain: anchorChainLayer }), anchorChainLayer),
  {
    timeout: "120 seconds"
  }
)("on-chain on PostgreSQL", (it) => {
  it.effect("an anchor recomputed from public tree heads matches the chain; its proof reads back from the store", () =>
    Effect.gen(function* () {
      const { a } = yield* anchorAndCheck
      const api = yield* ApiHarness
      const page = yield* api.call("GET", `/v1/on-chain/history?agent_id=${a}&limit=1`, {
        token: api.fixtures.owner.token
      })
      expect(page.body.next_cursor).toMatch(/^\d+$/)
      const next = yield* api.call(
        "GET",
        `/v1/on-chain/history?agent_id=${a}&limit=1&cursor=${page.body.next_cursor}`,
        {
          token: api.fixtures.owner.token
        }
      )
      expect(next.body).toMatchObject({ anchors: [], next_cursor: null })
    })
  )

  it.effect("published scores prove against the root the contract holds", () => Effect.asVoid(publishAndCheck))
})
