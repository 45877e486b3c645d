/**
 * One gateway event to one commit: the actor's step. Pure over the actor's state, so the partition
 * worker can compute a whole batch, commit it in one transaction, and only then keep the new states
 * (a conflict or a failed commit simply drops them).
 */
import { type AgentLogState, attest } from "../core/Attestation.js"
import type { CertificateConcern } from "../core/Certificate.js"
import { analysisHash } from "../core/Commitments.js"
import { withResolution } from "../core/ConscienceContext.js"
import { formatCheckpoint, signNote } from "../core/Note.js"
import type { IntegrityCheckpoint } from "../core/schema/Checkpoint.js"
import type { GatewayEvent } from "../core/schema/Event.js"
import type { APTrace } from "../core/schema/Trace.js"
import type { SigningKey } from "../core/Signing.js"
import type { CommitInput, OutboxDraft } from "../adapters/store/Store.js"
import { type AapDriftState, DEFAULT_AAP_DRIFT_CONFIG, observeAapDrift } from "../core/DriftAap.js"
import { type AipDriftState, DEFAULT_AIP_DRIFT_CONFIG, observeAipDrift, windowPosition } from "../core/DriftAip.js"
import { isToolResultCheckpoint, TOOL_RESULT_SCOPE } from "../core/ToolResultScope.js"
import { advanceViolationStreak, autoContainment, shouldContain, type ViolationStreak } from "../core/Containment.js"
import { shouldProve } from "../core/ProofSampling.js"
import { verifyTrace } from "../core/TraceVerification.js"
import type { AgentContext } from "./AgentContext.js"
import { decision, PROVER_OUTBOX } from "./Decisions.js"
import { driftEvent, policyViolationEvent, responsePolicyViolation, verdictEvent } from "../core/EventData.js"
import { newEnvelope } from "../core/Events.js"
import { eventDraft } from "../adapters/store/EventOutbox.js"

export interface StepEnv {
  readonly key: SigningKey
  /** CANDOR_LOG_ORIGIN: tree heads name `<origin>/agents/<agent_id>`. */
  readonly logOrigin: string
  readonly now: Date
  /** CANDOR_NATS_PREFIX: decisions go to `<prefix>.alerts.<agent_id>` and `<prefix>.containment.<agent_id>`. */
  readonly subjectPrefix: string
}

/** What one agent's actor holds between events. */
export interface AgentActorState {
  readonly agentId: string
  readonly log: AgentLogState
  readonly context: AgentContext
  /** AAP behavioural drift against the agent's baseline of traces. */
  readonly aap: AapDriftState
  /** Consecutive boundary violations, for auto-containment. */
  readonly streak: ViolationStreak
  /** Contained by auto-containment in this actor's life: not contained again for the same streak. */
  readonly contained: boolean
}

/** The card id the checkpoint is bound to: the active card's, else what the gateway knew. */
const boundCardId = (context: AgentContext, event: GatewayEvent): string =>
  context.card?.card_id ?? event.checkpoint.card_id

/** Certificates are public: concerns without their evidence excerpt (it quotes the thinking). */
const certificateConcerns = (checkpoint: IntegrityCheckpoint): ReadonlyArray<CertificateConcern> =>
  checkpoint.concerns.map((concern) => ({
    category: concern.category,
    severity: concern.severity,
    description: concern.description,
    relevant_conscience_value: concern.relevant_conscience_value ?? null
  }))

/** `cert-` + the checkpoint's UUID: a redelivered event is re-attested under the same id. */
const certificateIdOf = (checkpointId: string): string => `cert-${checkpointId.slice("ic-".length)}`

export const logOriginOf = (logOrigin: string, agentId: string): string => `${logOrigin}/agents/${agentId}`

export interface Step {
  readonly input: CommitInput
  readonly actor: AgentActorState
  readonly session: AipDriftState
}

export const attestEvent = (
  actor: AgentActorState,
  /** The AIP window of the event's session. */
  session: AipDriftState,
  event: GatewayEvent,
  env: StepEnv
): Step => {
  // The layers are the resolution `values_hash` binds; set before `analysisHash`, which covers them.
  const draft: IntegrityCheckpoint = {
    ...event.checkpoint,
    conscience_context: withResolution(event.checkpoint.conscience_context, actor.context.conscience)
  }
  const cardId = boundCardId(actor.context, event)
  // A tool result's checkpoint is chained and certified, and moves no drift window nor violation
  // streak (core/ToolResultScope.ts): what an agent reads must not get it paused.
  const toolResult = isToolResultCheckpoint(draft)
  const timestamp = draft.timestamp
  const attestation = attest(
    actor.log,
    {
      certificate_id: certificateIdOf(draft.checkpoint_id),
      issued_at: env.now.toISOString(),
      subject: {
        checkpoint_id: draft.checkpoint_id,
        agent_id: actor.agentId,
        session_id: draft.session_id,
        card_id: cardId,
        timestamp
      },
      claims: {
        concerns: certificateConcerns(draft),
        boundary_values: actor.context.boundaryValues,
        reasoning_summary: draft.reasoning_summary,
        analysis_model: draft.analysis_metadata.analysis_model,
        extraction_confidence: draft.analysis_metadata.extraction_confidence,
        ...(toolResult ? { analysis_scope: TOOL_RESULT_SCOPE } : {})
      },
      input_commitments: {
        thinking_block_hash: draft.thinking_block_hash,
        card_hash: actor.context.cardHash,
        values_hash: actor.context.valuesHash,
        analysis_hash: analysisHash(draft),
        model: draft.model
      }
    },
    env.key
  )
  const verdict = attestation.certificate.claims.verdict
  const aip = toolResult
    ? { state: session, alert: undefined, position: windowPosition(session) }
    : observeAipDrift(session, { ...draft, verdict }, DEFAULT_AIP_DRIFT_CONFIG, env.now)
  // The gateway derived without the agent's BOUNDARY values; the certified verdict is the one kept.
  const checkpoint: IntegrityCheckpoint = { ...draft, card_id: cardId, verdict, window_position: aip.position }
  const traceDraft = {
    ...event.trace,
    card_id: cardId,
    context: {
      ...event.trace.context,
      metadata: { ...event.trace.context?.metadata, integrity_checkpoint_id: draft.checkpoint_id }
    }
  }
  const aap = toolResult
    ? { state: actor.aap, alert: undefined, similarity: undefined, indicators: [] }
    : observeAapDrift(actor.aap, traceDraft, DEFAULT_AAP_DRIFT_CONFIG, env.now)
  const card = actor.context.card
  const trace: APTrace = {
    ...traceDraft,
    verification:
      card === undefined
        ? { verified: true, violations: [] }
        : verifyTrace(traceDraft, card, aap.similarity === undefined ? {} : { behavioralSimilarity: aap.similarity })
            .verification,
    created_at: env.now.toISOString()
  }
  const alerts = [aip.alert, aap.alert].filter((alert) => alert !== undefined)
  const streak = toolResult ? actor.streak : advanceViolationStreak(actor.streak, checkpoint)
  const contain =
    !actor.contained && !actor.context.contained && shouldContain(streak, actor.context.autoContainThreshold)
  const containment = contain ? autoContainment(streak, env.now) : undefined
  const outbox: Array<OutboxDraft> = alerts.map((alert) => decision(env.subjectPrefix, "alerts", actor.agentId, alert))
  if (containment !== undefined) {
    outbox.push(
      decision(
        env.subjectPrefix,
        "containment",
        actor.agentId,
        { agent_id: actor.agentId, ...containment },
        {
          containment,
          checkpoint_id: streak.last_checkpoint_id,
          session_id: checkpoint.session_id,
          violations: streak.count
        }
      )
    )
  }
  // Catalogue events, committed with the checkpoint (a pause is announced when the decision is applied,
  // services/Containment.ts). Their ids derive from the checkpoint and alert ids: a replayed step repeats them.
  const orgId = actor.context.orgId
  const responsePolicy = responsePolicyViolation(actor.agentId, checkpoint.checkpoint_id, trace.context?.metadata)
  const events = [
    verdictEvent(checkpoint, attestation.certificate.certificate_id, orgId, env.now),
    ...alerts.map((alert) => driftEvent(alert, orgId, env.now)),
    responsePolicy === undefined
      ? undefined
      : policyViolationEvent(responsePolicy, checkpoint.checkpoint_id, orgId, env.now)
  ]
  for (const event of events) if (event !== undefined) outbox.push(eventDraft(newEnvelope(event)))
  if (shouldProve(checkpoint.checkpoint_id, verdict)) {
    outbox.push({ kind: PROVER_OUTBOX, payload: { checkpoint_id: checkpoint.checkpoint_id, agent_id: actor.agentId } })
  }
  return {
    // The tree head is signed once per agent and batch, by the caller (see `signedTreeHead`).
    input: {
      checkpoint,
      trace,
      attestation,
      before: actor.log,
      treeHead: undefined,
      alerts,
      outbox,
      agentName: event.agent_name
    },
    actor: {
      ...actor,
      log: attestation.state,
      aap: aap.state,
      streak,
      contained: streak.count === 0 ? false : actor.contained || contain
    },
    session: aip.state
  }
}

/** The C2SP signed note of an agent's log at `size` with `root` (the tree head). */
export const signedTreeHead = (
  agentId: string,
  size: number,
  root: Uint8Array,
  env: Pick<StepEnv, "key" | "logOrigin">
): string => {
  const origin = logOriginOf(env.logOrigin, agentId)
  return signNote(formatCheckpoint({ origin, size, root, extensions: [] }), { name: origin, key: env.key })
}
