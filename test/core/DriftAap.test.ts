import { describe, expect, it } from "@effect/vitest"
import { FastCheck, Schema } from "effect"
import { createHash } from "node:crypto"
import {
  type AapDriftConfig,
  type AapDriftState,
  type AapDriftTrace,
  batchBaselineSize,
  DEFAULT_AAP_DRIFT_CONFIG,
  detectAapDrift,
  emptyAapDriftState,
  observeAapDrift,
  replayAapDrift
} from "../../core/DriftAap.js"
import { DriftAlert } from "../../core/schema/Drift.js"
import type { APTrace, APTraceDraft } from "../../core/schema/Trace.js"
import { cosineSimilarity, nameTokens, traceFeatures } from "../../core/TraceFeatures.js"

const AGENT = "agent-7"
const NOW = new Date("2026-04-01T00:00:00Z")

interface Shape {
  readonly type?: string
  readonly name?: string
  readonly category?: string
  readonly values?: ReadonlyArray<string>
  readonly required?: boolean
  readonly status?: "pending" | "approved" | "denied" | "timeout"
  readonly alternatives?: number
  readonly confidence?: number
  readonly card?: string
}

const trace = (n: number, shape: Shape = {}): AapDriftTrace => ({
  trace_id: `tr-${n}`,
  agent_id: AGENT,
  ...(shape.card !== undefined ? { card_id: shape.card } : {}),
  timestamp: new Date(Date.UTC(2026, 3, 1, 0, 0, n)).toISOString(),
  action: { type: shape.type ?? "recommend", name: shape.name ?? "respond", category: shape.category ?? "bounded" },
  decision: {
    values_applied: shape.values ?? ["principal_benefit"],
    ...(shape.confidence !== undefined ? { confidence: shape.confidence } : {}),
    alternatives_considered: Array.from({ length: shape.alternatives ?? 0 }, (_, k) => ({
      option_id: `o${k}`,
      description: ""
    }))
  },
  escalation: {
    evaluated: shape.required === true,
    required: shape.required === true,
    ...(shape.status !== undefined ? { escalation_status: shape.status } : {})
  },
  context: {
    session_id: `sess-${n}`,
    metadata: { integrity_checkpoint_id: `ic-00000000-0000-4000-8000-${n.toString(16).padStart(12, "0")}` }
  }
})

const run = (
  traces: ReadonlyArray<AapDriftTrace>,
  config: AapDriftConfig = DEFAULT_AAP_DRIFT_CONFIG,
  start: AapDriftState = emptyAapDriftState
) => {
  let state = start
  const alerts: Array<{ at: number; alert: DriftAlert; indicators: ReadonlyArray<{ indicator: string }> }> = []
  const similarities: Array<number | undefined> = []
  traces.forEach((t, at) => {
    const observed = observeAapDrift(state, t, config, NOW)
    state = observed.state
    similarities.push(observed.similarity)
    if (observed.alert !== undefined) alerts.push({ at, alert: observed.alert, indicators: observed.indicators })
  })
  return { state, alerts, similarities }
}

/** Ten plain answers, four of them escalated: the baseline of most tests. */
const baseline = Array.from({ length: 10 }, (_, n) => trace(n, { required: n % 3 === 0 }))

describe("trace features", () => {
  it("tokenises action names", () => {
    const table: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
      ["delete_file", ["delete", "file"]],
      ["mcp__github__createIssue", ["mcp", "github", "create", "issue"]],
      ["HTTPRequest", ["http", "request"]],
      ["send-email.v2", ["send", "email", "v2"]],
      ["search search", ["search"]],
      ["", []]
    ]
    for (const [name, tokens] of table) expect(nameTokens(name)).toEqual(tokens)
  })

  it("extracts the documented structural features", () => {
    expect(
      traceFeatures({
        action: { type: "Execute", name: "transferFunds", category: "bounded" },
        decision: {
          values_applied: ["principal_benefit", "honesty"],
          confidence: 0.8,
          alternatives_considered: [1, 2, 3]
        },
        escalation: { evaluated: true, required: false }
      })
    ).toEqual({
      "action:execute": 1,
      "category:bounded": 1,
      "action_name:transferfunds": 1,
      "name_token:transfer": 1,
      "name_token:funds": 1,
      "value:principal_benefit": 1,
      "value:honesty": 1,
      "escalation:evaluated": 1,
      "escalation:not_required": 1,
      "alternatives:2-3": 1,
      confidence: 0.8
    })
    expect(
      traceFeatures({ action: { type: "recommend", name: "", category: "bounded" }, decision: { values_applied: [] } })
    ).toEqual({
      "action:recommend": 1,
      "category:bounded": 1,
      "escalation:not_required": 1,
      "alternatives:0": 1
    })
  })

  it("computes cosine similarity", () => {
    expect(cosineSimilarity({ a: 1, b: 1 }, { a: 1, b: 1 })).toBeCloseTo(1)
    expect(cosineSimilarity({ a: 1 }, { b: 1 })).toBe(0)
    expect(cosineSimilarity({ a: 1, b: 1 }, { a: 1 })).toBeCloseTo(Math.SQRT1_2)
    expect(cosineSimilarity({ a: 3, b: 4 }, { a: 6, b: 8, c: 0 })).toBeCloseTo(1)
    expect(cosineSimilarity({}, { a: 1 })).toBe(0)
  })

  it("sizes the batch baseline as Mnemom's detect_drift does", () => {
    const table: ReadonlyArray<readonly [number, number]> = [
      [0, 3],
      [8, 3],
      [15, 3],
      [16, 4],
      [20, 5],
      [39, 9],
      [40, 10],
      [1000, 10]
    ]
    for (const [count, size] of table) expect(batchBaselineSize(count)).toBe(size)
    expect(batchBaselineSize(8, 5)).toBe(5)
  })
})

describe("AAP drift", () => {
  it("reads stored traces and gateway drafts as they are typed", () => {
    // compile-time: the schema types are drift inputs without conversion
    const fromStored: (t: APTrace) => AapDriftTrace = (t) => t
    const fromDraft: (t: APTraceDraft) => AapDriftTrace = (t) => t
    const draft: APTraceDraft = {
      trace_id: "tr-x",
      agent_id: AGENT,
      timestamp: "2026-04-01T00:00:00Z",
      action: { type: "recommend", name: "respond", category: "bounded" },
      decision: { selected: "respond", selection_reasoning: "", values_applied: [] },
      context: { session_id: "s", metadata: null }
    }
    const stored: APTrace = { ...draft, verification: { verified: true, violations: [] }, created_at: draft.timestamp }
    expect(
      observeAapDrift(emptyAapDriftState, fromStored(stored), DEFAULT_AAP_DRIFT_CONFIG, NOW).state.baseline.count
    ).toBe(1)
    expect(
      observeAapDrift(emptyAapDriftState, fromDraft(draft), DEFAULT_AAP_DRIFT_CONFIG, NOW).similarity
    ).toBeUndefined()
  })

  it("builds the baseline first, then alerts once per streak of low similarity", () => {
    const drifted = (n: number) =>
      trace(n, { type: "execute", name: "transfer_funds", category: "forbidden", values: [], alternatives: 5 })
    const traces = [...baseline, drifted(10), drifted(11), drifted(12), drifted(13), trace(14), drifted(15)]
    const { alerts, similarities, state } = run(traces)
    expect(similarities.slice(0, 10)).toEqual(Array.from({ length: 10 }, () => undefined))
    // shares only `escalation:not_required` (6 of 10 baseline traces) with the centroid
    const expected = 6 / (Math.sqrt(7) * Math.sqrt(6 * 100 + 6 * 6 + 4 * 4 + 4 * 4))
    expect(similarities[10]).toBeCloseTo(expected, 10)
    expect(similarities[14]).toBeGreaterThan(0.9)
    expect(alerts.map((a) => a.at)).toEqual([12])
    const { alert, indicators } = alerts[0]!
    expect(alert).toMatchObject({
      alert_id:
        "ada-" +
        createHash("sha256")
          .update(`candor/v1/aap-drift-alert\0${JSON.stringify([AGENT, "tr-10"])}`)
          .digest("hex")
          .slice(0, 32),
      agent_id: AGENT,
      session_id: "sess-12",
      checkpoint_ids: [10, 11, 12].map((n) => `ic-00000000-0000-4000-8000-${n.toString(16).padStart(12, "0")}`),
      trace_ids: ["tr-10", "tr-11", "tr-12"],
      sustained_checks: 3,
      severity: "high",
      drift_direction: "autonomy_expansion",
      detection_timestamp: "2026-04-01T00:00:00.000Z"
    })
    expect(alert.integrity_similarity).toBeUndefined()
    expect(alert.message).toContain("Escalation rate changed from 0.4 to 0")
    expect(indicators.map((i) => i.indicator)).toEqual([
      "escalation_rate",
      "execute_share",
      "value_use",
      "alternatives",
      "similarity_trend"
    ])
    expect(Schema.decodeUnknownSync(DriftAlert)(alert)).toEqual(alert)
    expect(state.streak_length).toBe(1)
    expect(state.baseline.count).toBe(10)
  })

  it("infers each direction from the streak against the baseline", () => {
    const plain = Array.from({ length: 10 }, (_, n) => trace(n))
    const config = { ...DEFAULT_AAP_DRIFT_CONFIG, similarityThreshold: 0.8 }
    const table: ReadonlyArray<readonly [string, (n: number) => AapDriftTrace]> = [
      ["autonomy_expansion", (n) => trace(n, { type: "execute", name: `tool_${n}` })],
      ["value_drift", (n) => trace(n, { name: `ask_${n}`, values: ["speed"] })],
      ["value_drift", (n) => trace(n, { name: `ask_${n}`, values: [] })],
      ["principal_misalignment", (n) => trace(n, { name: `ask_${n}`, required: true, status: "denied" })],
      ["communication_drift", (n) => trace(n, { name: `ask_${n}`, alternatives: 2 })],
      ["unknown", (n) => trace(n, { name: `ask_${n}` })]
    ]
    for (const [direction, make] of table) {
      const { alerts } = run([...plain, make(10), make(11), make(12)], config)
      expect(alerts.map((a) => [a.at, a.alert.drift_direction])).toEqual([[12, direction]])
    }
    const confident = Array.from({ length: 10 }, (_, n) => trace(n, { confidence: 0.9 }))
    const unsure = (n: number) => trace(n, { name: `ask_${n}`, confidence: 0.2 })
    expect(run([...confident, unsure(10), unsure(11), unsure(12)], config).alerts[0]!.alert.drift_direction).toBe(
      "principal_misalignment"
    )
  })

  it("grades severity by the streak's mean similarity against the threshold", () => {
    const plain = Array.from({ length: 10 }, (_, n) => trace(n))
    const make = (n: number) => trace(n, { name: `ask_${n}` }) // similarity 5/7
    const table: ReadonlyArray<readonly [number, string]> = [
      [0.75, "low"],
      [1.08, "medium"],
      [2.2, "high"]
    ]
    for (const [threshold, severity] of table) {
      const { alerts } = run([...plain, make(10), make(11), make(12)], {
        ...DEFAULT_AAP_DRIFT_CONFIG,
        similarityThreshold: threshold
      })
      expect(alerts[0]!.alert.severity).toBe(severity)
    }
  })

  it("starts a new baseline when the trace names another card", () => {
    const onA = Array.from({ length: 10 }, (_, n) => trace(n, { card: "card-a" }))
    const { state } = run([...onA, trace(10, { card: "card-b", type: "execute" })])
    expect(state.card_id).toBe("card-b")
    expect(state.baseline.count).toBe(1)
    expect(state.baseline_features["action:execute"]).toBe(1)
  })

  it("analyses a batch in chronological order with Mnemom's baseline size", () => {
    const drifted = (n: number) => trace(n, { type: "execute", name: "wipe_disk", category: "forbidden", values: [] })
    const traces = [
      ...Array.from({ length: 6 }, (_, n) => trace(n)),
      drifted(6),
      drifted(7),
      drifted(8),
      drifted(9),
      trace(10),
      trace(11)
    ]
    const analysis = detectAapDrift([...traces].reverse(), NOW)
    expect(analysis.analyzed_traces).toBe(12)
    expect(analysis.baseline_size).toBe(3)
    expect(analysis.similarities.map((s) => s.trace_id)).toEqual(traces.slice(3).map((t) => t.trace_id))
    expect(analysis.alerts.map((a) => a.alert.trace_ids)).toEqual([["tr-6", "tr-7", "tr-8"]])
    expect(detectAapDrift(traces.slice(0, 2), NOW)).toMatchObject({
      analyzed_traces: 2,
      baseline_size: 2,
      similarities: [],
      alerts: []
    })
  })

  const pool = [
    (n: number) => trace(n),
    (n: number) => trace(n, { required: true }),
    (n: number) => trace(n, { name: "lookup" }),
    (n: number) =>
      trace(n, {
        type: "execute",
        name: "delete_everything",
        category: "forbidden",
        values: ["speed"],
        alternatives: 4
      }),
    (n: number) =>
      trace(n, {
        type: "escalate",
        name: "ask_human",
        category: "escalation_trigger",
        values: [],
        required: true,
        status: "denied"
      })
  ]
  const sequence = FastCheck.array(FastCheck.integer({ min: 0, max: pool.length - 1 }), { maxLength: 40 })
  const configs = FastCheck.record({
    baselineSize: FastCheck.integer({ min: 1, max: 10 }),
    similarityThreshold: FastCheck.constantFrom(0.3, 0.5, 0.7),
    sustainedTraces: FastCheck.integer({ min: 1, max: 4 })
  })
  const build = (picks: ReadonlyArray<number>) => picks.map((k, n) => pool[k]!(n))

  it("fires exactly once per streak of low similarity (property)", () => {
    FastCheck.assert(
      FastCheck.property(sequence, configs, (picks, config) => {
        const { alerts, similarities } = run(build(picks), config)
        const expected: Array<number> = []
        let streak = 0
        similarities.forEach((s, n) => {
          streak = s !== undefined && s < config.similarityThreshold ? streak + 1 : 0
          if (streak === config.sustainedTraces) expected.push(n)
        })
        expect(alerts.map((a) => a.at)).toEqual(expected)
        expect(similarities.filter((s) => s === undefined)).toHaveLength(Math.min(picks.length, config.baselineSize))
      })
    )
  })

  it("replaying the history rebuilds the same state, which survives JSON (property)", () => {
    FastCheck.assert(
      FastCheck.property(sequence, sequence, configs, (before, after, config) => {
        const all = build([...before, ...after])
        const history = all.slice(0, before.length)
        const straight = run(all.slice(before.length), config, run(history, config).state)
        const replayed = replayAapDrift(history, config)
        expect(replayed).toEqual(run(history, config).state)
        const rebuilt = run(all.slice(before.length), config, JSON.parse(JSON.stringify(replayed)) as AapDriftState)
        expect(rebuilt.alerts).toEqual(straight.alerts)
        expect(rebuilt.state).toEqual(straight.state)
      })
    )
  })
})
