/**
 * One agent's reputation recomputed and stored (docs/reputation-storage.md), shared by the workers
 * (after commits, and the periodic sweep) and the API (a score read before any was stored).
 *
 * One transaction under the lock of the agent's tally row, so two recomputations of one agent (two
 * workers that both believe they own its partition, a worker and the API) take turns:
 * 1. the checkpoints from the tally's tree size to the chain head move the tally (core/ReputationIncrement.ts);
 * 2. `computeReputation` at `now` (the Effect clock) over the tally, the sessions whose newest
 *    violation is within the compliance window, and the coherence inputs (adapters/store/CoherenceInputs.ts),
 *    with the checkpoints reclassified `card_gap` taken out (core/Reclassification.ts) and the
 *    verdicts AIP re-evaluations changed counted instead of the certified ones (core/Reevaluation.ts);
 * 3. the score is stored over the signed tree head of exactly the tally's size (`computed_over`);
 * 4. history: a `recomputation` row when the score, grade, confidence or eligibility changed, and
 *    the week's `weekly_snapshot` if it has none;
 * 5. webhooks, in the outbox with the score: reputation.score_changed when the score moved more
 *    than 10 points from the last one notified (so a slow slide alerts once it adds up),
 *    reputation.grade_changed when the grade differs from the last one notified. The first score of
 *    an agent is its baseline and notifies nothing.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { reputationGradeEvent, reputationScoreEvent } from "../core/EventData.js"
import { newEnvelope } from "../core/Events.js"
import { COMPLIANCE_WINDOW_MS, computeReputation } from "../core/Reputation.js"
import { advanceTally, isoWeekStart, SCORE_CHANGE_THRESHOLD } from "../core/ReputationIncrement.js"
import type { ComputedOver, ReputationHistoryItem } from "../core/schema/Reputation.js"
import type { WebhookEventType } from "../core/schema/WebhookEvents.js"
import { coherenceInputsOf } from "../adapters/store/CoherenceInputs.js"
import type { CoherenceRepo } from "../adapters/store/CoherenceRepo.js"
import * as ReclassificationRepo from "../adapters/store/ReclassificationRepo.js"
import * as ReevaluationRepo from "../adapters/store/ReevaluationRepo.js"
import { excludeCardGaps } from "../core/Reclassification.js"
import { countReevaluations } from "../core/Reevaluation.js"
import * as TrustEdgeRepo from "../adapters/store/TrustEdgeRepo.js"
import { downstreamOf } from "../core/TrustPropagation.js"
import { type RecomputationReads, ReputationRepo, type ScoreRecord } from "../adapters/store/ReputationRepo.js"
import { Store, StoreError } from "../adapters/store/Store.js"
import { transaction } from "../adapters/store/Transaction.js"
import { eventDraft } from "../adapters/store/EventOutbox.js"

const DAY_MS = 86_400_000
/** What `cardGaps` and `reevaluated` answer for an agent with none: spared when the reads say so. */
const NO_CARD_GAPS = { gaps: new Set<string>(), sessions: [] } as const
const NO_REEVALUATIONS = { checkpoints: [], sessions: [] } as const
/** trend_30d compares with the newest history score this long before the computation. */
const TREND_MS = 30 * DAY_MS

export interface Recomputed {
  readonly record: ScoreRecord
  /** Checkpoints newly counted by this recomputation. */
  readonly counted: number
  /** The webhook events it enqueued. */
  readonly events: ReadonlyArray<WebhookEventType>
  /**
   * The base score (no trust adjustment) moved and the agent trusts others (an active edge out of
   * it): the agents it trusts are to be recomputed.
   */
  readonly base_changed: boolean
}

const sameRating = (a: ScoreRecord, b: ScoreRecord): boolean =>
  a.score === b.score && a.grade === b.grade && a.confidence === b.confidence && a.is_eligible === b.is_eligible

/** What a recomputation reads: the store and the repositories of the score's inputs. */
export type RecomputationNeeds =
  | SqlClient.SqlClient
  | Store
  | ReputationRepo
  | ReclassificationRepo.ReclassificationRepo
  | ReevaluationRepo.ReevaluationRepo
  | CoherenceRepo
  | TrustEdgeRepo.TrustEdgeRepo

export const recomputeReputation = (agentId: string): Effect.Effect<Recomputed, StoreError, RecomputationNeeds> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* ReputationRepo
    const store = yield* Store
    const now = new Date(yield* Clock.currentTimeMillis)
    const computedAt = now.toISOString()
    return yield* transaction(
      sql,
      Effect.gen(function* () {
        const before = yield* repo.lockTally(agentId)
        const { head, sessions: batch } = yield* repo.scan(agentId, before.tree_size)
        let counts = before
        if (head > before.tree_size) {
          const known = yield* repo.sessions(
            agentId,
            batch.map((part) => part.session_id)
          )
          const next = advanceTally(before, known, batch, head)
          yield* repo.saveTally(agentId, next.counts, next.sessions, computedAt)
          counts = next.counts
        }

        const since = new Date(now.getTime() - COMPLIANCE_WINDOW_MS).toISOString()
        const reads = yield* repo.recomputationReads(agentId, {
          since,
          trendAt: new Date(now.getTime() - TREND_MS).toISOString(),
          treeSize: counts.tree_size
        })
        const orgId = reads.orgId
        const coherence = yield* coherenceInputsOf(agentId, reads)
        const cardGaps = reads.mayHaveCardGaps
          ? yield* (yield* ReclassificationRepo.ReclassificationRepo).cardGaps(agentId, counts.tree_size)
          : NO_CARD_GAPS
        const reevaluations = reads.mayHaveReevaluations
          ? yield* (yield* ReevaluationRepo.ReevaluationRepo).reevaluated(agentId, counts.tree_size)
          : NO_REEVALUATIONS
        const tally = countReevaluations(
          excludeCardGaps(
            { ...counts, violation_sessions: reads.violationSessions },
            cardGaps.gaps,
            cardGaps.sessions,
            since
          ),
          reevaluations.checkpoints,
          reevaluations.sessions,
          since
        )
        const result = computeReputation(tally, coherence, now)
        const baseScore =
          coherence.trust_adjustment === 0
            ? result.score
            : computeReputation(tally, { ...coherence, trust_adjustment: 0, trusters: undefined }, now).score
        const computedOver = yield* computedOverOf(store, agentId, counts.tree_size, reads.treeHead)
        const past = reads.scoreAt
        const record: ScoreRecord = {
          agent_id: agentId,
          ...result,
          computed_at: computedAt,
          computed_over: computedOver,
          trend_30d: past === undefined ? null : result.score - past
        }

        const previous = reads.stored
        const item = (kind: ReputationHistoryItem["kind"]): ReputationHistoryItem => ({
          score: record.score,
          grade: record.grade,
          confidence: record.confidence,
          checkpoint_count: record.checkpoint_count,
          tree_size: counts.tree_size,
          kind,
          computed_at: computedAt
        })
        if (previous === undefined || !sameRating(previous.record, record))
          yield* repo.appendHistory(agentId, item("recomputation"))
        // The week's snapshot is written by its first recomputation (in the transaction that stored
        // that score): one stored this week means it is there, and the insert can be spared.
        const weekStart = isoWeekStart(now)
        if (previous === undefined || Date.parse(previous.record.computed_at) < weekStart.getTime())
          yield* repo.appendHistory(agentId, item("weekly_snapshot"), weekStart.toISOString())

        const events: Array<WebhookEventType> = []
        let notifiedScore = previous?.notified_score ?? record.score
        let notifiedGrade = previous?.notified_grade ?? record.grade
        const drafts = []
        if (Math.abs(record.score - notifiedScore) > SCORE_CHANGE_THRESHOLD) {
          drafts.push(eventDraft(newEnvelope(reputationScoreEvent(record, notifiedScore, orgId, now))))
          events.push("reputation.score_changed")
          notifiedScore = record.score
        }
        if (record.grade !== notifiedGrade) {
          drafts.push(eventDraft(newEnvelope(reputationGradeEvent(record, notifiedGrade, orgId, now))))
          events.push("reputation.grade_changed")
          notifiedGrade = record.grade
        }
        yield* store.enqueueOutbox(drafts)
        yield* repo.saveScore(agentId, {
          record,
          notified_score: notifiedScore,
          notified_grade: notifiedGrade,
          base_score: baseScore
        })
        return {
          record,
          counted: counts.tree_size - before.tree_size,
          events,
          base_changed: reads.mayTrustOthers && previous?.base_score !== baseScore
        }
      })
    ).pipe(
      Effect.catchTag("SqlError", (cause) => Effect.fail(new StoreError({ operation: "recomputeReputation", cause })))
    )
  })

/**
 * The log prefix of `treeSize` certificates: the signed tree head stored at exactly that size (the
 * commits store one per agent and batch, and a tally always ends at a chain head), read with the
 * recomputation's other inputs. A size without a stored head (none expected) names its root, unsigned.
 */
const computedOverOf = (
  store: Store["Type"],
  agentId: string,
  treeSize: number,
  head: RecomputationReads["treeHead"]
) =>
  Effect.gen(function* () {
    if (treeSize === 0) return { tree_size: 0, root: null, checkpoint: null } satisfies ComputedOver
    if (head !== undefined)
      return { tree_size: treeSize, root: head.root, checkpoint: head.note } satisfies ComputedOver
    return {
      tree_size: treeSize,
      root: (yield* store.rootAt(agentId, treeSize)) ?? null,
      checkpoint: null
    } satisfies ComputedOver
  })

/**
 * Recomputes `agentId`, then, when its base score moved, the agents whose trust adjustment it feeds:
 * those within 3 hops downstream of it (at most 50, core/TrustPropagation.ts). Their base scores do
 * not depend on trust, so nothing cascades further. Each recomputation is its own transaction.
 */
export const recomputeWithTrust = (agentId: string): Effect.Effect<Recomputed, StoreError, RecomputationNeeds> =>
  Effect.gen(function* () {
    const done = yield* recomputeReputation(agentId)
    if (done.base_changed)
      yield* recomputeAll(downstreamOf(agentId, yield* (yield* TrustEdgeRepo.TrustEdgeRepo).outgoingGraph(agentId)))
    return done
  })

/** Recomputes these agents one after another (their trust adjustments after an edge or a base score moved). */
export const recomputeAll = (agentIds: Iterable<string>): Effect.Effect<void, StoreError, RecomputationNeeds> =>
  Effect.forEach(agentIds, (id) => recomputeReputation(id), { discard: true })
