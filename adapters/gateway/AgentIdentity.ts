/**
 * Who is calling. The agent is its provider key (hashed by the adapter; the key itself is never
 * kept) plus an optional `x-candor-agent` name, so a fleet sharing one key stays distinguishable:
 *
 *   agent_id   = "agt-" + hex(SHA-256("candor/v1/agent\0" ‖ key_hash_hex ‖ "\0" ‖ name))[0..32)
 *   session_id = x-candor-session, else
 *                "ses-" + hex(SHA-256("candor/v1/session\0" ‖ agent_id ‖ "\0" ‖ hour))[0..32)
 *
 * with `name` empty when the header is absent and `hour` = floor(unix ms / 3 600 000): calls of one
 * agent within the same clock hour share a derived session. 128 bits of the digest are plenty for
 * an identifier and keep subjects and URLs short.
 */
import { toHex, utf8 } from "../../core/Bytes.js"
import { taggedHash } from "../../core/Hash.js"

const HOUR_MS = 3_600_000

/** The core's domain-separated hash (`candor/v1/<purpose>\0 ‖ data`), hex, cut to 128 bits. */
const shortTaggedHex = (purpose: string, data: string): string => toHex(taggedHash(purpose, utf8(data))).slice(0, 32)

export const agentIdOf = (keyHash: string, name: string | undefined): string =>
  "agt-" + shortTaggedHex("agent", `${keyHash}\0${name ?? ""}`)

export const derivedSessionId = (agentId: string, nowMs: number): string =>
  "ses-" + shortTaggedHex("session", `${agentId}\0${Math.floor(nowMs / HOUR_MS)}`)

/** A header value as one string: the first of repeated values, trimmed; empty counts as absent. */
export const headerText = (value: string | ReadonlyArray<string> | undefined): string | undefined => {
  const text = (typeof value === "string" ? value : value?.[0])?.trim()
  return text === undefined || text === "" ? undefined : text
}
