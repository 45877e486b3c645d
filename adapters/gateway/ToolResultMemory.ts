/**
 * Which tool results each agent already had judged, by the SHA-256 of their text: a conversation
 * sends its whole history with every request, and a result is judged (and recorded) once, not once
 * per turn. Bounded: at most `perAgent` results per agent and `total` overall (least recently seen
 * first out: an agent's own oldest result, or the whole of the agent seen least recently), about
 * 170 bytes an entry, so some 45 MB at worst with the defaults. A result forgotten is judged again
 * when it comes back (a second checkpoint), never forwarded unjudged.
 *
 * A result judged a boundary violation is remembered with its checkpoint: an agent in `enforce`
 * that sends it again is refused again without a second judge call.
 */

export interface ToolResultMemoryLimits {
  /** Results remembered per agent. */
  readonly perAgent: number
  /** Results remembered across agents. */
  readonly total: number
}

export const defaultToolResultMemoryLimits: ToolResultMemoryLimits = { perAgent: 256, total: 262_144 }

/** What is remembered of a judged result: `null` when it passed, else its violation's checkpoint id. */
export type Remembered = string | null

export class ToolResultMemory {
  /** Agents, least recently seen first; each agent's results likewise. */
  private readonly agents = new Map<string, Map<string, Remembered>>()
  private size = 0

  constructor(private readonly limits: ToolResultMemoryLimits = defaultToolResultMemoryLimits) {}

  /** What was remembered of this result for this agent (`undefined`: never judged, or forgotten); marks it seen. */
  recall(agentId: string, hash: string): Remembered | undefined {
    const results = this.agents.get(agentId)
    if (results === undefined) return undefined
    const remembered = results.get(hash)
    if (remembered === undefined) return undefined
    results.delete(hash)
    results.set(hash, remembered)
    return remembered
  }

  remember(agentId: string, hash: string, remembered: Remembered): void {
    let results = this.agents.get(agentId)
    if (results === undefined) results = new Map()
    else this.agents.delete(agentId)
    this.agents.set(agentId, results)
    if (results.has(hash)) results.delete(hash)
    else this.size++
    results.set(hash, remembered)
    if (results.size > this.limits.perAgent) {
      results.delete(results.keys().next().value!)
      this.size--
    }
    while (this.size > this.limits.total) {
      const [oldest, theirs] = this.agents.entries().next().value!
      if (oldest === agentId) {
        // Only this agent is left over the total: its own oldest go.
        results.delete(results.keys().next().value!)
        this.size--
        continue
      }
      this.agents.delete(oldest)
      this.size -= theirs.size
    }
  }

  /** Results remembered, across agents (tests, metrics). */
  get entries(): number {
    return this.size
  }
}
