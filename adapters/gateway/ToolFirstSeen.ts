/**
 * When the gateway first saw each tool of each agent: the clock of the policy's grace period for new
 * tools. In memory and bounded (oldest entries go first when full); the actors will persist it.
 * Losing an entry only makes that tool new again, i.e. grants it another grace period: the lenient
 * side, and only for tools the policy does not name (named tools get no grace).
 */

/** Tool names are at most 64–128 characters at every provider; longer ones are cut for the key only. */
const MAX_NAME_CHARS = 256

export class ToolFirstSeen {
  /** `agent_id \0 tool` → first seen, unix ms; insertion order is age order. */
  private readonly firstSeen = new Map<string, number>()

  constructor(private readonly capacity: number = 100_000) {}

  /** The lookup `evaluatePolicy` takes, for one agent. */
  lookup(agentId: string): (tool: string) => Date | undefined {
    return (tool) => {
      const ms = this.firstSeen.get(key(agentId, tool))
      return ms === undefined ? undefined : new Date(ms)
    }
  }

  /** Records `nowMs` for each tool not seen before. */
  note(agentId: string, tools: ReadonlyArray<{ readonly name: string }>, nowMs: number): void {
    for (const { name } of tools) {
      const k = key(agentId, name)
      if (this.firstSeen.has(k)) continue
      if (this.firstSeen.size >= this.capacity) {
        const oldest = this.firstSeen.keys().next()
        if (!oldest.done) this.firstSeen.delete(oldest.value)
      }
      this.firstSeen.set(k, nowMs)
    }
  }

  get size(): number {
    return this.firstSeen.size
  }
}

const key = (agentId: string, tool: string): string =>
  `${agentId}\0${tool.length > MAX_NAME_CHARS ? tool.slice(0, MAX_NAME_CHARS) : tool}`
