/**
 * The gateway's view of each MCP server's tool pins (issue 28, docs/mcp.md). The pins are shared
 * (adapters/bus/AgentState.ts, `McpToolPins` under the server's id): every gateway of a deployment
 * sees the same, and the API's accept route changes them there. A gateway's own observations are
 * also kept here (the overlay) from the moment it makes them, because writing the shared state
 * takes a round trip: the agent that listed a changed tool may call it before the write is back, and
 * that call must already be refused.
 *
 * Effective state of a tool: pinned to the shared pin, else to this gateway's; changed when the
 * shared state says so, or when this gateway saw a change whose hash the shared pin has not since
 * accepted. Bounded: `MAX_PINNED_TOOLS` names per server (tools listed beyond are not pinned), and
 * the overlay holds at most `MAX_SERVERS` servers (the oldest forgotten first: it is only a cache of
 * writes already sent).
 */
import { MAX_PINNED_TOOLS, pinOf } from "../../core/ToolDefinitionPin.js"
import type { AgentState, McpToolPins } from "../bus/AgentState.js"

const MAX_SERVERS = 10_000

interface Overlay {
  readonly pinned: Map<string, string>
  readonly changed: Map<string, string>
  /** Tools whose definitions cannot be pinned (too large): refused under an enforcing policy. */
  readonly unpinnable: Map<string, string>
}

export interface ToolChange {
  readonly tool: string
  readonly previous: string
  readonly hash: string
}

export interface Observation {
  /** Definitions that differ from their pins, first seen now. */
  readonly changes: ReadonlyArray<ToolChange>
  /** The pins to share, when this list changed them. */
  readonly patch: McpToolPins | undefined
  /** Tools listed past the per-server bound, not pinned. */
  readonly unpinned: number
}

const own = (record: Readonly<Record<string, string>>, key: string): string | undefined =>
  Object.prototype.hasOwnProperty.call(record, key) ? record[key] : undefined

export class ToolPins {
  private readonly overlays = new Map<string, Overlay>()

  constructor(private readonly state: Pick<AgentState["Type"], "peekKey">) {}

  private shared(serverId: string): McpToolPins {
    return this.state.peekKey(serverId).mcpPins ?? { pinned: {}, changed: {} }
  }

  private overlay(serverId: string): Overlay {
    let overlay = this.overlays.get(serverId)
    if (overlay === undefined) {
      if (this.overlays.size >= MAX_SERVERS) this.overlays.delete(this.overlays.keys().next().value!)
      overlay = { pinned: new Map(), changed: new Map(), unpinnable: new Map() }
      this.overlays.set(serverId, overlay)
    }
    return overlay
  }

  /** The pinned hash of a tool, if any. */
  pinned(serverId: string, tool: string): string | undefined {
    return own(this.shared(serverId).pinned, tool) ?? this.overlays.get(serverId)?.pinned.get(tool)
  }

  /** The listed hash that differs from the tool's pin and waits for acceptance, if any. */
  changed(serverId: string, tool: string): string | undefined {
    const shared = this.shared(serverId)
    const known = own(shared.changed, tool)
    if (known !== undefined) return known
    const seen = this.overlays.get(serverId)?.changed.get(tool)
    return seen !== undefined && seen !== own(shared.pinned, tool) ? seen : undefined
  }

  /** Why the tool's definition could not be pinned, when it could not. */
  unpinnable(serverId: string, tool: string): string | undefined {
    return this.overlays.get(serverId)?.unpinnable.get(tool)
  }

  /** One page of a `tools/list` answer (`result.tools`): pins what is new, reports what changed. */
  observe(serverId: string, tools: ReadonlyArray<unknown>): Observation {
    const overlay = this.overlay(serverId)
    const changes: Array<ToolChange> = []
    let dirty = false
    let unpinned = 0
    for (const tool of tools) {
      const pin = pinOf(tool)
      if (pin === undefined) continue
      if (pin._tag === "unpinnable") {
        overlay.unpinnable.set(pin.name, pin.reason)
        continue
      }
      overlay.unpinnable.delete(pin.name)
      const pinned = this.pinned(serverId, pin.name)
      if (pinned === undefined) {
        if (this.count(serverId) >= MAX_PINNED_TOOLS) {
          unpinned++
          continue
        }
        overlay.pinned.set(pin.name, pin.hash)
        dirty = true
      } else if (pinned !== pin.hash && this.changed(serverId, pin.name) !== pin.hash) {
        overlay.changed.set(pin.name, pin.hash)
        changes.push({ tool: pin.name, previous: pinned, hash: pin.hash })
        dirty = true
      }
    }
    return { changes, patch: dirty ? this.merged(serverId) : undefined, unpinned }
  }

  /** Tools pinned for the server, shared and this gateway's. */
  private count(serverId: string): number {
    const shared = this.shared(serverId).pinned
    let n = Object.keys(shared).length
    for (const tool of this.overlays.get(serverId)?.pinned.keys() ?? []) if (own(shared, tool) === undefined) n++
    return n
  }

  /** The shared pins with this gateway's observations added: what it writes back. */
  private merged(serverId: string): McpToolPins {
    const shared = this.shared(serverId)
    const overlay = this.overlays.get(serverId)
    // Maps, then `fromEntries`: a tool named `__proto__` stays a plain member (an assignment would not).
    const pinned = new Map(Object.entries(shared.pinned))
    const changed = new Map(Object.entries(shared.changed))
    for (const [tool, hash] of overlay?.pinned ?? []) if (!pinned.has(tool)) pinned.set(tool, hash)
    for (const [tool, hash] of overlay?.changed ?? [])
      if (!changed.has(tool) && pinned.get(tool) !== hash) changed.set(tool, hash)
    return { pinned: Object.fromEntries(pinned), changed: Object.fromEntries(changed) }
  }
}
