/**
 * The tally rebuilt from certificates (core/ReputationTally.ts), on logs signed the way the agent
 * actor signs them: what "analysed" means, sessions and their length, drift stability by replaying
 * AIP drift per session, and the newest violation of each session.
 */
import { describe, expect, it } from "@effect/vitest"
import { FastCheck } from "effect"
import { DEFAULT_AIP_DRIFT_CONFIG, observeAipDrift, emptyAipDriftState } from "../../core/DriftAip.js"
import { computeReputation, NO_COHERENCE } from "../../core/Reputation.js"
import { driftCheckpointOf, tallyCertificates, type TalliedCertificate } from "../../core/ReputationTally.js"
import {
  type Entry,
  many,
  type Outcome,
  signedLog,
  WORKED_EXAMPLE_AT,
  WORKED_EXAMPLE_COHERENCE,
  workedExampleEntries
} from "../support/ReputationLog.js"

const tallyOf = (entries: ReadonlyArray<Entry>) => tallyCertificates(signedLog("agt-tally", entries).certificates)
const session = (id: string, outcomes: ReadonlyArray<Outcome>): Array<Entry> =>
  outcomes.map((outcome) => ({ session: id, outcome }))

describe("tallyCertificates", () => {
  it("an empty log counts nothing", () => {
    expect(tallyCertificates([])).toStrictEqual({
      certified: 0,
      analysed: 0,
      analysed_clear: 0,
      long_sessions: 0,
      stable_sessions: 0,
      violation_sessions: []
    })
  })

  it("analysed = a judge read the reasoning (analysis_model is not none); synthetic clear verdicts count only as certified", () => {
    const t = tallyOf([
      ...many(3, "clear"),
      ...many(2, "review"),
      { session: "x", outcome: "clear", analysed: false },
      { session: "y", outcome: "clear", analysed: false }
    ])
    expect(t).toMatchObject({ certified: 7, analysed: 5, analysed_clear: 3 })
  })

  it.each([
    ["two non-clear checkpoints: not a long session", ["review", "violation"], 0, 0],
    ["two clear: not long", ["clear", "clear"], 0, 0],
    ["three clear: long and stable", ["clear", "clear", "clear"], 1, 1],
    ["three non-clear in a row: long, and the drift alert makes it unstable", ["review", "review", "violation"], 1, 0],
    ["non-clear broken by a clear: long and stable", ["review", "clear", "review", "review"], 1, 1],
    [
      "an alert after a stretch of clear ones: unstable",
      ["clear", "clear", "clear", "review", "review", "review"],
      1,
      0
    ]
  ] as const)("%s", (_, outcomes, long, stable) => {
    const t = tallyOf(session("s", outcomes))
    expect(t.long_sessions).toBe(long)
    expect(t.stable_sessions).toBe(stable)
  })

  it("a tool result's checkpoints count for nothing: not certified, no violation session, no drift (issue 28)", () => {
    const read = (outcome: Outcome): Entry => ({ session: "s", outcome, toolResult: true })
    const t = tallyOf([
      { session: "s", outcome: "clear" },
      read("violation"),
      read("violation"),
      read("violation"),
      { session: "s", outcome: "clear" },
      { session: "s", outcome: "clear" }
    ])
    // Counted, the three violations would make a violation session, an AIP drift alert and 6 certified.
    expect(t).toMatchObject({ certified: 3, analysed: 3, analysed_clear: 3, long_sessions: 1, stable_sessions: 1 })
    expect(t.violation_sessions).toEqual([])
  })

  it("long sessions count synthetic checkpoints too", () => {
    const t = tallyOf([
      { session: "s", outcome: "clear", analysed: false },
      { session: "s", outcome: "clear", analysed: false },
      { session: "s", outcome: "clear" }
    ])
    expect(t).toMatchObject({ analysed: 1, long_sessions: 1, stable_sessions: 1 })
  })

  it("drift is replayed per session: interleaved sessions each with three non-clear alert on their own", () => {
    const interleaved: Array<Entry> = []
    for (let i = 0; i < 3; i++)
      interleaved.push({ session: "a", outcome: "review" }, { session: "b", outcome: "clear" })
    const t = tallyOf(interleaved)
    expect(t).toMatchObject({ long_sessions: 2, stable_sessions: 1 })
  })

  it("stable sessions are exactly those in which observeAipDrift raised no alert, replayed in log order", () => {
    const outcome = FastCheck.constantFrom<Outcome>("clear", "review", "violation")
    FastCheck.assert(
      FastCheck.property(
        FastCheck.array(FastCheck.tuple(FastCheck.constantFrom("a", "b", "c"), outcome), { maxLength: 30 }),
        (steps) => {
          const certificates: Array<TalliedCertificate> = steps.map(([sessionId, result], i) => ({
            subject: {
              checkpoint_id: `ic-00000000-0000-4000-8000-${String(i).padStart(12, "0")}`,
              agent_id: "agt",
              session_id: sessionId,
              card_id: "card",
              timestamp: new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString()
            },
            claims: {
              verdict: result === "clear" ? "clear" : result === "review" ? "review_needed" : "boundary_violation",
              concerns: [],
              concerns_hash: "0".repeat(64),
              rules_version: "candor-verdict/1",
              boundary_values: [],
              reasoning_summary: "",
              analysis_model: "judge",
              extraction_confidence: null
            }
          }))
          const alerted = new Set<string>()
          const counts = new Map<string, number>()
          const states = new Map<string, typeof emptyAipDriftState>()
          for (const certificate of certificates) {
            const id = certificate.subject.session_id
            counts.set(id, (counts.get(id) ?? 0) + 1)
            const observed = observeAipDrift(
              states.get(id) ?? emptyAipDriftState,
              driftCheckpointOf(certificate),
              DEFAULT_AIP_DRIFT_CONFIG,
              new Date()
            )
            states.set(id, observed.state)
            if (observed.alert !== undefined) alerted.add(id)
          }
          const long = [...counts].filter(([, n]) => n >= 3).map(([id]) => id)
          const t = tallyCertificates(certificates)
          expect(t.long_sessions).toBe(long.length)
          expect(t.stable_sessions).toBe(long.filter((id) => !alerted.has(id)).length)
        }
      ),
      { numRuns: 500 }
    )
  })

  it("each session with a violation is listed once, with its newest violation by timestamp (not by log order)", () => {
    const t = tallyOf([
      { session: "a", outcome: "violation", timestamp: "2026-03-05T00:00:00.000Z" },
      { session: "a", outcome: "violation", timestamp: "2026-03-02T00:00:00.000Z" },
      { session: "b", outcome: "review", timestamp: "2026-03-06T00:00:00.000Z" },
      { session: "c", outcome: "violation", timestamp: "2026-03-01T00:00:00.000Z" },
      { session: "c", outcome: "violation", timestamp: "2026-03-03T00:00:00.000Z" },
      { session: "c", outcome: "clear", timestamp: "2026-03-09T00:00:00.000Z" }
    ])
    expect(t.violation_sessions).toStrictEqual([
      { session_id: "a", last_violation_at: "2026-03-05T00:00:00.000Z" },
      { session_id: "c", last_violation_at: "2026-03-03T00:00:00.000Z" }
    ])
  })

  it("the worked example of docs/reputation.md, from its 240 signed certificates", () => {
    const log = signedLog("agt-worked-example", workedExampleEntries())
    const t = tallyCertificates(log.certificates)
    expect(t).toStrictEqual({
      certified: 240,
      analysed: 220,
      analysed_clear: 209,
      long_sessions: 30,
      stable_sessions: 29,
      violation_sessions: [
        { session_id: "ses-0", last_violation_at: "2026-03-10T12:00:00.000Z" },
        { session_id: "ses-45", last_violation_at: "2026-03-20T00:00:00.000Z" }
      ]
    })
    const result = computeReputation(t, WORKED_EXAMPLE_COHERENCE, new Date(WORKED_EXAMPLE_AT))
    expect(result.components.map((c) => c.score)).toStrictEqual([950, 282, 967, 917, 832])
    expect(result).toMatchObject({ score: 805, grade: "AA", confidence: "medium", checkpoint_count: 220 })
  })

  it("adding a clear analysed checkpoint never lowers the integrity ratio (over certificates)", () => {
    const outcome = FastCheck.constantFrom<Outcome>("clear", "review", "violation")
    const integrity = (entries: ReadonlyArray<Entry>) =>
      computeReputation(tallyOf(entries), NO_COHERENCE, new Date()).components[0]!.score
    FastCheck.assert(
      FastCheck.property(
        FastCheck.array(
          FastCheck.record({ session: FastCheck.constantFrom("a", "b"), outcome, analysed: FastCheck.boolean() }),
          { maxLength: 12 }
        ),
        FastCheck.constantFrom("a", "b", "c"),
        (entries, sessionId) => {
          const before = integrity(entries)
          expect(integrity([...entries, { session: sessionId, outcome: "clear" }])).toBeGreaterThanOrEqual(before)
        }
      ),
      { numRuns: 100 }
    )
  })
})
