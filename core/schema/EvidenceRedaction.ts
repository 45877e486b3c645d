/**
 * How much of the reasoning a judge's text may carry once it is stored: `none` keeps the excerpts,
 * `mask` replaces e-mail addresses, keys and tokens, card numbers and digit runs, `omit` stores no
 * excerpt at all (docs/security.md, "Evidence redaction"). The deployment (CANDOR_EVIDENCE_REDACTION)
 * and the organization each choose one; the stricter applies, so an organization can only tighten
 * what the operator decided, never loosen it.
 */
import * as Schema from "effect/Schema"

export const EVIDENCE_REDACTION_MODES = ["none", "mask", "omit"] as const

export const EvidenceRedactionMode = Schema.Literal(...EVIDENCE_REDACTION_MODES).annotations({
  identifier: "EvidenceRedactionMode",
  description: "none: excerpts kept; mask: secrets and personal data replaced by [redacted]; omit: no excerpt stored"
})
export type EvidenceRedactionMode = typeof EvidenceRedactionMode.Type

const STRICTNESS: Record<EvidenceRedactionMode, number> = { none: 0, mask: 1, omit: 2 }

/** The stricter of two modes (omit > mask > none). */
export const stricterRedaction = (a: EvidenceRedactionMode, b: EvidenceRedactionMode): EvidenceRedactionMode =>
  STRICTNESS[b] > STRICTNESS[a] ? b : a

export const EvidenceRedactionUpdate = Schema.Struct({
  mode: EvidenceRedactionMode.annotations({
    message: (issue) => ({ message: `must be none, mask or omit; got ${JSON.stringify(issue.actual)}`, override: true })
  })
}).annotations({ identifier: "EvidenceRedactionUpdate" })

export const OrgEvidenceRedaction = Schema.Struct({
  org_id: Schema.String,
  evidence_redaction: EvidenceRedactionMode
}).annotations({
  identifier: "OrgEvidenceRedaction",
  description: "The organization's mode; the deployment's CANDOR_EVIDENCE_REDACTION applies instead when stricter"
})
