/**
 * The counters a reputation is computed from (`ReputationTally`, core/Reputation.ts), rebuilt from
 * an agent's certificates alone: what `candor reputation verify` and the tests recompute, and what
 * the workers' incremental counters must always equal for the same log prefix.
 *
 * Every count reads signed fields only:
 * - certified: the certificates given (the log prefix, in log order);
 * - analysed: `claims.analysis_model` is not "none" (a judge read the reasoning); of those, clear ones
 *   by `claims.verdict`;
 * - sessions by `subject.session_id`; a long session has at least three certificates (analysed or
 *   not), and is stable when replaying AIP drift (core/DriftAip.ts, default configuration) over its
 *   certificates in log order raises no alert, exactly as the agent actor replays it when it commits
 *   each checkpoint with its certified verdict;
 * - per session with a `boundary_violation`, its newest one by `subject.timestamp` (the newest weighs
 *   the most, so it is the session's impact).
 *
 * Checkpoints reclassified `card_gap` (`cardGaps`, the compliance component's published
 * `card_gap_checkpoints`, docs/reclassification.md) are no violations, and a drift alert all of whose
 * checkpoints are card gaps does not make its session unstable. Everything else counts them as certified.
 *
 * Checkpoints re-evaluated (`reevaluated`, the integrity ratio's published `reevaluated_checkpoints`,
 * each checkable in the agent's governance log) count with their re-evaluated verdict for the clear
 * ones and the violations; drift replays their certified verdict (alerts already raised stay).
 */
import {
  type AipDriftCheckpoint,
  type AipDriftState,
  DEFAULT_AIP_DRIFT_CONFIG,
  emptyAipDriftState,
  observeAipDrift
} from "./DriftAip.js"
import { DRIFT_MIN_SESSION_CHECKPOINTS, type ReputationTally } from "./Reputation.js"
import type { IntegrityCertificate } from "./schema/Certificate.js"
import type { ReevaluatedVerdict } from "./schema/Reevaluation.js"
import { isToolResultCertificate } from "./ToolResultScope.js"

/** `claims.analysis_model` of a verdict no judge made (no thinking block, analysis failed, too little evidence). */
export const NOT_ANALYSED = "none"

/** The certificate fields the tally reads. */
export type TalliedCertificate = Pick<IntegrityCertificate, "subject" | "claims">

export const isAnalysed = (certificate: TalliedCertificate): boolean =>
  certificate.claims.analysis_model !== NOT_ANALYSED

/** What drift reads of a certificate: its certified verdict and the categories of its concerns. */
export const driftCheckpointOf = (certificate: TalliedCertificate): AipDriftCheckpoint => ({
  checkpoint_id: certificate.subject.checkpoint_id,
  agent_id: certificate.subject.agent_id,
  session_id: certificate.subject.session_id,
  verdict: certificate.claims.verdict,
  concerns: certificate.claims.concerns,
  timestamp: certificate.subject.timestamp
})

interface SessionTally {
  checkpoints: number
  drift: AipDriftState
  alerted: boolean
  /** The newest violation: its time in ms and as certified. */
  lastViolation: { readonly ms: number; readonly at: string } | undefined
}

const byCodeUnit = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

/** Drift alerts carry a detection time; whether one fires does not depend on it. */
const EPOCH = new Date(0)

/** The tally of a log prefix: `certificates` are its first certificates, in log (chain position) order. */
export const tallyCertificates = (
  certificates: Iterable<TalliedCertificate>,
  cardGaps: ReadonlySet<string> = new Set(),
  reevaluated: ReadonlyMap<string, ReevaluatedVerdict> = new Map()
): ReputationTally => {
  let certified = 0
  let analysed = 0
  let analysedClear = 0
  // A Map keeps first-appearance order: violation sessions are listed in log order (computeReputation sums their impacts by value).
  const sessions = new Map<string, SessionTally>()
  const gapsSeen: Array<string> = []
  const reevaluatedSeen: Array<ReevaluatedVerdict> = []
  for (const certificate of certificates) {
    // A tool result's verdict is on what the agent read: it counts for nothing here (core/ToolResultScope.ts).
    if (isToolResultCertificate(certificate)) continue
    certified++
    const reevaluation = reevaluated.get(certificate.subject.checkpoint_id)
    if (reevaluation !== undefined) reevaluatedSeen.push(reevaluation)
    const verdict = reevaluation?.verdict ?? certificate.claims.verdict
    if (isAnalysed(certificate)) {
      analysed++
      if (verdict === "clear") analysedClear++
    }
    const id = certificate.subject.session_id
    let session = sessions.get(id)
    if (session === undefined) {
      session = { checkpoints: 0, drift: emptyAipDriftState, alerted: false, lastViolation: undefined }
      sessions.set(id, session)
    }
    session.checkpoints++
    const cardGap = cardGaps.has(certificate.subject.checkpoint_id)
    if (cardGap) gapsSeen.push(certificate.subject.checkpoint_id)
    const observed = observeAipDrift(session.drift, driftCheckpointOf(certificate), DEFAULT_AIP_DRIFT_CONFIG, EPOCH)
    session.drift = observed.state
    if (observed.alert !== undefined && !observed.alert.checkpoint_ids.every((id) => cardGaps.has(id)))
      session.alerted = true
    if (verdict === "boundary_violation" && !cardGap) {
      const at = certificate.subject.timestamp
      const ms = Date.parse(at)
      if (session.lastViolation === undefined || ms > session.lastViolation.ms) session.lastViolation = { ms, at }
    }
  }
  let longSessions = 0
  let stableSessions = 0
  const violationSessions: Array<{ session_id: string; last_violation_at: string }> = []
  for (const [sessionId, session] of sessions) {
    if (session.checkpoints >= DRIFT_MIN_SESSION_CHECKPOINTS) {
      longSessions++
      if (!session.alerted) stableSessions++
    }
    if (session.lastViolation !== undefined)
      violationSessions.push({ session_id: sessionId, last_violation_at: session.lastViolation.at })
  }
  return {
    certified,
    analysed,
    analysed_clear: analysedClear,
    long_sessions: longSessions,
    stable_sessions: stableSessions,
    violation_sessions: violationSessions,
    ...(gapsSeen.length === 0 ? {} : { card_gap_checkpoints: gapsSeen.sort() }),
    ...(reevaluatedSeen.length === 0
      ? {}
      : { reevaluated_checkpoints: reevaluatedSeen.sort((a, b) => byCodeUnit(a.checkpoint_id, b.checkpoint_id)) })
  }
}
