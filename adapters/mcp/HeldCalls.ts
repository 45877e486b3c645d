/**
 * The `tools/call` requests the MCP proxy holds for a person's decision (docs/approvals.md), by the
 * call's identity (agent, server, MCP session, JSON-RPC id): a client's `notifications/cancelled`
 * names its request by that id, and finds the held call here to withdraw it. Bounded, since every
 * held call keeps a connection open: `perAgent` for one agent (one agent cannot take the others'
 * room), `total` for the process; past either, a call is refused rather than held.
 */

export interface HeldCallLimits {
  readonly perAgent: number
  readonly total: number
}

export const defaultHeldCallLimits: HeldCallLimits = { perAgent: 64, total: 4096 }

/** Who holds a call: its MCP session (the client's header, or none) and its JSON-RPC id, under the agent and server. */
export interface HeldCallKey {
  readonly agentId: string
  readonly serverId: string
  readonly session: string | undefined
  readonly id: string | number
}

/** Why a call could not be held. */
export type HoldRefusal = "busy" | "duplicate"

// The id keeps its type: the string "1" and the number 1 are two requests in JSON-RPC.
const keyOf = (key: HeldCallKey): string => JSON.stringify([key.agentId, key.serverId, key.session ?? null, key.id])

export class HeldCalls {
  private readonly withdrawals = new Map<string, () => void>()
  private readonly perAgent = new Map<string, number>()

  constructor(private readonly limits: HeldCallLimits = defaultHeldCallLimits) {}

  /** Holds a call whose withdrawal is `withdraw`: the function that lets it go, or why it may not be held. */
  hold(key: HeldCallKey, withdraw: () => void): (() => void) | HoldRefusal {
    const id = keyOf(key)
    if (this.withdrawals.has(id)) return "duplicate"
    const held = this.perAgent.get(key.agentId) ?? 0
    if (held >= this.limits.perAgent || this.withdrawals.size >= this.limits.total) return "busy"
    this.withdrawals.set(id, withdraw)
    this.perAgent.set(key.agentId, held + 1)
    let released = false
    return () => {
      if (released) return
      released = true
      this.withdrawals.delete(id)
      const left = (this.perAgent.get(key.agentId) ?? 1) - 1
      if (left === 0) this.perAgent.delete(key.agentId)
      else this.perAgent.set(key.agentId, left)
    }
  }

  /** The client cancelled this request: its held call is withdrawn. Whether one was held. */
  withdraw(key: HeldCallKey): boolean {
    const withdraw = this.withdrawals.get(keyOf(key))
    withdraw?.()
    return withdraw !== undefined
  }

  /** Calls held now (the metric). */
  get size(): number {
    return this.withdrawals.size
  }
}
