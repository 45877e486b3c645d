/**
 * The derived team card (core/TeamCardDerivation.ts): the worked example, field by field; the
 * same card whatever the order of the members; definitions, the autonomy limit and what is not
 * derived; and that a derived card is a valid team card (what the API's PUT decodes).
 */
import { describe, expect, it } from "@effect/vitest"
import { FastCheck, Schema } from "effect"
import type { AlignmentCard } from "../../core/schema/Card.js"
import { TeamCard } from "../../core/schema/TeamCard.js"
import { deriveTeamCard, type MemberCard } from "../../core/TeamCardDerivation.js"

const card = (agentId: string, edit: Partial<AlignmentCard> = {}): MemberCard => ({
  agent_id: agentId,
  card: {
    aap_version: "0.5.0",
    card_id: `card-${agentId}`,
    agent_id: agentId,
    issued_at: "2026-11-01T00:00:00Z",
    principal: { type: "human", relationship: "delegated_authority" },
    values: { declared: ["honesty"] },
    autonomy_envelope: { bounded_actions: ["reply"], escalation_triggers: [] },
    audit_commitment: { trace_format: "ap-trace-v1", retention_days: 30, queryable: true },
    ...edit
  }
})

const context = { team_id: "team-1", org_id: "org-1" }

const example: ReadonlyArray<MemberCard> = [
  card("agt-a", {
    principal: { type: "human", relationship: "delegated_authority", escalation_contact: "ops@example.test" },
    values: {
      declared: ["honesty", "transparency", "privacy", "honesty"],
      conflicts_with: ["deception"],
      definitions: { privacy: { name: "privacy", description: "A's privacy" } }
    },
    autonomy_envelope: {
      bounded_actions: ["search", "reply"],
      forbidden_actions: ["delete_data"],
      escalation_triggers: [{ condition: "amount > 100", action: "escalate", reason: "large" }],
      max_autonomous_value: { amount: 500, currency: "EUR" }
    },
    audit_commitment: { trace_format: "ap-trace-v1", retention_days: 90, queryable: true, tamper_evidence: "merkle" }
  }),
  card("agt-b", {
    principal: { type: "organization", relationship: "advisory" },
    values: {
      declared: ["privacy", "honesty", "fairness"],
      conflicts_with: ["manipulation", "deception"],
      definitions: { privacy: { name: "privacy", description: "B's privacy" } }
    },
    autonomy_envelope: {
      bounded_actions: ["reply", "summarize"],
      forbidden_actions: ["send_email", "delete_data"],
      escalation_triggers: [
        { condition: "pii detected", action: "deny", reason: "privacy" },
        { condition: "amount > 100", action: "escalate", reason: "large" },
        { condition: "amount > 100", action: "log", reason: "large" }
      ],
      max_autonomous_value: { amount: 200, currency: "EUR" }
    },
    audit_commitment: { trace_format: "ap-trace-v1", retention_days: 365, queryable: false }
  }),
  card("agt-c", { values: { declared: ["honesty", "minimal_data"] } })
]

describe("deriveTeamCard", () => {
  it("the worked example", () => {
    expect(deriveTeamCard(example, context)).toEqual({
      aap_version: "0.5.0",
      team_id: "team-1",
      principal: {
        type: "organization",
        identifier: "org-1",
        relationship: "delegated_authority",
        escalation_contact: "ops@example.test"
      },
      values: {
        // honesty 3, privacy 2, then the ones of a single card by name; a name twice in one card counts once.
        declared: ["honesty", "privacy", "fairness", "minimal_data", "transparency"],
        // The first definition in agent-id order.
        definitions: { privacy: { name: "privacy", description: "A's privacy" } },
        conflicts_with: ["deception", "manipulation"]
      },
      autonomy_envelope: {
        bounded_actions: ["reply", "search", "summarize"],
        forbidden_actions: ["delete_data", "send_email"],
        escalation_triggers: [
          { condition: "amount > 100", action: "escalate", reason: "large" },
          { condition: "amount > 100", action: "log", reason: "large" },
          { condition: "pii detected", action: "deny", reason: "privacy" }
        ],
        max_autonomous_value: { amount: 200, currency: "EUR" }
      },
      // The longest retention; queryable only if every member's is; tamper_evidence is not derived.
      audit_commitment: { trace_format: "ap-trace-v1", retention_days: 365, queryable: false }
    })
  })

  it("ties are broken by name, so the order of the members never matters", () => {
    const ties = [
      card("agt-2", { values: { declared: ["zeal", "care"] } }),
      card("agt-1", { values: { declared: ["beta", "alpha"] } })
    ]
    expect(deriveTeamCard(ties, context).values.declared).toEqual(["alpha", "beta", "care", "zeal"])
    FastCheck.assert(
      FastCheck.property(FastCheck.shuffledSubarray([...example], { minLength: example.length }), (shuffled) => {
        expect(deriveTeamCard(shuffled, context)).toEqual(deriveTeamCard(example, context))
      })
    )
  })

  it("no autonomy limit when members' currencies differ or none declares one; no definitions when none is given", () => {
    const mixed = [
      card("agt-1", {
        autonomy_envelope: {
          bounded_actions: [],
          escalation_triggers: [],
          max_autonomous_value: { amount: 1, currency: "EUR" }
        }
      }),
      card("agt-2", {
        autonomy_envelope: {
          bounded_actions: [],
          escalation_triggers: [],
          max_autonomous_value: { amount: 2, currency: "USD" }
        }
      })
    ]
    const derived = deriveTeamCard(mixed, context)
    expect(derived.autonomy_envelope.max_autonomous_value).toBeUndefined()
    expect(derived.autonomy_envelope.bounded_actions).toEqual([])
    expect(derived.values.definitions).toBeUndefined()
    const plain = deriveTeamCard([card("agt-1"), card("agt-2")], context)
    expect(plain.autonomy_envelope).toEqual({
      bounded_actions: ["reply"],
      forbidden_actions: [],
      escalation_triggers: []
    })
    expect(plain.values).toEqual({ declared: ["honesty"], conflicts_with: [] })
    expect(plain.principal.escalation_contact).toBeNull()
  })

  it("is a valid team card, with no agent_id and none of the team-only members", () => {
    const derived = deriveTeamCard(example, context)
    expect(Schema.decodeUnknownSync(TeamCard)(derived)).toEqual(derived)
    expect(derived).not.toHaveProperty("agent_id")
    expect(derived).not.toHaveProperty("team_mission")
    expect(derived).not.toHaveProperty("coordination_mode")
  })
})
