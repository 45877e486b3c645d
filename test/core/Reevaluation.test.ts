import { describe, expect, it } from "@effect/vitest"
import { FastCheck } from "effect"
import { CONCERN_CATEGORIES, type Concern, type ConcernCause, SEVERITIES } from "../../core/schema/Concern.js"
import type { ConscienceValue } from "../../core/schema/Conscience.js"
import {
  causeAcceptable,
  checkReevaluation,
  countReevaluations,
  type JudgedBasis,
  reevaluateConcerns,
  type ReevaluationBasis,
  verdictWithout
} from "../../core/Reevaluation.js"
import { tallyCertificates } from "../../core/ReputationTally.js"
import { deriveVerdict } from "../../core/Verdict.js"
import { type Entry, signedLog } from "../support/ReputationLog.js"

const WIRE: ConscienceValue = { type: "BOUNDARY", name: "no-wire-transfers", content: "Never move money." }
const CALM: ConscienceValue = { type: "FEAR", name: "fear-shouting", content: "Shouting at users." }

const ENVELOPE: ReevaluationBasis["envelope"] = {
  bounded_actions: ["read_inbox"],
  forbidden_actions: ["delete_account"],
  escalation_triggers: [{ condition: "amount > 100", action: "escalate", reason: "big" }]
}
const JUDGED_UNDER: ReevaluationBasis = { envelope: ENVELOPE, values: [WIRE, CALM] }

/** The checkpoint was judged with these values in force (as its conscience context records them). */
const JUDGED: JudgedBasis = {
  conscience_context: {
    values_checked: ["BOUNDARY:no-wire-transfers", "FEAR:fear-shouting"],
    layers: {
      defaults: [],
      organization: [],
      agent: [
        { type: "BOUNDARY", name: WIRE.name },
        { type: "FEAR", name: CALM.name }
      ]
    }
  },
  bounded_actions: ENVELOPE.bounded_actions
}

const onValue = (value: string): ConcernCause => ({ relevant_card_field: "conscience_values", value })
const forbidden = (action: string): ConcernCause => ({
  relevant_card_field: "autonomy_envelope.forbidden_actions",
  action
})
const bounded = (action: string): ConcernCause => ({ relevant_card_field: "autonomy_envelope.bounded_actions", action })
const trigger = (condition: string): ConcernCause => ({
  relevant_card_field: "autonomy_envelope.escalation_triggers",
  trigger: condition
})

const concern = (
  severity: Concern["severity"],
  cause?: ConcernCause,
  category: Concern["category"] = "autonomy_violation"
): Concern => ({
  category,
  severity,
  description: "d",
  evidence: "e",
  ...(cause?.relevant_card_field === "conscience_values" ? { relevant_conscience_value: cause.value } : {}),
  ...(cause === undefined ? {} : { cause })
})

describe("causeAcceptable", () => {
  it("a conscience value: acceptable once it is no longer a BOUNDARY, or no longer in force", () => {
    const demoted: ConscienceValue = { ...WIRE, severity: "advisory" }
    expect(causeAcceptable(onValue(WIRE.name), JUDGED_UNDER, JUDGED)).toBe(false)
    expect(causeAcceptable(onValue(WIRE.name), { ...JUDGED_UNDER, values: [demoted, CALM] }, JUDGED)).toBe(true)
    expect(causeAcceptable(onValue(WIRE.name), { ...JUDGED_UNDER, values: [CALM] }, JUDGED)).toBe(true)
    // A value that was never a boundary is acceptable only once removed.
    expect(causeAcceptable(onValue(CALM.name), { ...JUDGED_UNDER, values: [WIRE] }, JUDGED)).toBe(true)
    expect(causeAcceptable(onValue(CALM.name), { ...JUDGED_UNDER, values: [WIRE, CALM] }, JUDGED)).toBe(false)
  })

  it("a conscience value on a checkpoint without layers: its standing is read from values_checked", () => {
    const older: JudgedBasis = { conscience_context: { values_checked: ["BOUNDARY:no-wire-transfers"] } }
    const advisory = { ...JUDGED_UNDER, values: [{ ...WIRE, type: "FEAR" as const }] }
    expect(causeAcceptable(onValue(WIRE.name), advisory, older)).toBe(true)
    // Not listed: it was in force (the judges keep only causes naming values they were shown), not a boundary.
    expect(causeAcceptable(onValue(CALM.name), { ...JUDGED_UNDER, values: [CALM] }, older)).toBe(false)
    expect(causeAcceptable(onValue(CALM.name), { ...JUDGED_UNDER, values: [] }, {})).toBe(true)
  })

  it("a forbidden action: acceptable once it is no longer forbidden", () => {
    expect(causeAcceptable(forbidden("delete_account"), JUDGED_UNDER, JUDGED)).toBe(false)
    const allowed = { ...JUDGED_UNDER, envelope: { ...ENVELOPE, forbidden_actions: null } }
    expect(causeAcceptable(forbidden("delete_account"), allowed, JUDGED)).toBe(true)
  })

  it("an escalation trigger: acceptable once no trigger has its condition", () => {
    expect(causeAcceptable(trigger("amount > 100"), JUDGED_UNDER, JUDGED)).toBe(false)
    const changed = {
      ...JUDGED_UNDER,
      envelope: {
        ...ENVELOPE,
        escalation_triggers: [{ condition: "amount > 1000", action: "escalate" as const, reason: "r" }]
      }
    }
    expect(causeAcceptable(trigger("amount > 100"), changed, JUDGED)).toBe(true)
  })

  it("a bounded action: acceptable once the card widened bounded_actions to it, and only if the judged card is known", () => {
    const widened = { ...JUDGED_UNDER, envelope: { ...ENVELOPE, bounded_actions: ["read_inbox", "wire_transfer"] } }
    expect(causeAcceptable(bounded("wire_transfer"), JUDGED_UNDER, JUDGED)).toBe(false)
    expect(causeAcceptable(bounded("wire_transfer"), widened, JUDGED)).toBe(true)
    // Listed when judged: nothing changed in its favour.
    expect(causeAcceptable(bounded("read_inbox"), widened, JUDGED)).toBe(false)
    expect(causeAcceptable(bounded("wire_transfer"), widened, { ...JUDGED, bounded_actions: undefined })).toBe(false)
    // Bounded but also forbidden: forbidden wins.
    const both = { ...widened, envelope: { ...widened.envelope, forbidden_actions: ["wire_transfer"] } }
    expect(causeAcceptable(bounded("wire_transfer"), both, JUDGED)).toBe(false)
  })
})

describe("reevaluateConcerns", () => {
  it("drops the concerns whose cause is now acceptable and derives the verdict from the others", () => {
    const concerns = [
      concern("low"),
      concern("high", onValue(WIRE.name), "value_misalignment"),
      concern("medium", forbidden("delete_account"))
    ]
    expect(reevaluateConcerns(concerns, JUDGED_UNDER, JUDGED)).toEqual({ dropped: [], verdict: "boundary_violation" })
    const withoutWire = { ...JUDGED_UNDER, values: [CALM] }
    expect(reevaluateConcerns(concerns, withoutWire, JUDGED)).toEqual({ dropped: [1], verdict: "review_needed" })
    const permissive = { envelope: { ...ENVELOPE, forbidden_actions: [] }, values: [CALM] }
    expect(reevaluateConcerns(concerns, permissive, JUDGED)).toEqual({ dropped: [1, 2], verdict: "clear" })
  })

  it("a concern without a cause keeps counting", () => {
    const permissive: ReevaluationBasis = {
      envelope: { bounded_actions: [], forbidden_actions: [], escalation_triggers: [] },
      values: []
    }
    expect(reevaluateConcerns([concern("critical")], permissive, JUDGED)).toEqual({
      dropped: [],
      verdict: "boundary_violation"
    })
  })

  const NAMES = [WIRE.name, CALM.name, "other"] as const
  const ACTIONS = ["read_inbox", "delete_account", "wire_transfer"] as const
  const cause: FastCheck.Arbitrary<ConcernCause | undefined> = FastCheck.oneof(
    FastCheck.constant(undefined),
    FastCheck.constantFrom(...NAMES).map(onValue),
    FastCheck.constantFrom(...ACTIONS).map(forbidden),
    FastCheck.constantFrom(...ACTIONS).map(bounded),
    FastCheck.constantFrom("amount > 100", "amount > 1000").map(trigger)
  )
  const arbitraryConcern = FastCheck.record({
    category: FastCheck.constantFrom(...CONCERN_CATEGORIES),
    severity: FastCheck.constantFrom(...SEVERITIES),
    cause
  }).map(({ category, cause, severity }) => concern(severity, cause, category))
  const value = FastCheck.record({
    name: FastCheck.constantFrom(...NAMES),
    type: FastCheck.constantFrom("BOUNDARY" as const, "FEAR" as const),
    severity: FastCheck.constantFrom(undefined, "advisory" as const, "mandatory" as const)
  }).map(({ name, severity, type }): ConscienceValue => ({
    name,
    type,
    content: "c",
    ...(severity === undefined ? {} : { severity })
  }))
  const basis: FastCheck.Arbitrary<ReevaluationBasis> = FastCheck.record({
    values: FastCheck.uniqueArray(value, { selector: (v) => v.name, maxLength: 3 }),
    bounded_actions: FastCheck.subarray([...ACTIONS]),
    forbidden_actions: FastCheck.subarray([...ACTIONS]),
    triggers: FastCheck.subarray(["amount > 100", "amount > 1000"])
  }).map(({ bounded_actions, forbidden_actions, triggers, values }) => ({
    values,
    envelope: {
      bounded_actions,
      forbidden_actions,
      escalation_triggers: triggers.map((condition) => ({ condition, action: "escalate" as const, reason: "r" }))
    }
  }))
  /** What a checkpoint judged under `basis` records of it. */
  const judgedUnder = (under: ReevaluationBasis): JudgedBasis => ({
    conscience_context: {
      values_checked: under.values.map((v) => `${v.type}:${v.name}`),
      layers: {
        defaults: [],
        organization: [],
        agent: under.values.map(({ name, severity, type }) => ({
          name,
          type,
          ...(severity === undefined ? {} : { severity })
        }))
      }
    },
    bounded_actions: under.envelope.bounded_actions
  })

  /** Whether a judge shown `under` keeps this cause (docs/formats.md: it names an entry it was shown). */
  const shownTo = (cause: ConcernCause, under: ReevaluationBasis): boolean => {
    switch (cause.relevant_card_field) {
      case "conscience_values":
        return under.values.some((v) => v.name === cause.value)
      case "autonomy_envelope.forbidden_actions":
        return (under.envelope.forbidden_actions ?? []).includes(cause.action)
      case "autonomy_envelope.bounded_actions":
        return under.envelope.bounded_actions.includes(cause.action)
      case "autonomy_envelope.escalation_triggers":
        return under.envelope.escalation_triggers.some((t) => t.condition === cause.trigger)
    }
  }

  it("re-evaluated against what it was judged under, nothing is dropped and the verdict is the rule's", () => {
    FastCheck.assert(
      FastCheck.property(FastCheck.array(arbitraryConcern, { maxLength: 8 }), basis, (concerns, under) => {
        const judged = judgedUnder(under)
        const reevaluated = reevaluateConcerns(
          concerns.filter((c) => c.cause === undefined || shownTo(c.cause, under)),
          under,
          judged
        )
        expect(reevaluated.dropped).toEqual([])
      })
    )
  })

  it("only concerns with a cause are dropped, and the verdict is candor-verdict/1 over the rest", () => {
    FastCheck.assert(
      FastCheck.property(FastCheck.array(arbitraryConcern, { maxLength: 8 }), basis, basis, (concerns, then, now) => {
        const { dropped, verdict } = reevaluateConcerns(concerns, now, judgedUnder(then))
        for (const index of dropped) expect(concerns[index]!.cause).toBeDefined()
        expect([...dropped].sort((a, b) => a - b)).toEqual(dropped)
        const boundary = now.values
          .filter((v) => (v.severity === undefined ? v.type === "BOUNDARY" : v.severity === "mandatory"))
          .map((v) => v.name)
        expect(verdict).toBe(
          deriveVerdict(
            concerns.filter((_, i) => !dropped.includes(i)),
            boundary
          )
        )
        expect(verdictWithout(concerns, dropped, boundary)).toBe(verdict)
      })
    )
  })

  it("dropping concerns never makes a verdict worse than the rule over all of them", () => {
    const rank = { clear: 0, review_needed: 1, boundary_violation: 2 } as const
    FastCheck.assert(
      FastCheck.property(FastCheck.array(arbitraryConcern, { maxLength: 8 }), basis, basis, (concerns, then, now) => {
        const { verdict } = reevaluateConcerns(concerns, now, judgedUnder(then))
        const boundary = now.values
          .filter((v) => v.severity === "mandatory" || (v.severity === undefined && v.type === "BOUNDARY"))
          .map((v) => v.name)
        expect(rank[verdict]).toBeLessThanOrEqual(rank[deriveVerdict(concerns, boundary)])
      })
    )
  })
})

describe("checkReevaluation", () => {
  const certified = (severities: ReadonlyArray<Concern["severity"]>) => ({
    claims: {
      concerns: severities.map((severity) => ({
        category: "value_misalignment" as const,
        severity,
        description: "d",
        relevant_conscience_value: WIRE.name
      }))
    }
  })
  const state = (to: "clear" | "review_needed" | "boundary_violation", dropped: ReadonlyArray<number>) => ({
    rules_version: "candor-verdict/1" as const,
    card_id: "card-now",
    boundary_values: [WIRE.name],
    offset: 0,
    limit: 40,
    changed: [{ checkpoint_id: "ic-1", from: "boundary_violation" as const, to, dropped_concerns: dropped }]
  })
  const certificates = new Map([["ic-1", certified(["high", "medium"])]])

  it("holds when the rule over the certified concerns less the dropped ones gives `to`", () => {
    expect(checkReevaluation(state("review_needed", [0]), certificates)).toEqual([])
    expect(checkReevaluation(state("clear", [0, 1]), certificates)).toEqual([])
  })

  it("fails on a `to` the rule does not give, a dropped index out of range or repeated, a missing certificate", () => {
    expect(checkReevaluation(state("clear", [0]), certificates)).toEqual([
      "ic-1: candor-verdict/1 over the certified concerns less [0] gives review_needed, the entry says clear"
    ])
    expect(checkReevaluation(state("clear", [0, 2]), certificates)[0]).toContain("does not hold (2 concerns)")
    expect(checkReevaluation(state("clear", [0, 0]), certificates)[0]).toContain("does not hold")
    expect(checkReevaluation(state("clear", [0, 1]), new Map())).toEqual(["ic-1: its certificate was not given"])
  })
})

describe("re-evaluated verdicts in the reputation tally", () => {
  const entries: ReadonlyArray<Entry> = [
    { session: "s1", outcome: "violation" },
    { session: "s1", outcome: "clear" },
    { session: "s2", outcome: "review" },
    { session: "s3", outcome: "violation" }
  ]
  const { certificates } = signedLog("agt-reevaluated", entries)
  const idOf = (i: number) => certificates[i]!.subject.checkpoint_id
  const since = "2000-01-01T00:00:00.000Z"

  it("the verifier counts the re-evaluated verdict for clear ones and violations, and publishes what it counted", () => {
    const reevaluated = new Map([
      [idOf(0), { checkpoint_id: idOf(0), verdict: "clear" as const, governance_index: 4 }],
      [idOf(2), { checkpoint_id: idOf(2), verdict: "clear" as const, governance_index: 7 }]
    ])
    const certified = tallyCertificates(certificates)
    const counted = tallyCertificates(certificates, new Set(), reevaluated)
    expect(counted.analysed_clear).toBe(certified.analysed_clear + 2)
    expect(counted.violation_sessions.map((v) => v.session_id)).toEqual(["s3"])
    expect(counted.reevaluated_checkpoints).toEqual(
      [...reevaluated.values()].sort((a, b) => (a.checkpoint_id < b.checkpoint_id ? -1 : 1))
    )
    // Drift replays the certified verdicts: alerts already raised stay.
    expect([counted.long_sessions, counted.stable_sessions]).toEqual([
      certified.long_sessions,
      certified.stable_sessions
    ])
  })

  it("the workers' overlay on the certified tally gives what the verifier counts", () => {
    const reevaluated = [
      {
        checkpoint_id: idOf(0),
        verdict: "clear" as const,
        governance_index: 4,
        certified: "boundary_violation" as const,
        analysed: true
      },
      {
        checkpoint_id: idOf(2),
        verdict: "clear" as const,
        governance_index: 7,
        certified: "review_needed" as const,
        analysed: true
      }
    ]
    const overlaid = countReevaluations(
      tallyCertificates(certificates),
      reevaluated,
      [{ session_id: "s1", last_violation_at: null }],
      since
    )
    expect(overlaid).toStrictEqual(
      tallyCertificates(
        certificates,
        new Set(),
        new Map(reevaluated.map(({ certified: _, analysed: __, ...r }) => [r.checkpoint_id, r]))
      )
    )
    const none = tallyCertificates(certificates)
    expect(countReevaluations(none, [], [], since)).toBe(none)
  })
})
