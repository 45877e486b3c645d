import { describe, expect, it } from "@effect/vitest"
import { Either, FastCheck, Schema } from "effect"
import {
  advanceViolationStreak,
  autoContainment,
  containmentErrorBody,
  containmentInForce,
  containmentStatus,
  emptyViolationStreak,
  shouldContain,
  transition,
  violationStreakOf,
  type StreakCheckpoint
} from "../../core/Containment.js"
import { type ContainmentAction, ContainmentState } from "../../core/schema/Containment.js"
import type { Verdict } from "../../core/schema/Verdict.js"

const cp = (n: number, verdict: Verdict): StreakCheckpoint => ({
  checkpoint_id: `ic-00000000-0000-4000-8000-${n.toString(16).padStart(12, "0")}`,
  verdict,
  timestamp: `2026-01-01T00:00:${String(n).padStart(2, "0")}Z`
})

describe("violation streak", () => {
  it("counts consecutive boundary violations and resets on any other verdict", () => {
    const verdicts: ReadonlyArray<Verdict> = [
      "boundary_violation",
      "boundary_violation",
      "review_needed",
      "boundary_violation",
      "boundary_violation",
      "boundary_violation"
    ]
    const counts: Array<number> = []
    let streak = emptyViolationStreak
    verdicts.forEach((verdict, n) => {
      streak = advanceViolationStreak(streak, cp(n, verdict))
      counts.push(streak.count)
    })
    expect(counts).toEqual([1, 2, 0, 1, 2, 3])
    expect(streak).toEqual({
      count: 3,
      first_checkpoint_id: cp(3, "clear").checkpoint_id,
      last_checkpoint_id: cp(5, "clear").checkpoint_id,
      since: "2026-01-01T00:00:03Z"
    })
    expect(violationStreakOf(verdicts.map((v, n) => cp(n, v)))).toEqual(streak)
    expect(advanceViolationStreak(streak, cp(6, "clear"))).toEqual(emptyViolationStreak)
  })

  it("contains at the threshold, never without one", () => {
    const streakOf = (count: number) => ({ ...emptyViolationStreak, count })
    const table: ReadonlyArray<readonly [number, number | null | undefined, boolean]> = [
      [2, 3, false],
      [3, 3, true],
      [4, 3, true],
      [1, 1, true],
      [0, 1, false],
      [10, undefined, false],
      [10, null, false],
      [10, 0, false],
      [10, -1, false],
      [10, 2.5, false]
    ]
    for (const [count, threshold, expected] of table) expect(shouldContain(streakOf(count), threshold)).toBe(expected)
  })

  it("first reaches the threshold exactly at the Nth consecutive violation (property)", () => {
    FastCheck.assert(
      FastCheck.property(
        FastCheck.array(FastCheck.constantFrom<Verdict>("clear", "review_needed", "boundary_violation"), {
          maxLength: 40
        }),
        FastCheck.integer({ min: 1, max: 5 }),
        (verdicts, threshold) => {
          let streak = emptyViolationStreak
          let run = 0
          verdicts.forEach((verdict, n) => {
            streak = advanceViolationStreak(streak, cp(n, verdict))
            run = verdict === "boundary_violation" ? run + 1 : 0
            expect(shouldContain(streak, threshold)).toBe(run >= threshold)
          })
        }
      )
    )
  })

  it("builds the paused state of an automatic pause, by system", () => {
    const streak = violationStreakOf([
      cp(1, "boundary_violation"),
      cp(2, "boundary_violation"),
      cp(3, "boundary_violation")
    ])
    expect(autoContainment(streak, new Date("2026-02-01T10:00:00Z"))).toEqual({
      status: "paused",
      reason: "Auto-contained: 3 consecutive boundary violations",
      contained_at: "2026-02-01T10:00:00.000Z",
      contained_by: "system"
    })
  })
})

describe("containment transitions", () => {
  const request = { actor: "user-1", reason: "review", at: "2026-02-01T10:00:00.000Z" }
  const state = (status: "paused" | "killed"): ContainmentState => ({
    status,
    reason: "before",
    contained_at: "2026-01-01T00:00:00.000Z",
    contained_by: "user-0"
  })
  const statuses = { active: null, paused: state("paused"), killed: state("killed") } as const

  it("allows exactly the four transitions and names the current state otherwise", () => {
    const table: ReadonlyArray<readonly [keyof typeof statuses, ContainmentAction, string]> = [
      ["active", "pause", "paused"],
      ["active", "auto_pause", "paused"],
      ["paused", "resume", "active"],
      ["active", "kill", "killed"],
      ["paused", "kill", "killed"],
      ["killed", "reactivate", "active"],
      ["paused", "pause", "agent is already paused"],
      ["killed", "pause", "cannot pause: agent is killed"],
      ["paused", "auto_pause", "agent is already paused"],
      ["killed", "auto_pause", "cannot pause: agent is killed"],
      ["active", "resume", "cannot resume: agent is active"],
      ["killed", "resume", "cannot resume: agent is killed (reactivate it)"],
      ["killed", "kill", "agent is already killed"],
      ["active", "reactivate", "cannot reactivate: agent is active"],
      ["paused", "reactivate", "cannot reactivate: agent is paused (resume it)"]
    ]
    for (const [from, action, expected] of table) {
      const result = transition(statuses[from], action, request)
      const got = Either.match(result, { onLeft: (error) => error, onRight: containmentStatus })
      expect(got, `${action} from ${from}`).toBe(expected)
    }
    expect(transition(null, "kill", request)).toEqual(
      Either.right({ status: "killed", reason: "review", contained_at: request.at, contained_by: "user-1" })
    )
  })

  it("reports a paused or killed agent in the gateway's 403 body", () => {
    expect(containmentErrorBody("agt-1", { ...state("paused"), reason: null })).toEqual({
      error: "agent is paused",
      type: "containment_error",
      reason: "agent_paused",
      containment_error: {
        type: "containment_error",
        reason: "agent_paused",
        agent_id: "agt-1",
        scope: "agent",
        contained_at: "2026-01-01T00:00:00.000Z",
        contained_by: "user-0"
      }
    })
    expect(containmentErrorBody("agt-1", state("killed"))).toMatchObject({
      error: "agent is killed: before",
      reason: "agent_killed"
    })
    expect(containmentErrorBody("agt-1", state("paused"), "key")).toMatchObject({
      error: "agent's provider key is paused: before",
      containment_error: { scope: "key", reason: "agent_paused" }
    })
  })

  it("an agent is refused under its own or its key's containment, the more severe first", () => {
    const paused = state("paused")
    const killed = state("killed")
    expect(containmentInForce(undefined, null)).toBeUndefined()
    expect(containmentInForce(paused, undefined)).toEqual({ scope: "agent", containment: paused })
    expect(containmentInForce(null, killed)).toEqual({ scope: "key", containment: killed })
    expect(containmentInForce(paused, killed)).toEqual({ scope: "key", containment: killed })
    expect(containmentInForce(killed, paused)).toEqual({ scope: "agent", containment: killed })
    expect(containmentInForce(paused, paused)).toEqual({ scope: "agent", containment: paused })
  })

  it("decodes the state stored before the containment API as contained by system", () => {
    const decode = Schema.decodeUnknownSync(ContainmentState)
    expect(decode({ status: "paused", reason: "drift", since: "2026-01-01T00:00:00Z" })).toEqual({
      status: "paused",
      reason: "drift",
      contained_at: "2026-01-01T00:00:00Z",
      contained_by: "system"
    })
    expect(decode(state("killed"))).toEqual(state("killed"))
    expect(() => decode({ status: "active", reason: null, contained_at: "2026-01-01T00:00:00Z" })).toThrow()
  })
})
