/**
 * The contained agents' recorded refusals (adapters/gateway/ContainedRefusals.ts): 10 at once, then
 * 10 a second per agent, with the seconds to wait beyond; agents apart; the buckets bounded, the most
 * recently refused kept.
 */
import { describe, expect, it } from "@effect/vitest"
import { ContainedRefusals } from "../../../adapters/gateway/ContainedRefusals.js"

describe("ContainedRefusals", () => {
  it("records 10 refusals at once, then one per tenth of a second; 1 s to wait beyond", () => {
    const refusals = new ContainedRefusals()
    for (let i = 0; i < 10; i++) expect(refusals.take("agt-a", 1_000)).toBeUndefined()
    expect(refusals.take("agt-a", 1_000)).toBe(1)
    expect(refusals.take("agt-a", 1_099)).toBe(1)
    expect(refusals.take("agt-a", 1_100)).toBeUndefined()
    expect(refusals.take("agt-a", 1_100)).toBe(1)
    // Another agent has its own bucket; a full second refills one.
    expect(refusals.take("agt-b", 1_100)).toBeUndefined()
    for (let i = 0; i < 10; i++) expect(refusals.take("agt-a", 2_100)).toBeUndefined()
    expect(refusals.take("agt-a", 2_100)).toBe(1)
  })

  it("keeps at most `agents` buckets, dropping the least recently refused (a dropped bucket is full again)", () => {
    const refusals = new ContainedRefusals({ perSecond: 2, agents: 2 })
    for (const agent of ["agt-a", "agt-a", "agt-b", "agt-b"]) expect(refusals.take(agent, 0)).toBeUndefined()
    expect(refusals.take("agt-a", 0)).toBe(1) // agt-a is now the most recent
    expect(refusals.take("agt-c", 0)).toBeUndefined() // drops agt-b
    expect(refusals.size).toBe(2)
    expect(refusals.take("agt-a", 0)).toBe(1) // kept: still empty
    expect(refusals.take("agt-b", 0)).toBeUndefined() // dropped: full again
    expect(refusals.size).toBe(2)
  })
})
