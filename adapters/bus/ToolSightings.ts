/**
 * When each tool of an agent was first seen: the clock of the tool policy's grace period for new
 * tools (`grace_period_hours`, core/Policy.ts). Part of the shared agent state (KV
 * `tools.<agent_id>`, KvAgentState.ts), so that neither a restart nor another gateway restarts it.
 *
 * Stored as JSON pairs `[[tool, first_seen_unix_ms], …]` rather than an object keyed by tool: tool
 * names are chosen by the agent, and keys such as `__proto__` or `constructor` do not survive an
 * object's decoding (they are dropped), which would make such a tool new again on every gateway.
 *
 * Bounded per agent (`MAX_TOOLS_PER_AGENT`) and per name (`MAX_TOOL_NAME_CHARS`), each agent under
 * its own key: no agent can evict another's. A tool that cannot be recorded (the agent's record is
 * full, or its name is too long) gets no grace: it is answered as first seen long ago, never as new,
 * or a stream of fresh names would each get a grace period that no restart or gateway remembers.
 *
 * `ToolSightingsCopy` is a gateway's copy: what the shared state holds (learned from it) and what
 * this gateway has noted and not yet seen stored. Lookups are map lookups, on every request.
 */
import * as Either from "effect/Either"
import type * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

/** Tools recorded per agent at most; past it a new tool gets no grace. */
export const MAX_TOOLS_PER_AGENT = 1_000

/**
 * The longest tool name recorded: a policy's patterns are at most as long (core/schema/Policy.ts), so a
 * longer name can only be mapped by a wildcard. Providers' names are at most 64 or 128 characters.
 */
export const MAX_TOOL_NAME_CHARS = 256

/** What the grace period sees for a tool that cannot be recorded: first seen long ago, so no grace. */
export const LONG_AGO = new Date(0)

/** The stored value of `tools.<agent_id>`: at most `MAX_TOOLS_PER_AGENT` pairs of tool and first-seen time. */
export const StoredToolSightings = Schema.Array(
  Schema.Tuple(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(MAX_TOOL_NAME_CHARS)), Schema.NonNegativeInt)
).pipe(Schema.maxItems(MAX_TOOLS_PER_AGENT))

/** Tool → first seen, unix ms. */
export type ToolSightings = ReadonlyMap<string, number>

const decodeStored = Schema.decodeUnknownEither(Schema.parseJson(StoredToolSightings), { errors: "all" })

/** A stored value, decoded; a tool listed twice keeps its earliest time. */
export const parseToolSightings = (json: string): Either.Either<ToolSightings, ParseResult.ParseError> =>
  Either.map(decodeStored(json), (pairs) => {
    const sightings = new Map<string, number>()
    for (const [tool, ms] of pairs) sightings.set(tool, Math.min(ms, sightings.get(tool) ?? ms))
    return sightings
  })

export const stringifyToolSightings = (sightings: ToolSightings): string => JSON.stringify([...sightings])

/**
 * `stored` with `noted` added: a tool already stored keeps the earlier of the two times (two gateways
 * that noted it apart agree on the first), a new one is added while there is room. `changed` is false
 * when the stored value already says all of it (nothing to write).
 */
export const mergeToolSightings = (
  stored: ToolSightings,
  noted: ToolSightings
): { readonly merged: ToolSightings; readonly changed: boolean } => {
  const merged = new Map(stored)
  let changed = false
  for (const [tool, ms] of noted) {
    const first = merged.get(tool)
    if (first === undefined ? merged.size >= MAX_TOOLS_PER_AGENT : first <= ms) continue
    merged.set(tool, ms)
    changed = true
  }
  return { merged, changed }
}

const NONE: ToolSightings = new Map()

export class ToolSightingsCopy {
  /** Per agent, what the shared state holds (as last learned). */
  private readonly stored = new Map<string, ToolSightings>()
  /** Per agent, the revision of the stored value last learned (a deletion's included). */
  private readonly revisions = new Map<string, number>()
  /** Per agent, tools noted here and not yet learned as stored. */
  private readonly noted = new Map<string, Map<string, number>>()

  /** The lookup `evaluatePolicy` takes, for one agent: undefined for a tool it may still note (new now). */
  lookup(agentId: string): (tool: string) => Date | undefined {
    const stored = this.stored.get(agentId) ?? NONE
    const noted = this.noted.get(agentId)
    return (tool) => {
      const first = stored.get(tool)
      const mine = noted?.get(tool)
      // Noted here earlier than stored (another gateway wrote first): ours is the first, until written.
      const ms = first === undefined || (mine !== undefined && mine < first) ? mine : first
      if (ms !== undefined) return new Date(ms)
      return recordable(tool, stored, noted) ? undefined : LONG_AGO
    }
  }

  /**
   * Notes `nowMs` for each tool the agent has not been seen with and that can be recorded. True when
   * one was: the caller writes `notedOf(agentId)` to the shared state. A map lookup per tool otherwise.
   */
  note(agentId: string, tools: ReadonlyArray<{ readonly name: string }>, nowMs: number): boolean {
    const stored = this.stored.get(agentId) ?? NONE
    let noted = this.noted.get(agentId)
    let fresh = false
    for (const { name } of tools) {
      if (stored.has(name) || noted?.has(name) || !recordable(name, stored, noted)) continue
      if (noted === undefined) {
        noted = new Map()
        this.noted.set(agentId, noted)
      }
      noted.set(name, nowMs)
      fresh = true
    }
    return fresh
  }

  /** What this gateway has noted for the agent and not yet seen stored. */
  notedOf(agentId: string): ToolSightings {
    return this.noted.get(agentId) ?? NONE
  }

  /**
   * What the shared state holds for the agent at `revision` (a watched value, or one this gateway
   * wrote), unless a later one is known: the tools in it are no longer waiting to be written.
   * `undefined`: deleted.
   */
  learn(agentId: string, revision: number, sightings: ToolSightings | undefined): void {
    if ((this.revisions.get(agentId) ?? 0) < revision) {
      this.revisions.set(agentId, revision)
      if (sightings === undefined) this.stored.delete(agentId)
      else this.stored.set(agentId, sightings)
    }
    // Pruned even by an older value: a tool once stored stays stored (the record only grows). A tool
    // stored with a later time than noted here stays noted: the write lowers it to the first sighting.
    // One not stored when the record is full is not written, and gets no grace.
    const noted = this.noted.get(agentId)
    if (noted === undefined) return
    const full = (sightings?.size ?? 0) >= MAX_TOOLS_PER_AGENT
    for (const [tool, ms] of noted) {
      const first = sightings?.get(tool)
      if (first === undefined ? full : first <= ms) noted.delete(tool)
    }
    if (noted.size === 0) this.noted.delete(agentId)
  }
}

/** Whether the agent's record has room for `tool` (counting what is noted and not yet stored). */
const recordable = (tool: string, stored: ToolSightings, noted: ToolSightings | undefined): boolean =>
  tool.length > 0 && tool.length <= MAX_TOOL_NAME_CHARS && stored.size + (noted?.size ?? 0) < MAX_TOOLS_PER_AGENT
