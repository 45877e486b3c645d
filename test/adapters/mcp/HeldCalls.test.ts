/**
 * The calls held for approval (adapters/mcp/HeldCalls.ts): a cancellation finds its call by the
 * client's session and id (and no other client's), the bounds refuse past them, and a release
 * makes room again.
 */
import { describe, expect, it } from "vitest"
import { HeldCalls } from "../../../adapters/mcp/HeldCalls.js"

const key = (agentId: string, id: string | number, session?: string) => ({
  agentId,
  serverId: "mcp_1",
  session,
  id
})

describe("HeldCalls", () => {
  it("a cancellation withdraws the call of that session and id only; the string 1 is not the number 1", () => {
    const calls = new HeldCalls({ perAgent: 8, total: 8 })
    const withdrawn: Array<string> = []
    const release = calls.hold(key("agt-a", 1, "s1"), () => withdrawn.push("a1"))
    expect(typeof release).toBe("function")
    expect(calls.withdraw(key("agt-a", "1", "s1"))).toBe(false)
    expect(calls.withdraw(key("agt-a", 1, "s2"))).toBe(false)
    expect(calls.withdraw(key("agt-b", 1, "s1"))).toBe(false)
    expect(withdrawn).toEqual([])
    expect(calls.withdraw(key("agt-a", 1, "s1"))).toBe(true)
    expect(withdrawn).toEqual(["a1"])
  })

  it("the same call held twice is a duplicate; past an agent's bound or the total, calls are refused until released", () => {
    const calls = new HeldCalls({ perAgent: 2, total: 3 })
    const first = calls.hold(key("agt-a", 1), () => {})
    expect(calls.hold(key("agt-a", 1), () => {})).toBe("duplicate")
    calls.hold(key("agt-a", 2), () => {})
    expect(calls.hold(key("agt-a", 3), () => {})).toBe("busy")
    calls.hold(key("agt-b", 1), () => {})
    expect(calls.hold(key("agt-c", 1), () => {})).toBe("busy")
    expect(calls.size).toBe(3)
    if (typeof first !== "function") throw new Error("not held")
    first()
    first()
    expect(calls.size).toBe(2)
    expect(typeof calls.hold(key("agt-a", 3), () => {})).toBe("function")
  })
})
