/**
 * The memory of judged tool results (adapters/gateway/ToolResultMemory.ts): per agent, bounded per
 * agent and overall, least recently seen first out, a violation remembered with its checkpoint.
 */
import { describe, expect, it } from "@effect/vitest"
import { ToolResultMemory } from "../../../adapters/gateway/ToolResultMemory.js"

describe("ToolResultMemory", () => {
  it("remembers per agent: another agent's judged result is not this one's", () => {
    const memory = new ToolResultMemory()
    memory.remember("a", "h1", null)
    memory.remember("a", "h2", "ic-bad")
    expect(memory.recall("a", "h1")).toBeNull()
    expect(memory.recall("a", "h2")).toBe("ic-bad")
    expect(memory.recall("b", "h1")).toBeUndefined()
  })

  it("keeps at most perAgent results of an agent, its least recently seen forgotten first", () => {
    const memory = new ToolResultMemory({ perAgent: 2, total: 100 })
    memory.remember("a", "h1", null)
    memory.remember("a", "h2", null)
    memory.recall("a", "h1") // seen again: now the newest
    memory.remember("a", "h3", null)
    expect(memory.recall("a", "h2")).toBeUndefined()
    expect(memory.recall("a", "h1")).toBeNull()
    expect(memory.entries).toBe(2)
  })

  it("keeps at most total results overall: the agent seen least recently goes first", () => {
    const memory = new ToolResultMemory({ perAgent: 10, total: 4 })
    memory.remember("old", "h1", null)
    memory.remember("old", "h2", null)
    memory.remember("new", "h3", null)
    memory.remember("new", "h4", null)
    memory.remember("new", "h5", null)
    expect(memory.recall("old", "h1")).toBeUndefined()
    expect(memory.recall("new", "h5")).toBeNull()
    expect(memory.entries).toBeLessThanOrEqual(4)
    // One agent alone over the total gives up its own oldest.
    for (let i = 0; i < 10; i++) memory.remember("new", `x${i}`, null)
    expect(memory.entries).toBe(4)
  })
})
