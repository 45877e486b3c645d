/**
 * What an agent's checkpoints are judged and committed against: its active card and conscience
 * values, with their commitments. Read from the store when the agent's actor is created and again
 * after `CONTEXT_TTL_MS` (the spec's five-minute conscience-value cache), so a card update reaches
 * the actors without a restart.
 */
import type { AlignmentCard } from "../core/schema/card.js"
import type { ConscienceValue } from "../core/schema/conscience.js"
import { cardHash, valuesHash } from "../core/commitments.js"

export const CONTEXT_TTL_MS = 5 * 60_000

export interface AgentContext {
  readonly card: AlignmentCard | undefined
  readonly values: ReadonlyArray<ConscienceValue>
  readonly cardHash: string
  readonly valuesHash: string
  /** Names of the BOUNDARY values: a high concern naming one crosses the boundary (core/verdict.ts). */
  readonly boundaryValues: ReadonlyArray<string>
  /** Pause the agent after this many consecutive boundary violations; undefined: never. */
  readonly autoContainThreshold: number | undefined
  readonly loadedAt: number
}

export const agentContext = (
  card: AlignmentCard | undefined,
  values: ReadonlyArray<ConscienceValue>,
  autoContainThreshold: number | undefined,
  loadedAt: number
): AgentContext => ({
  card,
  values,
  cardHash: cardHash(card),
  valuesHash: valuesHash(values),
  boundaryValues: values.filter((value) => value.type === "BOUNDARY").map((value) => value.name),
  autoContainThreshold,
  loadedAt
})
