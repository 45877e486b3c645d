/**
 * Catalogue events (core/schema/WebhookEvents.ts) as they are built: one envelope per occurrence,
 * with an id that is the same wherever the occurrence is reported again (a replayed actor step, a
 * retried API transaction), so webhook receivers and stream clients deduplicate on it.
 *
 *   evt-<first 32 hex of SHA-256("<type>:<source>")>
 *
 * `source` names the occurrence (a checkpoint id, a drift alert id, a containment log id, …); an
 * occurrence without a natural id passes a fresh UUID. Pure: the caller supplies the time and the source.
 */
import { createHash } from "node:crypto"
import type { WebhookEnvelope, WebhookEventType } from "./schema/WebhookEvents.js"

/** No delivery or stream event is larger than this (JSON bytes of the whole envelope). */
export const MAX_EVENT_BYTES = 64 * 1024

export const eventId = (type: string, source: string): string =>
  `evt-${createHash("sha256").update(`${type}:${source}`, "utf8").digest("hex").slice(0, 32)}`

export interface EventOccurrence {
  readonly type: WebhookEventType
  /** What makes this occurrence unique within its type (see the module comment). */
  readonly source: string
  readonly org_id: string | null
  readonly agent_id?: string | undefined
  readonly created_at: Date
  readonly data: unknown
}

/**
 * The envelope of an occurrence. Data whose envelope would pass `MAX_EVENT_BYTES` is replaced by
 * `{truncated: true, bytes}` (the catalogue's data carries ids and metadata, never content, so this
 * only guards against an unexpectedly long list).
 */
export const newEnvelope = (occurrence: EventOccurrence): WebhookEnvelope => {
  const envelope: WebhookEnvelope = {
    id: eventId(occurrence.type, occurrence.source),
    type: occurrence.type,
    created_at: occurrence.created_at.toISOString(),
    org_id: occurrence.org_id,
    ...(occurrence.agent_id === undefined ? {} : { agent_id: occurrence.agent_id }),
    data: occurrence.data
  }
  const bytes = Buffer.byteLength(JSON.stringify(envelope), "utf8")
  return bytes <= MAX_EVENT_BYTES ? envelope : { ...envelope, data: { truncated: true, bytes } }
}

/**
 * Whether `type` is selected by a filter list: an exact name, or a prefix ending in `*`
 * (`verdict.*`, `agent.*`, `*`). An empty list selects everything.
 */
export const typeSelected = (type: string, patterns: ReadonlyArray<string>): boolean =>
  patterns.length === 0 ||
  patterns.some((pattern) => (pattern.endsWith("*") ? type.startsWith(pattern.slice(0, -1)) : type === pattern))
