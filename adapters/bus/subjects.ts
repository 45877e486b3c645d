/**
 * Subject names. An agent's events always land in the same partition, so one actor sees them in
 * order: partition = the first four bytes of SHA-256(agent_id), big-endian, mod 64. Stable across
 * processes and versions (never `String.hashCode`-style or randomised hashing).
 */
import { createHash } from "node:crypto"

export const PARTITIONS = 64

export const partitionOf = (agentId: string, partitions: number = PARTITIONS): number =>
  createHash("sha256").update(agentId, "utf8").digest().readUInt32BE(0) % partitions

/** `<prefix>.events.<partition>.<agent_id>`; the prefix is CANDOR_NATS_PREFIX (default `candor`). */
export const eventSubject = (agentId: string, prefix = "candor"): string =>
  `${prefix}.events.${partitionOf(agentId)}.${agentId}`
