import { describe, expect, it } from "@effect/vitest"
import { toHex } from "../../core/Bytes.js"
import {
  appendToChain,
  chainHash,
  type ChainEntry,
  type ChainLink,
  genesisHash,
  genesisHead,
  verifyChain,
  verifyLink
} from "../../core/Chain.js"

const HEX = (c: string) => c.repeat(64)

const entryAt = (position: number, agent = "agent-1"): ChainEntry => ({
  agent_id: agent,
  position,
  checkpoint_id: `ic-00000000-0000-4000-8000-${String(position).padStart(12, "0")}`,
  session_id: "sess-1",
  card_id: "card-1",
  timestamp: `2026-11-21T00:00:${String(position % 60).padStart(2, "0")}.000Z`,
  verdict: position % 3 === 0 ? "clear" : position % 3 === 1 ? "review_needed" : "boundary_violation",
  rules_version: "candor-verdict/1",
  concerns_hash: HEX("a"),
  thinking_block_hash: HEX("b"),
  card_hash: HEX("c"),
  values_hash: HEX("d"),
  analysis_hash: HEX("e"),
  model: "claude-sonnet-4"
})

const buildChain = (n: number, agent = "agent-1"): Array<ChainLink> => {
  let head = genesisHead(agent)
  const links: Array<ChainLink> = []
  for (let i = 0; i < n; i++) {
    const step = appendToChain(head, entryAt(i, agent))
    links.push(step.link)
    head = step.head
  }
  return links
}

describe("hash chain", () => {
  it("starts from a per-agent genesis", () => {
    expect(toHex(genesisHash("a"))).not.toBe(toHex(genesisHash("b")))
    expect(buildChain(1)[0]!.prev_hash).toBe(toHex(genesisHash("agent-1")))
  })

  it("verifies a run it built, and any suffix anchored at its head", () => {
    const links = buildChain(20)
    const all = verifyChain(links)
    expect(all.valid).toBe(true)
    expect(verifyChain(links.slice(7)).valid).toBe(true)
    const prefix = verifyChain(links.slice(0, 7))
    expect(prefix.valid && verifyChain(links.slice(7), prefix.head).valid).toBe(true)
  })

  it("is independent of key order but not of any value", () => {
    const entry = entryAt(0)
    const reordered = Object.fromEntries(Object.entries(entry).reverse()) as unknown as ChainEntry
    const g = genesisHash("agent-1")
    expect(toHex(chainHash(g, reordered)!)).toBe(toHex(chainHash(g, entry)!))
  })

  const fields = Object.keys(entryAt(0)) as Array<keyof ChainEntry>
  for (const field of fields) {
    it(`detects a change to ${field}`, () => {
      const links = buildChain(5)
      const original = links[2]!
      const value = original.entry[field]
      const changed = typeof value === "number" ? value + 1 : value === HEX("a") ? HEX("f") : `${value}x`
      links[2] = { ...original, entry: { ...original.entry, [field]: changed } }
      const result = verifyChain(links)
      expect(result.valid).toBe(false)
      if (!result.valid) expect(result.index).toBe(2)
    })
  }

  it("detects removal, reordering, duplication and splicing", () => {
    const links = buildChain(6)
    expect(verifyChain([...links.slice(0, 2), ...links.slice(3)]).valid).toBe(false)
    expect(verifyChain([links[0]!, links[2]!, links[1]!]).valid).toBe(false)
    expect(verifyChain([links[0]!, links[1]!, links[1]!]).valid).toBe(false)
    const other = buildChain(3, "agent-2")
    expect(verifyChain([...links.slice(0, 2), other[2]!]).valid).toBe(false)
    expect(verifyLink({ ...other[0]!, entry: { ...other[0]!.entry, agent_id: "agent-1" } })).toBeDefined()
  })

  it("rejects malformed hashes and positions without throwing", () => {
    const [link] = buildChain(1)
    for (const bad of [
      { ...link!, hash: "zz" },
      { ...link!, hash: link!.hash.slice(2) },
      { ...link!, prev_hash: "" },
      { ...link!, entry: { ...link!.entry, position: -1 } },
      { ...link!, entry: { ...link!.entry, position: Number.NaN } },
      { ...link!, entry: { ...link!.entry, model: "\ud800" } }
    ]) {
      expect(verifyChain([bad]).valid).toBe(false)
    }
  })

  it("accepts upper-case hex for stored hashes", () => {
    const links = buildChain(3).map((l) => ({ ...l, prev_hash: l.prev_hash.toUpperCase(), hash: l.hash.toUpperCase() }))
    expect(verifyChain(links).valid).toBe(true)
  })

  it("refuses to append at the wrong position", () => {
    expect(() => appendToChain(genesisHead("a"), entryAt(1, "a"))).toThrow(RangeError)
  })
})
