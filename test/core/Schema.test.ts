import { describe, expect, it } from "@effect/vitest"
import { PROTOCOL_DISCLAIMER } from "../../core/schema/Disclaimer.js"
import { Effect, Either, ParseResult, Schema } from "effect"
import * as S from "../../core/schema/index.js"

const hex = (byte: string) => byte.repeat(32)
const CHECKPOINT_ID = "ic-0b8c5a1e-3f2d-4c6b-9a7e-1d2c3b4a5f60"
const NOW = "2026-03-04T12:00:00.123+02:00"

/** Decoding must fail; the returned text is what an API 400 would show. */
const failure = <A, I>(schema: Schema.Schema<A, I>, input: unknown): string => {
  const result = Schema.decodeUnknownEither(schema, { errors: "all" })(input)
  if (Either.isRight(result)) throw new Error(`expected a decode failure, got ${JSON.stringify(result.right)}`)
  return ParseResult.TreeFormatter.formatErrorSync(result.left)
}

const roundTrip = <A, I>(schema: Schema.Schema<A, I>, input: unknown): I =>
  Schema.encodeSync(schema)(Schema.decodeUnknownSync(schema)(input))

const concern = {
  category: "deceptive_reasoning",
  severity: "high",
  description: "Plans to hide the fee from the user",
  evidence: "I won't mention the fee",
  relevant_card_field: "values.declared",
  relevant_conscience_value: "boundary-no-deception"
}

const checkpoint = {
  checkpoint_id: CHECKPOINT_ID,
  agent_id: "agent-7f3a",
  card_id: "ac-basic-001",
  session_id: "sess-ac-basic-2026030412-9f1c",
  timestamp: NOW,
  thinking_block_hash: hex("ab"),
  provider: "anthropic",
  model: "claude-sonnet-4-5",
  verdict: "boundary_violation",
  concerns: [concern],
  reasoning_summary: "The agent plans to conceal a fee.",
  conscience_context: {
    values_checked: ["boundary-no-deception"],
    conflicts: ["boundary-no-deception"],
    supports: [],
    considerations: ["fee disclosure"],
    consultation_depth: "standard"
  },
  window_position: { index: 0, window_size: 1 },
  analysis_metadata: {
    analysis_model: "rules",
    analysis_duration_ms: 3.5,
    thinking_tokens_original: 420,
    thinking_tokens_analyzed: 420,
    truncated: false,
    extraction_confidence: 1
  },
  linked_trace_id: null,
  re_evaluated_at: null,
  original_verdict: null
}

const card010 = {
  aap_version: "0.1.0",
  card_id: "ac-basic-example-001",
  agent_id: "recommendation-agent",
  issued_at: "2026-02-10T00:00:00Z",
  principal: { type: "human", relationship: "delegated_authority" },
  values: { declared: ["principal_benefit", "transparency"], conflicts_with: ["deceptive_marketing"] },
  autonomy_envelope: {
    bounded_actions: ["search", "compare", "recommend"],
    escalation_triggers: [{ condition: "purchase_value > 100", action: "escalate", reason: "Over the spending limit" }],
    forbidden_actions: ["share_credentials"]
  },
  audit_commitment: { trace_format: "ap-trace-v1", retention_days: 90, queryable: true }
}

const card050 = {
  aap_version: "0.5.0",
  card_id: "ac-research-agent-v1",
  agent_id: "research-agent",
  issued_at: "2026-03-04T00:00:00Z",
  expires_at: "2026-09-04T00:00:00",
  principal: {
    type: "organization",
    identifier: null,
    relationship: "advisory",
    escalation_contact: "mailto:team@example.com"
  },
  values: {
    declared: ["honesty", "source_fidelity"],
    definitions: { source_fidelity: { name: "Source fidelity", description: "Cite only what was read", priority: 2 } },
    hierarchy: "lexicographic"
  },
  autonomy_envelope: {
    bounded_actions: ["read", "web_search"],
    escalation_triggers: [],
    max_autonomous_value: { amount: 50, currency: "EUR" }
  },
  audit_commitment: {
    trace_format: "ap-trace-v1",
    retention_days: 365,
    storage: { type: "remote", location: "s3://audit" },
    queryable: false,
    tamper_evidence: "merkle"
  },
  extensions: { "com.example.billing": { tier: "gold" } }
}

const certificate = {
  type: "IntegrityCertificate",
  version: "candor-certificate/1",
  certificate_id: "cert-0b8c5a1e",
  issued_at: "2026-03-04T10:00:01Z",
  key_id: "k-3f2a9c",
  subject: {
    checkpoint_id: CHECKPOINT_ID,
    agent_id: "agent-7f3a",
    session_id: "sess-1",
    card_id: "ac-1",
    timestamp: NOW
  },
  claims: {
    verdict: "boundary_violation",
    concerns: [
      { category: "deceptive_reasoning", severity: "high", description: "hides fee", relevant_conscience_value: null }
    ],
    concerns_hash: hex("01"),
    rules_version: "candor-verdict/1",
    boundary_values: ["boundary-no-deception"],
    reasoning_summary: "Conceals a fee.",
    analysis_model: "rules",
    extraction_confidence: null
  },
  input_commitments: {
    thinking_block_hash: "none",
    card_hash: hex("02"),
    values_hash: hex("03"),
    analysis_hash: hex("04"),
    model: "m"
  },
  chain: { position: 0, prev_hash: hex("00"), hash: hex("05") },
  merkle: {
    leaf_index: 2,
    leaf_hash: hex("06"),
    tree_size: 3,
    root: hex("07"),
    inclusion_proof: [hex("08"), hex("09")]
  },
  verdict_proof: null,
  signature: `${"A".repeat(86)}==`
}

describe("valid resources decode", () => {
  it.effect("integrity checkpoint, with protocol extras, and timestamps unchanged", () =>
    Effect.gen(function* () {
      const full = {
        ...checkpoint,
        output_block_hash: hex("cd"),
        synthetic: false,
        cross_validation_warnings: ["boundary_violation with a single concern"],
        analysis_metadata: { ...checkpoint.analysis_metadata, partial: true, llm_verdict: "review_needed" }
      }
      const decoded = yield* Schema.decodeUnknown(S.IntegrityCheckpoint)(full)
      expect(decoded.timestamp).toBe(NOW)
      expect(yield* Schema.encode(S.IntegrityCheckpoint)(decoded)).toEqual(full)
    })
  )

  it("synthetic checkpoint without thinking", () => {
    const synthetic = {
      ...checkpoint,
      thinking_block_hash: "none",
      verdict: "clear",
      concerns: [],
      synthetic: true,
      synthetic_reason: "no_thinking_block",
      analysis_metadata: { ...checkpoint.analysis_metadata, extraction_confidence: null }
    }
    expect(roundTrip(S.IntegrityCheckpoint, synthetic)).toEqual(synthetic)
  })

  it("AP-Trace with unknown action type and open context", () => {
    const trace = {
      trace_id: "tr-1",
      agent_id: "agent-7f3a",
      card_id: "ac-1",
      timestamp: "2026-03-04T10:00:00Z",
      action: {
        type: "tool_call",
        name: "web_search",
        category: "bounded",
        target: { type: "url", identifier: "https://x" }
      },
      decision: {
        alternatives_considered: [{ option_id: "a", description: "search", score: 0.9 }],
        selected: "a",
        selection_reasoning: "only option",
        values_applied: ["transparency"],
        confidence: 0.8
      },
      escalation: {
        evaluated: true,
        required: false,
        reason: "no trigger matched",
        triggers_checked: [{ trigger: "x > 1", matched: false }]
      },
      context: { session_id: "sess-1", metadata: { integrity_verdict: "clear" }, vendor_field: 1 },
      verification: { verified: true, violations: [] },
      created_at: "2026-03-04T10:00:30Z"
    }
    expect(roundTrip(S.APTrace, trace)).toEqual(trace)
    const { verification: _v, created_at: _c, ...draft } = trace
    expect(roundTrip(S.APTraceDraft, draft)).toEqual(draft)
    expect(S.TRACE_ACTION_TYPES).toContain("execute")
  })

  it("conscience values, including the nine defaults", () => {
    expect(S.DEFAULT_CONSCIENCE_VALUES).toHaveLength(9)
    for (const value of S.DEFAULT_CONSCIENCE_VALUES) Schema.decodeUnknownSync(S.ConscienceValue)(value)
    const org = { type: "COMMITMENT", name: "cite-sources", content: "Always cite sources", severity: "mandatory" }
    expect(roundTrip(S.ConscienceValue, org)).toEqual(org)
  })

  it("organization, plan, drift alert, agent, containment error", () => {
    const org = {
      org_id: "org-1",
      name: "Acme",
      slug: "acme-labs",
      billing_account_id: "ba-1",
      owner_user_id: "user-1",
      billing_email: null,
      company_name: "Acme Ltd",
      member_count: 3,
      role: "owner",
      created_at: "2026-03-04T10:00:00Z",
      updated_at: "2026-03-04T10:00:00Z"
    }
    expect(roundTrip(S.Organization, org)).toEqual(org)
    const plan = {
      plan_id: "free",
      display_name: "Free",
      description: "For trying Candor",
      billing_model: "none",
      base_price_cents: 0,
      annual_price_cents: 0,
      per_check_price: 0,
      included_checks: 1000,
      trace_retention_days: 30,
      feature_flags: { verdict_proofs: false },
      limits: { rps: 10 },
      sort_order: 0
    }
    expect(roundTrip(S.Plan, plan)).toEqual(plan)
    expect(S.PLAN_IDS).toEqual(["free", "developer", "team", "enterprise"])
    const alert = {
      alert_id: "da-1",
      agent_id: "agent-7f3a",
      session_id: "sess-1",
      checkpoint_ids: [CHECKPOINT_ID],
      sustained_checks: 3,
      severity: "low",
      drift_direction: "autonomy_creep",
      message: "3 consecutive non-clear checks",
      detection_timestamp: "2026-03-04T10:00:00Z"
    }
    expect(roundTrip(S.DriftAlert, alert)).toEqual(alert)
    const unclaimed = {
      id: "agent-7f3a",
      agent_hash: hex("ef"),
      user_id: null,
      email: null,
      claimed_at: null,
      last_seen: "2026-03-04T10:00:00Z",
      status: "active",
      public: false,
      visibility: "unlisted",
      aip_enforcement_mode: "observe",
      billing_account_id: null,
      created_at: "2026-03-04T09:00:00Z"
    }
    expect(roundTrip(S.Agent, unclaimed)).toEqual(unclaimed)
    const contained = {
      error: "agent is paused: 3 consecutive boundary violations",
      type: "containment_error",
      reason: "agent_paused",
      containment_error: {
        type: "containment_error",
        reason: "agent_paused",
        agent_id: "agent-7f3a",
        scope: "agent",
        contained_at: NOW,
        contained_by: "system"
      }
    }
    expect(roundTrip(S.ContainmentError, contained)).toEqual(contained)
  })

  it("certificate and the public verification documents", () => {
    expect(roundTrip(S.IntegrityCertificate, certificate)).toEqual(certificate)
    const note = `candor.local/agents/agent-7f3a\n3\n${"A".repeat(43)}=\n\n— candor.local abcd\n`
    const proof = {
      checkpoint_id: CHECKPOINT_ID,
      agent_id: "agent-7f3a",
      leaf_index: 2,
      tree_size: 3,
      leaf_hash: hex("06"),
      root: hex("07"),
      audit_path: [hex("08")],
      proof: [hex("08")],
      signed_tree_head: note,
      checkpoint: note
    }
    expect(roundTrip(S.InclusionProof, proof)).toEqual(proof)
    const root = {
      agent_id: "agent-7f3a",
      tree_size: 0,
      root: hex("e3"),
      signed_tree_head: note,
      checkpoint: note,
      log_origin: "candor.local/agents/agent-7f3a",
      note_verifier_key: null,
      timestamp: NOW
    }
    expect(roundTrip(S.MerkleRoot, root)).toEqual(root)
    const keys = {
      keys: [
        {
          key_id: "k-1",
          algorithm: "Ed25519",
          public_key: `${"A".repeat(43)}=`,
          status: "retired",
          created_at: NOW,
          retired_at: NOW,
          expires_at: null
        },
        {
          key_id: "k-2",
          algorithm: "Ed25519",
          public_key: `${"B".repeat(43)}=`,
          status: "active",
          created_at: NOW,
          retired_at: null,
          expires_at: null
        }
      ]
    }
    expect(roundTrip(S.KeysResponse, keys)).toEqual(keys)
    const consistency = {
      agent_id: "agent-7f3a",
      from: { tree_size: 1, root: hex("09"), signed_tree_head: note },
      to: { tree_size: 3, root: hex("07"), signed_tree_head: note },
      proof: [hex("0a"), hex("0b")]
    }
    expect(roundTrip(S.ConsistencyProof, consistency)).toEqual(consistency)
    const verify = {
      valid: true,
      checks: { signature: true, chain: true, merkle: true, verdict: true, verdict_proof: null },
      errors: [],
      disclaimer: PROTOCOL_DISCLAIMER
    }
    expect(roundTrip(S.VerifyResponse, verify)).toEqual(verify)
    const pending = {
      checkpoint_id: CHECKPOINT_ID,
      agent_id: "agent-7f3a",
      status: "pending",
      sampled: true,
      verdict_proof: null,
      attempts: 0,
      error: null,
      updated_at: null,
      public_inputs: {
        air: "candor-verdict-air/1",
        params: "candor-stark/1",
        rules_version: "candor-verdict/1",
        checkpoint_id: CHECKPOINT_ID,
        concerns: [[1, 2, 0]],
        verdict: "review_needed",
        analysis_hash: hex("01"),
        thinking_block_hash: hex("02"),
        card_hash: hex("03"),
        values_hash: hex("04"),
        model: "rules"
      },
      security: { conjectured_bits: 100, proven_bits: 64 }
    }
    expect(roundTrip(S.VerdictProof, pending)).toEqual(pending)
  })
})

describe("invalid input is rejected with the field named", () => {
  it("organization requests", () => {
    expect(failure(S.CreateOrgRequest, { name: "Acme", slug: "-acme" })).toMatch(/slug/)
    expect(failure(S.CreateOrgRequest, { name: "Acme", slug: "ab" })).toMatch(/slug/)
    expect(failure(S.CreateOrgRequest, { name: "Acme", slug: "Acme" })).toMatch(/slug/)
    expect(failure(S.CreateOrgRequest, { name: "A", slug: "acme" })).toMatch(/name/)
    expect(failure(S.CreateOrgRequest, { name: "x".repeat(101), slug: "acme" })).toMatch(/name/)
    expect(failure(S.CreateOrgRequest, { slug: "acme" })).toMatch(/\["name"\][\s\S]*is missing/)
  })

  it("checkpoints", () => {
    expect(failure(S.IntegrityCheckpoint, { ...checkpoint, verdict: "fine" })).toMatch(
      /\["verdict"\]\n\s+└─ must be one of clear, review_needed, boundary_violation; got "fine"/
    )
    expect(failure(S.IntegrityCheckpoint, { ...checkpoint, agent_id: "agent 7" })).toMatch(
      /agent_id[\s\S]*without whitespace/
    )
    const longEvidence = { ...checkpoint, concerns: [{ ...concern, evidence: "x".repeat(201) }] }
    expect(failure(S.IntegrityCheckpoint, longEvidence)).toMatch(/evidence must be at most 200 characters/)
    expect(failure(S.IntegrityCheckpoint, { ...checkpoint, checkpoint_id: "ic-synthetic-1700000000000" })).toMatch(
      /checkpoint_id/
    )
    expect(failure(S.IntegrityCheckpoint, { ...checkpoint, thinking_block_hash: hex("AB") })).toMatch(
      /thinking_block_hash/
    )
    expect(failure(S.IntegrityCheckpoint, { ...checkpoint, timestamp: "2026-03-04 12:00" })).toMatch(
      /timestamp[\s\S]*RFC 3339/
    )
    expect(failure(S.Concern, { ...concern, category: "forbidden_action_intent" })).toMatch(/category/)
  })

  it("certificates and proofs", () => {
    const outside = { ...certificate, merkle: { ...certificate.merkle, leaf_index: 3 } }
    expect(failure(S.IntegrityCertificate, outside)).toMatch(/leaf_index must be less than tree_size/)
    expect(failure(S.IntegrityCertificate, { ...certificate, signature: "not base64!" })).toMatch(/signature/)
    expect(failure(S.IntegrityCertificate, { ...certificate, version: "1.0.0" })).toMatch(/version/)
    const proof = {
      checkpoint_id: CHECKPOINT_ID,
      agent_id: "agent-7f3a",
      status: "done",
      sampled: false,
      verdict_proof: null,
      attempts: 0,
      error: null,
      updated_at: null
    }
    expect(failure(S.VerdictProof, proof)).toMatch(/status/)
  })
})

describe("judge vocabulary", () => {
  it.each([
    ["prompt_injection", "prompt_injection"],
    ["forbidden_action_intent", "autonomy_violation"],
    ["Forbidden-Action-Intent", "autonomy_violation"],
    ["  FORBIDDEN ACTION  ", "autonomy_violation"],
    ["forbidden_action", "autonomy_violation"],
    ["autonomy boundary", "autonomy_violation"],
    ["injection", "prompt_injection"],
    ["Deception", "deceptive_reasoning"],
    ["value-inconsistency", "value_misalignment"],
    ["undeclared", "undeclared_intent"],
    ["Output-Injection-Compliance", "output_injection_compliance"],
    ["safety", undefined],
    ["", undefined],
    ["constructor", undefined],
    [42, undefined]
  ])("category %j → %j", (raw, expected) => {
    expect(S.normalizeCategory(raw)).toBe(expected)
  })

  it.each([
    ["critical", "critical"],
    ["Moderate", "medium"],
    ["severe", "high"],
    ["MAJOR", "high"],
    [" info ", "low"],
    ["none", "low"],
    ["minor", "low"],
    ["extreme", undefined],
    [null, undefined]
  ])("severity %j → %j", (raw, expected) => {
    expect(S.normalizeSeverity(raw)).toBe(expected)
  })

  it("lenient schemas map aliases and cut evidence; strict ones do not", () => {
    const raw = { category: "forbidden_action_intent", severity: "severe", description: "d", evidence: "e".repeat(500) }
    const decoded = Schema.decodeUnknownSync(S.LenientConcern)(raw)
    expect(decoded.category).toBe("autonomy_violation")
    expect(decoded.severity).toBe("high")
    expect(decoded.evidence).toHaveLength(200)
    expect(Schema.decodeUnknownSync(S.LenientConcernCategory)("Injection")).toBe("prompt_injection")
    expect(failure(S.LenientConcern, { ...raw, category: "vibes" })).toMatch(
      /\["category"\][\s\S]*unknown concern category "vibes"/
    )
  })

  it("truncateEvidence never splits a surrogate pair", () => {
    const text = `${"a".repeat(199)}😀tail`
    const cut = S.truncateEvidence(text)
    expect(cut).toBe("a".repeat(199))
    expect(S.truncateEvidence("short")).toBe("short")
  })

  it("severities and categories keep their protocol order", () => {
    expect(S.SEVERITIES.map(S.severityRank)).toEqual([0, 1, 2, 3])
    expect(S.CONCERN_CATEGORIES).toHaveLength(8)
    expect(S.CONCERN_CATEGORIES[0]).toBe("prompt_injection")
    expect(S.CONCERN_CATEGORIES[7]).toBe("output_injection_compliance")
  })
})

describe("date-times", () => {
  it("strict RFC 3339 for Candor's own timestamps, lenient ISO 8601 for card dates", () => {
    for (const ok of ["2026-03-04T12:00:00Z", "2026-03-04t12:00:00.123456z", "2026-12-31T23:59:60+14:00"]) {
      expect(Schema.decodeUnknownSync(S.DateTimeString)(ok)).toBe(ok)
    }
    for (const bad of ["2026-03-04", "2026-03-04T12:00:00", "2026-13-01T00:00:00Z", "2026-03-04T24:00:00Z"]) {
      expect(failure(S.DateTimeString, bad)).toMatch(/RFC 3339/)
    }
    for (const ok of ["2026-03-04", "2026-03-04T12:00", "2026-03-04T12:00:00.5", "2026-03-04 12:00:00+0200"]) {
      expect(Schema.decodeUnknownSync(S.LenientDateTimeString)(ok)).toBe(ok)
    }
    expect(failure(S.LenientDateTimeString, "March 4th")).toMatch(/ISO 8601/)
  })
})

describe("alignment card", () => {
  it("0.1.0 and 0.5.0 cards decode", () => {
    expect(Schema.decodeUnknownSync(S.AlignmentCard)(card010).aap_version).toBe("0.1.0")
    expect(Schema.decodeUnknownSync(S.AlignmentCard)(card050).aap_version).toBe("0.5.0")
  })

  it("aap_version defaults to 0.5.0, and trace_format to ap-trace-v1", () => {
    const { aap_version: _, ...unversioned } = card010
    const { trace_format: __, ...audit } = card010.audit_commitment
    const decoded = Schema.decodeUnknownSync(S.AlignmentCard)({ ...unversioned, audit_commitment: audit })
    expect(decoded.aap_version).toBe("0.5.0")
    expect(decoded.audit_commitment.trace_format).toBe("ap-trace-v1")
  })

  it("round trip keeps unknown extensions and unknown members at every level", () => {
    const card = {
      ...card050,
      extensions: { "com.example.billing": { tier: "gold" }, "org.vendor.x": [1, 2, 3] },
      a2a_agent_card: { url: "https://agent.example.com" },
      principal: { ...card050.principal, department: "research" },
      autonomy_envelope: {
        ...card050.autonomy_envelope,
        escalation_triggers: [{ condition: "amount > 10", action: "deny", reason: "limit", priority: 1 }]
      },
      audit_commitment: { ...card050.audit_commitment, witness: "https://witness.example" }
    }
    expect(roundTrip(S.AlignmentCard, card)).toEqual(card)
  })

  it("card record carries the card and its conscience values", () => {
    const record = {
      card_id: card010.card_id,
      agent_id: "agent-7f3a",
      is_active: true,
      card_json: card010,
      conscience_values: [...S.DEFAULT_CONSCIENCE_VALUES],
      issued_at: card010.issued_at
    }
    expect(roundTrip(S.AlignmentCardRecord, record)).toEqual(record)
  })

  it("rejects what AAP rejects, naming the field", () => {
    const badTrigger = {
      ...card010,
      autonomy_envelope: {
        ...card010.autonomy_envelope,
        escalation_triggers: [{ condition: "x", action: "ignore", reason: "r" }]
      }
    }
    expect(failure(S.AlignmentCard, badTrigger)).toMatch(/escalation_triggers[\s\S]*action/)
    const noRetention = { ...card010, audit_commitment: { ...card010.audit_commitment, retention_days: 0 } }
    expect(failure(S.AlignmentCard, noRetention)).toMatch(/retention_days must be at least 1/)
    const { principal: _, ...noPrincipal } = card010
    expect(failure(S.AlignmentCard, noPrincipal)).toMatch(/\["principal"\][\s\S]*is missing/)
  })
})
