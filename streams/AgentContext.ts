/**
 * What an agent's checkpoints are judged and committed against: its active card and conscience
 * values, with their commitments, the settings its decisions follow and the organization its events
 * name. Read from the store when the agent's actor is created, again as soon as the agent's settings
 * change (`AgentState.subscribeChanges`: a card, conscience-value, setting or claim update), and at
 * the latest after `CONTEXT_TTL_MS`.
 * The conscience values are resolved as `/conscience-values/effective` resolves them
 * (core/ConscienceResolution.ts), so the API shows the `values_hash` the certificates bind.
 */
import type { AlignmentCard } from "../core/schema/Card.js"
import type { ConscienceLayers, ResolutionMode } from "../core/schema/Checkpoint.js"
import type { ConscienceValue } from "../core/schema/Conscience.js"
import { cardHash, valuesHash } from "../core/Commitments.js"
import { conscienceLayers, resolutionModeOf } from "../core/ConscienceContext.js"
import { boundaryValueNames, type ResolvedConscience } from "../core/ConscienceResolution.js"

export const CONTEXT_TTL_MS = 5 * 60_000

export interface AgentContext {
  readonly card: AlignmentCard | undefined
  readonly values: ReadonlyArray<ConscienceValue>
  readonly cardHash: string
  readonly valuesHash: string
  /** The layers `values` came from and how they were combined: the checkpoints' `conscience_context.layers`. */
  readonly conscience: { readonly layers: ConscienceLayers; readonly mode: ResolutionMode }
  /** Names of the boundary values (`boundaryValueNames`): a high concern naming one crosses the boundary (core/Verdict.ts). */
  readonly boundaryValues: ReadonlyArray<string>
  /** Pause the agent after this many consecutive boundary violations; undefined: never. */
  readonly autoContainThreshold: number | undefined
  /** Paused or killed in the stored settings: auto-containment does not pause it again. */
  readonly contained: boolean
  /** The agent's organization (through its claim), named by its events; null: personal or unclaimed. */
  readonly orgId: string | null
  readonly loadedAt: number
}

/** The part of the agent's stored settings and claim the actor acts on. */
export interface ContextSettings {
  readonly autoContainThreshold: number | undefined
  readonly contained: boolean
  readonly orgId: string | null
}

export const agentContext = (
  card: AlignmentCard | undefined,
  conscience: Pick<ResolvedConscience, "values" | "layered" | "orgId" | "enabled" | "mode">,
  settings: ContextSettings,
  loadedAt: number
): AgentContext => ({
  card,
  values: conscience.values,
  cardHash: cardHash(card),
  valuesHash: valuesHash(conscience.values),
  conscience: { layers: conscienceLayers(conscience.layered), mode: resolutionModeOf(conscience) },
  boundaryValues: boundaryValueNames(conscience.values),
  autoContainThreshold: settings.autoContainThreshold,
  contained: settings.contained,
  orgId: settings.orgId,
  loadedAt
})
