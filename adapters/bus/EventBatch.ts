/**
 * The wire format of a batch of events on JetStream: several events of one partition in one
 * message, so that the server, the publisher and the consumer pay their per-message costs (publish,
 * PubAck, storage, delivery, ack) once per batch instead of once per event.
 *
 * A batch message carries the header `Candor-Batch: 1` (the envelope's version) and, as its body, a
 * JSON array of the events in publish order, each `{"subject": <its own event subject>, "payload":
 * <the event as published>}` (and `"traceparent"`, the publisher's trace context, when it has one:
 * beside the event, never in it). Its subject is its first event's. A message without the header is a
 * single event, its body the payload as published: what a batch of one is sent as, and what every
 * message was before batches (a stream may still hold such messages after an upgrade).
 *
 * Upgrade workers before gateways: a worker that predates batches dead-letters a batch message as
 * "not a gateway event".
 */
export const BATCH_HEADER = "Candor-Batch"
export const BATCH_VERSION = "1"

export interface BatchedEvent {
  readonly subject: string
  readonly payload: unknown
  /** The publisher's W3C trace context (what a lone event carries as its `traceparent` header), if any. */
  readonly traceparent?: string | undefined
}

/**
 * One event's part of a batch's body, from its payload already serialized (the caller serializes
 * each payload when it is published, so an unserializable one fails its own publish, not the batch).
 * Built by hand rather than with one `JSON.stringify` of the whole array so that no payload is
 * parsed back or serialized twice.
 */
export const batchPart = (subject: string, json: string, traceparent?: string | undefined): string =>
  traceparent === undefined
    ? `{"subject":${JSON.stringify(subject)},"payload":${json}}`
    : `{"subject":${JSON.stringify(subject)},"traceparent":${JSON.stringify(traceparent)},"payload":${json}}`

export const batchBody = (parts: ReadonlyArray<string>): string => `[${parts.join(",")}]`

/** The events of a batch's parsed body, or undefined when it is not one. */
export const batchEvents = (body: unknown): ReadonlyArray<BatchedEvent> | undefined => {
  if (!Array.isArray(body) || body.length === 0) return undefined
  for (const item of body as ReadonlyArray<unknown>) {
    if (typeof item !== "object" || item === null || typeof (item as BatchedEvent).subject !== "string")
      return undefined
    if (!("payload" in item)) return undefined
  }
  return body as ReadonlyArray<BatchedEvent>
}
