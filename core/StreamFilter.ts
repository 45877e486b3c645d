/**
 * What a live stream client asks for (`GET /v1/stream`, docs/stream.md) and what it is sent: the
 * type filter, the resume position, and the frames of both formats. Pure: the handler authorises
 * and reads the feed.
 */
import type { WebhookEnvelope } from "./schema/WebhookEvents.js"
import { WEBHOOK_EVENT_TYPE_NAMES, isWebhookEventType } from "./schema/WebhookEvents.js"
import { typeSelected } from "./Events.js"

export type TypeFilter =
  | { readonly _tag: "Patterns"; readonly patterns: ReadonlyArray<string> }
  | {
      readonly _tag: "Invalid"
      readonly error: string
    }

/**
 * `?types=` as patterns: comma-separated catalogue names or prefixes ending in `*`. A name not in the
 * catalogue, or a prefix that selects none of it, is refused (a typo would otherwise be a stream
 * that never says anything). Absent or empty: every type.
 */
export const parseTypeFilter = (text: string | undefined): TypeFilter => {
  const patterns = (text ?? "")
    .split(",")
    .map((pattern) => pattern.trim())
    .filter((pattern) => pattern !== "")
  const refused = patterns.filter((pattern) =>
    pattern.endsWith("*")
      ? pattern.slice(0, -1).includes("*") || !WEBHOOK_EVENT_TYPE_NAMES.some((name) => typeSelected(name, [pattern]))
      : !isWebhookEventType(pattern)
  )
  return refused.length === 0
    ? { _tag: "Patterns", patterns }
    : {
        _tag: "Invalid",
        error: `types: ${refused.map((p) => JSON.stringify(p)).join(", ")} ${refused.length === 1 ? "matches" : "match"} no event type (GET /v1/webhooks/event-types lists them)`
      }
}

export type ResumeFrom =
  | { readonly _tag: "After"; readonly id: string }
  | { readonly _tag: "Since"; readonly at: Date }
  | { readonly _tag: "Now" }
  | { readonly _tag: "Invalid"; readonly error: string }

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/
const EVENT_ID = /^evt-[0-9a-f]{32}$/

/** `Last-Event-ID` (wins) or `?since=`: an event id, or an RFC 3339 time; neither: from now. */
export const resumeFrom = (lastEventId: string | undefined, since: string | undefined): ResumeFrom => {
  const value = (lastEventId ?? since)?.trim()
  if (value === undefined || value === "") return { _tag: "Now" }
  if (EVENT_ID.test(value)) return { _tag: "After", id: value }
  const at = RFC3339.test(value) ? new Date(value) : undefined
  if (at !== undefined && !Number.isNaN(at.getTime())) return { _tag: "Since", at }
  return {
    _tag: "Invalid",
    error: `${lastEventId === undefined ? "since" : "Last-Event-ID"}: must be an event id (evt-…) or an RFC 3339 time`
  }
}

/** One Server-Sent Event: the id to resume after, the type, the envelope (JSON has no newlines). */
export const sseFrame = (envelope: WebhookEnvelope): string =>
  `id: ${envelope.id}\nevent: ${envelope.type}\ndata: ${JSON.stringify(envelope)}\n\n`

/** One NDJSON line. */
export const ndjsonLine = (envelope: WebhookEnvelope): string => `${JSON.stringify(envelope)}\n`

/** The keep-alive of each format: an SSE comment, an empty NDJSON line (readers skip empty lines). */
export const heartbeatFrame = (format: "sse" | "ndjson"): string => (format === "sse" ? ": heartbeat\n\n" : "\n")
