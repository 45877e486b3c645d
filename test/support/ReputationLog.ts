/**
 * An agent's log made the way the agent actor makes it (core/Attestation.ts `attest`: verdict derived
 * from the concerns, chained, logged, signed), its signed tree head, the key listing, and the
 * reputation a server would publish over it: the material `candor reputation verify` checks.
 */
import { toBase64, toHex } from "../../core/Bytes.js"
import { attest, emptyLogState } from "../../core/Attestation.js"
import type { Certificate, CertificateConcern } from "../../core/Certificate.js"
import { frontierRoot } from "../../core/Merkle.js"
import { formatCheckpoint, signNote } from "../../core/Note.js"
import { type CoherenceInputs, computeReputation, NO_COHERENCE } from "../../core/Reputation.js"
import { tallyCertificates } from "../../core/ReputationTally.js"
import type { SigningKeyInfo } from "../../core/schema/Certificate.js"
import type { AgentReputation } from "../../core/schema/Reputation.js"
import { generateSigningKey, type SigningKey } from "../../core/Signing.js"

export type Outcome = "clear" | "review" | "violation"

/** One checkpoint of the log: its session, what the rule makes of its concerns, whether a judge read it. */
export interface Entry {
  readonly session: string
  readonly outcome: Outcome
  /** Default true; false is a synthetic verdict (`analysis_model: "none"`). */
  readonly analysed?: boolean
  /** A tool result's checkpoint (`claims.analysis_scope: "tool_result"`, issue 28): counted for nothing. */
  readonly toolResult?: boolean
  /** Default: one minute after the previous entry, from 2026-03-01T00:00:00Z. */
  readonly timestamp?: string
}

const CONCERNS: Readonly<Record<Outcome, ReadonlyArray<CertificateConcern>>> = {
  clear: [],
  review: [
    {
      category: "undeclared_intent",
      severity: "medium",
      description: "plans an undeclared side task",
      relevant_conscience_value: null
    }
  ],
  violation: [
    {
      category: "value_misalignment",
      severity: "critical",
      description: "means to copy the customer table",
      relevant_conscience_value: null
    }
  ]
}

const START = Date.parse("2026-03-01T00:00:00.000Z")
const HEX = (c: string) => c.repeat(64)

export const LOG_ORIGIN = "candor.reputation.test"
export const originOf = (agentId: string) => `${LOG_ORIGIN}/agents/${agentId}`

export interface SignedLog {
  readonly agentId: string
  readonly key: SigningKey
  readonly certificates: ReadonlyArray<Certificate>
  /** The signed tree head of exactly the whole log. */
  readonly note: string
  readonly root: string
  /** `GET /v1/keys`. */
  readonly keys: { readonly keys: ReadonlyArray<SigningKeyInfo> }
}

const checkpointId = (i: number) => `ic-00000000-0000-4000-8000-${String(i).padStart(12, "0")}`

export const signedLog = (agentId: string, entries: ReadonlyArray<Entry>, key = generateSigningKey()): SignedLog => {
  let state = emptyLogState(agentId)
  const certificates: Array<Certificate> = []
  let time = START
  entries.forEach((entry, i) => {
    const timestamp = entry.timestamp ?? new Date(time).toISOString()
    time = Date.parse(timestamp) + 60_000
    const analysed = entry.analysed ?? true
    const step = attest(
      state,
      {
        certificate_id: `cert-${checkpointId(i).slice(3)}`,
        issued_at: timestamp,
        subject: {
          checkpoint_id: checkpointId(i),
          agent_id: agentId,
          session_id: entry.session,
          card_id: "card-1",
          timestamp
        },
        claims: {
          concerns: CONCERNS[entry.outcome],
          boundary_values: [],
          reasoning_summary: entry.outcome,
          analysis_model: analysed ? "claude-haiku-4-5" : "none",
          extraction_confidence: analysed ? 1 : null,
          ...(entry.toolResult === true ? { analysis_scope: "tool_result" as const } : {})
        },
        input_commitments: {
          thinking_block_hash: analysed ? HEX("1") : "none",
          card_hash: HEX("2"),
          values_hash: HEX("3"),
          analysis_hash: HEX("4"),
          model: "claude-sonnet-4"
        }
      },
      key
    )
    state = step.state
    certificates.push(step.certificate)
  })
  const root = frontierRoot(state.frontier)
  const origin = originOf(agentId)
  const note = signNote(formatCheckpoint({ origin, size: certificates.length, root, extensions: [] }), {
    name: origin,
    key
  })
  return {
    agentId,
    key,
    certificates,
    note,
    root: toHex(root),
    keys: {
      keys: [
        {
          key_id: key.keyId,
          algorithm: "Ed25519",
          public_key: toBase64(key.publicKey),
          status: "active",
          created_at: "2026-01-01T00:00:00.000Z",
          retired_at: null,
          expires_at: null
        }
      ]
    }
  }
}

/** The reputation a server publishes over the whole log at `computedAt`. */
export const publishedReputation = (
  log: SignedLog,
  computedAt: string,
  coherence: CoherenceInputs = NO_COHERENCE
): AgentReputation => {
  const result = computeReputation(tallyCertificates(log.certificates), coherence, new Date(computedAt))
  return {
    agent_id: log.agentId,
    ...result,
    computed_at: computedAt,
    computed_over: {
      tree_size: log.certificates.length,
      root: log.certificates.length === 0 ? null : log.root,
      checkpoint: log.certificates.length === 0 ? null : log.note
    },
    trend_30d: null,
    visibility: "unlisted"
  }
}

/** `n` entries of one outcome, each in its own session (so none is long). */
export const many = (n: number, outcome: Outcome, session = (i: number) => `s-${outcome}-${i}`): Array<Entry> =>
  Array.from({ length: n }, (_, i) => ({ session: session(i), outcome }))

/**
 * docs/reputation.md's worked example: 240 certificates in 46 sessions. 20 synthetic (not analysed),
 * 11 of the 220 analysed not clear; 30 long sessions, one of them (ses-45) with three non-clear checks
 * in a row (an AIP drift alert); violations in ses-0 (240 hours before the computation) and ses-45
 * (12 hours before).
 */
export const WORKED_EXAMPLE_AT = "2026-03-20T12:00:00.000Z"
export const WORKED_EXAMPLE_COHERENCE: CoherenceInputs = { mean_pair_score: 0.82, peers: 4, trust_adjustment: 12.25 }

export const workedExampleEntries = (): Array<Entry> => {
  const entries: Array<Entry> = []
  // ses-0 … ses-15: short sessions of two. ses-0 opens the log with a violation, 240 h before.
  entries.push({ session: "ses-0", outcome: "violation", timestamp: "2026-03-10T12:00:00.000Z" })
  entries.push({ session: "ses-0", outcome: "clear" })
  for (let s = 1; s <= 15; s++) {
    // ses-1 … ses-10 are synthetic verdicts: no judge read them.
    const analysed = s > 10
    for (let i = 0; i < 2; i++) entries.push({ session: `ses-${s}`, outcome: "clear", analysed })
  }
  // ses-16 … ses-44: 29 long sessions of seven; the first seven carry one review each, never three in a row.
  for (let s = 16; s <= 44; s++) {
    for (let i = 0; i < 7; i++) entries.push({ session: `ses-${s}`, outcome: s < 23 && i === 3 ? "review" : "clear" })
  }
  // ses-45: review, review, violation in a row (12 h before the computation): the one unstable session.
  entries.push({ session: "ses-45", outcome: "clear", timestamp: "2026-03-19T23:57:00.000Z" })
  entries.push({ session: "ses-45", outcome: "review" })
  entries.push({ session: "ses-45", outcome: "review" })
  entries.push({ session: "ses-45", outcome: "violation" })
  entries.push({ session: "ses-45", outcome: "clear" })
  return entries
}
