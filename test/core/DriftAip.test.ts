import { describe, expect, it } from "@effect/vitest"
import { FastCheck, Schema } from "effect"
import { createHash } from "node:crypto"
import {
  aipDriftDirection,
  type AipDriftCheckpoint,
  type AipDriftConfig,
  type AipDriftState,
  DEFAULT_AIP_DRIFT_CONFIG,
  driftSeverityOf,
  emptyAipDriftState,
  observeAipDrift,
  replayAipDrift,
  windowSummary
} from "../../core/DriftAip.js"
import type { IntegrityCheckpoint } from "../../core/schema/Checkpoint.js"
import type { ConcernCategory } from "../../core/schema/Concern.js"
import type { DriftAlert } from "../../core/schema/Drift.js"
import { DriftAlert as DriftAlertSchema } from "../../core/schema/Drift.js"
import type { Verdict } from "../../core/schema/Verdict.js"

const AGENT = "agent-1"
const SESSION = "sess-1"
const NOW = new Date("2026-03-01T12:00:00Z")

const idOf = (n: number) => `ic-00000000-0000-4000-8000-${n.toString(16).padStart(12, "0")}`
const cp = (n: number, verdict: Verdict, categories: ReadonlyArray<ConcernCategory> = []): AipDriftCheckpoint => ({
  checkpoint_id: idOf(n),
  agent_id: AGENT,
  session_id: SESSION,
  verdict,
  concerns: categories.map((category) => ({ category })),
  timestamp: new Date(Date.UTC(2026, 2, 1, 0, 0, n)).toISOString()
})

/** Independent of core/canonical: the JCS of an array of plain ASCII strings is its JSON.stringify. */
const expectedAlertId = (first: string) =>
  "ida-" +
  createHash("sha256")
    .update(`candor/v1/aip-drift-alert\0${JSON.stringify([AGENT, SESSION, first])}`)
    .digest("hex")
    .slice(0, 32)

const run = (
  checkpoints: ReadonlyArray<AipDriftCheckpoint>,
  config: AipDriftConfig = DEFAULT_AIP_DRIFT_CONFIG,
  start: AipDriftState = emptyAipDriftState
) => {
  let state = start
  const alerts: Array<{ readonly at: number; readonly alert: DriftAlert }> = []
  const positions: Array<readonly [number, number]> = []
  checkpoints.forEach((checkpoint, at) => {
    const observed = observeAipDrift(state, checkpoint, config, NOW)
    state = observed.state
    positions.push([observed.position.index, observed.position.window_size])
    if (observed.alert !== undefined) alerts.push({ at, alert: observed.alert })
  })
  return { state, alerts, positions }
}

describe("AIP session drift", () => {
  it("alerts once at the third consecutive non-clear check", () => {
    const checkpoints = [
      cp(0, "clear"),
      cp(1, "clear"),
      cp(2, "review_needed", ["autonomy_violation"]),
      cp(3, "boundary_violation", ["autonomy_violation", "prompt_injection"]),
      cp(4, "review_needed", ["autonomy_violation"]),
      cp(5, "review_needed", ["value_misalignment"]),
      cp(6, "boundary_violation", [])
    ]
    const { alerts, state } = run(checkpoints)
    expect(alerts).toHaveLength(1)
    const [{ at, alert }] = alerts as [{ at: number; alert: DriftAlert }]
    expect(at).toBe(4)
    expect(alert).toEqual({
      alert_id: expectedAlertId(idOf(2)),
      agent_id: AGENT,
      session_id: SESSION,
      checkpoint_ids: [idOf(2), idOf(3), idOf(4)],
      sustained_checks: 3,
      severity: "medium",
      drift_direction: "autonomy_creep",
      message:
        "3 consecutive non-clear integrity checks in session sess-1; clear ratio 0.4 over the last 5 checks; direction autonomy_creep",
      detection_timestamp: "2026-03-01T12:00:00.000Z",
      integrity_similarity: 0.4
    })
    expect(Schema.decodeUnknownSync(DriftAlertSchema)(alert)).toEqual(alert)
    expect(state.streak_length).toBe(5)
    expect(state.alerted).toBe(true)
  })

  it("a clear check ends the streak; the next streak alerts with its own id", () => {
    const { alerts } = run([
      cp(0, "review_needed"),
      cp(1, "review_needed"),
      cp(2, "review_needed"),
      cp(3, "clear"),
      cp(4, "review_needed"),
      cp(5, "review_needed"),
      cp(6, "boundary_violation")
    ])
    expect(alerts.map((a) => a.at)).toEqual([2, 6])
    expect(alerts.map((a) => a.alert.alert_id)).toEqual([expectedAlertId(idOf(0)), expectedAlertId(idOf(4))])
    expect(alerts[0]!.alert.severity).toBe("high") // 0 clear of 3
    expect(alerts[1]!.alert.integrity_similarity).toBeCloseTo(1 / 7)
  })

  it("maps severity from the clear ratio", () => {
    const table: ReadonlyArray<readonly [number, string]> = [
      [1, "low"],
      [0.7, "low"],
      [0.69, "medium"],
      [0.4, "medium"],
      [0.39, "high"],
      [0, "high"]
    ]
    for (const [ratio, severity] of table) expect(driftSeverityOf(ratio)).toBe(severity)
    // 7 clear then 3 non-clear in a window of 10: ratio 0.7, low
    const checkpoints = [
      ...Array.from({ length: 7 }, (_, n) => cp(n, "clear")),
      cp(7, "review_needed"),
      cp(8, "review_needed"),
      cp(9, "review_needed")
    ]
    expect(run(checkpoints).alerts[0]!.alert.severity).toBe("low")
  })

  it("takes the direction from a strict majority of the streak's concern categories", () => {
    const entries = (...lists: ReadonlyArray<ReadonlyArray<ConcernCategory>>) =>
      lists.map((categories) => ({ categories }))
    const table: ReadonlyArray<readonly [ReturnType<typeof entries>, string]> = [
      [entries(["prompt_injection"], ["prompt_injection"], ["value_misalignment"]), "injection_pattern"],
      [entries(["output_injection_compliance"], ["output_injection_compliance"], []), "injection_pattern"],
      [entries(["value_misalignment"], ["output_misalignment"], ["prompt_injection"]), "unknown"], // by category, not by direction
      [entries(["output_misalignment", "output_misalignment"], ["deceptive_reasoning"], []), "value_erosion"],
      [
        entries(["deceptive_reasoning"], ["deceptive_reasoning"], ["reasoning_corruption", "undeclared_intent"]),
        "unknown"
      ], // 2 of 4 is no strict majority
      [entries(["deceptive_reasoning"], ["deceptive_reasoning"], ["reasoning_corruption"]), "deception_pattern"],
      [entries(["reasoning_corruption"]), "reasoning_degradation"],
      [entries(["undeclared_intent"]), "intent_drift"],
      [entries(["autonomy_violation"]), "autonomy_creep"],
      [entries([], [], []), "unknown"]
    ]
    for (const [streak, direction] of table) expect(aipDriftDirection(streak)).toBe(direction)
  })

  it("slides a window of 10 and reports each checkpoint's position", () => {
    const { positions, state } = run(Array.from({ length: 12 }, (_, n) => cp(n, "clear")))
    expect(positions).toEqual([
      [0, 1],
      [1, 2],
      [2, 3],
      [3, 4],
      [4, 5],
      [5, 6],
      [6, 7],
      [7, 8],
      [8, 9],
      [9, 10],
      [9, 10],
      [9, 10]
    ])
    expect(state.window.map((e) => e.checkpoint_id)).toEqual(Array.from({ length: 10 }, (_, n) => idOf(n + 2)))
    expect(windowSummary(state)).toEqual({
      size: 10,
      max_size: 10,
      verdicts: { clear: 10, review_needed: 0, boundary_violation: 0 },
      integrity_ratio: 1,
      drift_alert_active: false
    })
  })

  it("honours a configured window and threshold; the streak may outlast the window", () => {
    const config = { maxWindowSize: 4, sustainedChecks: 5 }
    const { alerts, state } = run(
      [cp(0, "clear"), ...Array.from({ length: 6 }, (_, n) => cp(n + 1, "review_needed", ["undeclared_intent"]))],
      config
    )
    expect(alerts.map((a) => a.at)).toEqual([5])
    const alert = alerts[0]!.alert
    expect(alert.checkpoint_ids).toEqual([idOf(1), idOf(2), idOf(3), idOf(4), idOf(5)])
    expect(alert.sustained_checks).toBe(5)
    expect(alert.severity).toBe("high")
    expect(alert.drift_direction).toBe("intent_drift")
    expect(state.window).toHaveLength(4)
    expect(windowSummary(state, config)).toMatchObject({
      size: 4,
      max_size: 4,
      integrity_ratio: 0,
      drift_alert_active: true
    })
  })

  const verdicts = FastCheck.array(FastCheck.constantFrom<Verdict>("clear", "review_needed", "boundary_violation"), {
    maxLength: 60
  })
  const configs = FastCheck.record({
    maxWindowSize: FastCheck.integer({ min: 3, max: 12 }),
    sustainedChecks: FastCheck.integer({ min: 1, max: 6 })
  })

  it("fires exactly once per streak, when the streak reaches the threshold (property)", () => {
    FastCheck.assert(
      FastCheck.property(verdicts, configs, (sequence, config) => {
        const { alerts } = run(
          sequence.map((v, n) => cp(n, v)),
          config
        )
        const expected: Array<number> = []
        let runLength = 0
        sequence.forEach((v, n) => {
          runLength = v === "clear" ? 0 : runLength + 1
          if (runLength === config.sustainedChecks) expected.push(n)
        })
        expect(alerts.map((a) => a.at)).toEqual(expected)
        for (const { alert, at } of alerts) {
          expect(alert.checkpoint_ids).toEqual(
            Array.from({ length: config.sustainedChecks }, (_, k) => idOf(at - config.sustainedChecks + 1 + k))
          )
        }
      })
    )
  })

  it("a state replayed from the newest stored checkpoints raises the same later alerts (property)", () => {
    FastCheck.assert(
      FastCheck.property(verdicts, verdicts, configs, (before, after, config) => {
        const all = [...before, ...after].map((v, n) => cp(n, v))
        const history = all.slice(0, before.length)
        const rest = all.slice(before.length)
        const straight = run(rest, config, run(history, config).state)
        const limit = Math.max(config.maxWindowSize, config.sustainedChecks)
        const rebuilt = run(rest, config, replayAipDrift(history.slice(-limit), config))
        expect(rebuilt.alerts.map((a) => a.alert.alert_id)).toEqual(straight.alerts.map((a) => a.alert.alert_id))
        expect(rebuilt.alerts.map((a) => a.at)).toEqual(straight.alerts.map((a) => a.at))
        expect(rebuilt.positions).toEqual(straight.positions)
        expect(rebuilt.state.window).toEqual(straight.state.window)
      })
    )
  })

  it("reads stored checkpoints as they are typed", () => {
    // compile-time: an IntegrityCheckpoint is a drift input without conversion
    const fromStored: (c: IntegrityCheckpoint) => AipDriftCheckpoint = (c) => c
    expect(typeof fromStored).toBe("function")
  })

  it("is deterministic and its state survives JSON", () => {
    const checkpoints = [
      cp(0, "review_needed", ["prompt_injection"]),
      cp(1, "review_needed"),
      cp(2, "boundary_violation", ["prompt_injection"])
    ]
    const a = run(checkpoints)
    const b = run(checkpoints)
    expect(a).toEqual(b)
    expect(JSON.parse(JSON.stringify(a.state))).toEqual(a.state)
  })
})
