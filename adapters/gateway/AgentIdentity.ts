/**
 * Who is calling. The agent is its provider key (hashed by the adapter; the key itself is never
 * kept) plus an optional `x-candor-agent` name, so a fleet sharing one key stays distinguishable:
 *
 *   agent_id   = "agt-" + hex(SHA-256("candor/v1/agent\0" ‖ key_hash_hex ‖ "\0" ‖ name))[0..32)
 *   session_id = x-candor-session, else
 *                "ses-" + hex(SHA-256("candor/v1/derived-session\0" ‖ key_hash_hex ‖ "\0" ‖ name ‖ "\0" ‖ hour))[0..32)
 *
 * with `name` empty when the header is absent and `hour` = floor(unix ms / 3 600 000) in decimal: calls
 * of one agent within the same clock hour share a derived session. 128 bits of the digest are plenty
 * for an identifier and keep subjects and URLs short.
 *
 * The derived session is computed from the key's hash, never from the agent id: the agent id is
 * public (URLs, certificates, reputation pages) and the hour is anyone's guess, so a session derived
 * from them could be addressed by anyone (`x-candor-session` set to another agent's derived id). The
 * key's hash never leaves Candor, and every gateway of a split deployment computes the same one.
 */
import { toHex, utf8 } from "../../core/Bytes.js"
import { taggedHash } from "../../core/Hash.js"

const HOUR_MS = 3_600_000

/** The core's domain-separated hash (`candor/v1/<purpose>\0 ‖ data`), hex, cut to 128 bits. */
const shortTaggedHex = (purpose: string, data: string): string => toHex(taggedHash(purpose, utf8(data))).slice(0, 32)

export const agentIdOf = (keyHash: string, name: string | undefined): string =>
  "agt-" + shortTaggedHex("agent", `${keyHash}\0${name ?? ""}`)

export const derivedSessionId = (keyHash: string, name: string | undefined, nowMs: number): string =>
  "ses-" + shortTaggedHex("derived-session", `${keyHash}\0${name ?? ""}\0${Math.floor(nowMs / HOUR_MS)}`)

/** A header value as one string: the first of repeated values, trimmed; empty counts as absent. */
export const headerText = (value: string | ReadonlyArray<string> | undefined): string | undefined => {
  const text = (typeof value === "string" ? value : value?.[0])?.trim()
  return text === undefined || text === "" ? undefined : text
}

/**
 * The agent and derived session ids of recent callers, by key hash and agent name: a request then
 * costs one SHA-256 (its key's, which is never kept: the cache holds only hashes) instead of three.
 * Bounded; when full the oldest entry goes (it is only recomputed).
 */
export class AgentIds {
  private readonly known = new Map<
    string,
    { readonly agentId: string; readonly hour: number; readonly sessionId: string }
  >()

  constructor(private readonly capacity: number = 10_000) {}

  /** `agentIdOf(keyHash, name)` and `derivedSessionId(keyHash, name, nowMs)`, from the cache when it has them. */
  lookup(
    keyHash: string,
    name: string | undefined,
    nowMs: number
  ): { readonly agentId: string; readonly sessionId: string } {
    const key = name === undefined ? keyHash : `${keyHash}\0${name}`
    const hour = Math.floor(nowMs / HOUR_MS)
    let entry = this.known.get(key)
    if (entry === undefined) {
      if (this.known.size >= this.capacity) {
        const oldest = this.known.keys().next()
        if (!oldest.done) this.known.delete(oldest.value)
      }
      const agentId = agentIdOf(keyHash, name)
      entry = { agentId, hour, sessionId: derivedSessionId(keyHash, name, nowMs) }
      this.known.set(key, entry)
    } else if (entry.hour !== hour) {
      // A new entry rather than a changed one: what earlier callers were given stays as it was.
      entry = { agentId: entry.agentId, hour, sessionId: derivedSessionId(keyHash, name, nowMs) }
      this.known.set(key, entry)
    }
    return entry
  }
}
