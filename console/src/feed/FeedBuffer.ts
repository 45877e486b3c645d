/**
 * The live feed's memory: the newest `capacity` events, each once (an event replayed after a
 * reconnection, or seen again from an older position, is dropped by its id), in arrival order.
 * Bounded, so a feed at 1,000 events per second for hours holds the same few thousand. Pure.
 */

/** The stream's envelope (docs/stream.md, "Frames"). */
export interface FeedEvent {
  readonly id: string
  readonly type: string
  readonly created_at: string
  readonly org_id: string | null
  readonly agent_id?: string | null
  readonly data: Readonly<Record<string, unknown>>
}

export class FeedBuffer {
  private readonly events: Array<FeedEvent> = []
  private readonly ids = new Set<string>()
  /** Events accepted since the start (duplicates excluded), evicted ones included. */
  received = 0

  constructor(readonly capacity: number) {}

  /** Adds what it has not seen; answers how many it took. */
  add(batch: ReadonlyArray<FeedEvent>): number {
    let taken = 0
    for (const event of batch) {
      if (this.ids.has(event.id)) continue
      this.ids.add(event.id)
      this.events.push(event)
      taken++
    }
    const excess = this.events.length - this.capacity
    if (excess > 0) for (const evicted of this.events.splice(0, excess)) this.ids.delete(evicted.id)
    this.received += taken
    return taken
  }

  get size(): number {
    return this.events.length
  }

  /** The events kept, newest first, that `keep` selects. */
  newestFirst(keep: (event: FeedEvent) => boolean = () => true): Array<FeedEvent> {
    const out: Array<FeedEvent> = []
    for (let i = this.events.length - 1; i >= 0; i--) if (keep(this.events[i]!)) out.push(this.events[i]!)
    return out
  }

  clear(): void {
    this.events.length = 0
    this.ids.clear()
  }
}

/** What the feed page groups event types into, for its filters and colours. */
export type FeedCategory = "containment" | "violation" | "drift" | "blocked" | "policy" | "other"

export const FEED_CATEGORIES: ReadonlyArray<{ readonly category: FeedCategory; readonly label: string }> = [
  { category: "containment", label: "Containment" },
  { category: "violation", label: "Verdicts" },
  { category: "drift", label: "Drift" },
  { category: "blocked", label: "Blocked requests" },
  { category: "policy", label: "Policy violations" },
  { category: "other", label: "Other" }
]

export const categoryOf = (type: string): FeedCategory => {
  if (type === "agent.paused" || type === "agent.resumed" || type === "agent.killed") return "containment"
  if (type.startsWith("verdict.")) return "violation"
  if (type === "drift.detected") return "drift"
  if (type === "enforcement.blocked") return "blocked"
  if (type === "policy.violation") return "policy"
  return "other"
}

/** A one-line summary of an event's data: its reason, actor, verdict, tool… whatever it carries. */
export const summaryOf = (event: FeedEvent): string => {
  const data = event.data
  const parts: Array<string> = []
  for (const key of ["action", "reason", "actor", "tool", "verdict", "checkpoint_id", "severity", "new_status"]) {
    const value = data[key]
    if (typeof value === "string" || typeof value === "number") parts.push(`${key}: ${value}`)
  }
  return parts.slice(0, 4).join(" · ")
}
