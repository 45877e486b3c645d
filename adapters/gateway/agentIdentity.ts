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
import { createHash } from "node:crypto"

const HOUR_MS = 3_600_000

export const agentIdOf = (keyHash: string, name: string | undefined): string =>
  "agt-" + createHash("sha256").update(`candor/v1/agent\0${keyHash}\0${name ?? ""}`, "utf8").digest("hex").slice(0, 32)

export const derivedSessionId = (agentId: string, nowMs: number): string =>
  "ses-" +
  createHash("sha256").update(`candor/v1/session\0${agentId}\0${Math.floor(nowMs / HOUR_MS)}`, "utf8").digest("hex")
    .slice(0, 32)

/** A header value as one string: the first of repeated values, trimmed; empty counts as absent. */
export const headerText = (value: string | ReadonlyArray<string> | undefined): string | undefined => {
  const text = (typeof value === "string" ? value : value?.[0])?.trim()
  return text === undefined || text === "" ? undefined : text
}
