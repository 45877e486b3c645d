/**
 * Card gaps in the tally: the verifier's rule (core/ReputationTally.ts, over certificates) and the
 * workers' (core/Reclassification.ts, over stored sessions) give the same counts; the CSV quoting.
 */
import { describe, expect, it } from "@effect/vitest"
import { complianceCsv, csvField, excludeCardGaps } from "../../core/Reclassification.js"
import { type TalliedCertificate, tallyCertificates } from "../../core/ReputationTally.js"

const at = (minute: number) => new Date(Date.UTC(2026, 0, 1, 0, minute)).toISOString()

const cert = (id: string, session: string, verdict: string, minute: number): TalliedCertificate =>
  ({
    subject: { checkpoint_id: id, agent_id: "agt", session_id: session, card_id: "c", timestamp: at(minute) },
    claims: {
      verdict,
      analysis_model: "rules",
      concerns: verdict === "clear" ? [] : [{ category: "prompt_injection", severity: "high", description: "d" }]
    }
  }) as unknown as TalliedCertificate

// Session s1: three violations in a row raise one AIP drift alert over v1, v2, v3.
// Session s2: clear, then one violation v4.
const certificates = [
  cert("v1", "s1", "boundary_violation", 1),
  cert("v2", "s1", "boundary_violation", 2),
  cert("v3", "s1", "boundary_violation", 3),
  cert("c1", "s2", "clear", 4),
  cert("c2", "s2", "clear", 5),
  cert("v4", "s2", "boundary_violation", 6)
]

describe("card gaps in the tally", () => {
  it("certified: two violation sessions, s1 drifted", () => {
    const tally = tallyCertificates(certificates)
    expect(tally).toMatchObject({ long_sessions: 2, stable_sessions: 1 })
    expect(tally.violation_sessions).toEqual([
      { session_id: "s1", last_violation_at: at(3) },
      { session_id: "s2", last_violation_at: at(6) }
    ])
    expect(tally.card_gap_checkpoints).toBeUndefined()
  })

  it("a session's newest violation a card gap: its impact is the newest other one; drift still counts", () => {
    const gaps = new Set(["v3"])
    const tally = tallyCertificates(certificates, gaps)
    expect(tally.violation_sessions[0]).toEqual({ session_id: "s1", last_violation_at: at(2) })
    expect(tally.stable_sessions).toBe(1)
    expect(tally.card_gap_checkpoints).toEqual(["v3"])
    const stored = excludeCardGaps(
      { ...tallyCertificates(certificates), violation_sessions: tallyCertificates(certificates).violation_sessions },
      gaps,
      [{ session_id: "s1", long: true, drifted: true, alerts: [["v1", "v2", "v3"]], last_violation_at: at(2) }],
      at(0)
    )
    expect(stored).toEqual(tally)
  })

  it("all of a session's violations card gaps: no violation session, and its alert no longer counts", () => {
    const gaps = new Set(["v1", "v2", "v3", "v4"])
    const tally = tallyCertificates(certificates, gaps)
    expect(tally).toMatchObject({ long_sessions: 2, stable_sessions: 2, violation_sessions: [] })
    expect(tally.card_gap_checkpoints).toEqual(["v1", "v2", "v3", "v4"])
    const stored = excludeCardGaps(
      tallyCertificates(certificates),
      gaps,
      [
        { session_id: "s2", long: true, drifted: false, alerts: [], last_violation_at: null },
        { session_id: "s1", long: true, drifted: true, alerts: [["v1", "v2", "v3"]], last_violation_at: null }
      ],
      at(0)
    )
    expect(stored).toEqual(tally)
  })

  it("an alert with one checkpoint that is no card gap keeps its session unstable", () => {
    const tally = tallyCertificates(certificates, new Set(["v1", "v2"]))
    expect(tally.stable_sessions).toBe(1)
    expect(tally.violation_sessions).toHaveLength(2)
  })

  it("the workers' adjustment holds the compliance window", () => {
    const stored = excludeCardGaps(
      tallyCertificates(certificates),
      new Set(["v3"]),
      [{ session_id: "s1", long: true, drifted: true, alerts: [["v1", "v2", "v3"]], last_violation_at: at(2) }],
      at(3)
    )
    expect(stored.violation_sessions).toEqual([{ session_id: "s2", last_violation_at: at(6) }])
  })
})

describe("compliance CSV", () => {
  it("quotes fields with commas, quotes and line breaks (RFC 4180), CRLF line ends, a header row", () => {
    expect(csvField("plain")).toBe("plain")
    expect(csvField('a "b", c')).toBe('"a ""b"", c"')
    expect(csvField("x\ny")).toBe('"x\ny"')
    expect(csvField(null)).toBe("")
    const csv = complianceCsv([
      {
        checkpoint_id: "ic-1",
        session_id: "s,1",
        timestamp: at(1),
        verdict: "boundary_violation",
        reclassification: { reclassification_id: "rcl-1", new_type: "card_gap", created_at: at(2) },
        certificate_id: "cert-1"
      }
    ])
    expect(csv.split("\r\n")).toEqual([
      "checkpoint_id,session_id,timestamp,verdict,reclassification_id,reclassified_as,reclassified_at,certificate_id",
      `ic-1,"s,1",${at(1)},boundary_violation,rcl-1,card_gap,${at(2)},cert-1`,
      ""
    ])
  })
})
