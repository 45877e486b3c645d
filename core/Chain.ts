/**
 * The per-agent hash chain: the ordering layer of the record. Every checkpoint of an agent links to
 * the one before it, so a removed, reordered or altered checkpoint breaks every later link.
 *
 *   genesis(agent) = SHA-256("candor/v1/chain-genesis\0" ‖ UTF-8(agent_id))
 *   hash(entry)    = SHA-256("candor/v1/chain\0" ‖ prev_hash (32 bytes) ‖ JCS(entry))
 *
 * The genesis is per agent so that no chain can be spliced onto another agent's; the previous hash is
 * binary and the entry canonical JSON, so no field value can shift a boundary (as `|`-joined text can).
 */
import { bytesEqual, fromHex, toHex, utf8 } from "./Bytes.js"
import { tryCanonicalJson } from "./Canonical.js"
import { taggedHash } from "./Hash.js"
import type { Verdict } from "./schema/Verdict.js"

/** Everything a link commits to: the checkpoint's identity, verdict and input commitments (hashes as hex). */
export interface ChainEntry {
  readonly agent_id: string
  readonly position: number
  readonly checkpoint_id: string
  readonly session_id: string
  readonly card_id: string
  readonly timestamp: string
  readonly verdict: Verdict
  readonly rules_version: string
  readonly concerns_hash: string
  readonly thinking_block_hash: string
  readonly card_hash: string
  readonly values_hash: string
  readonly analysis_hash: string
  readonly model: string
}

/** A stored link: the entry with the hash it extends and its own hash (both hex). */
export interface ChainLink {
  readonly entry: ChainEntry
  readonly prev_hash: string
  readonly hash: string
}

/** The head an agent's next entry extends; `position` is the next entry's position. */
export interface ChainHead {
  readonly position: number
  readonly hash: Uint8Array
}

export const genesisHash = (agentId: string): Uint8Array => taggedHash("chain-genesis", utf8(agentId))

export const genesisHead = (agentId: string): ChainHead => ({ position: 0, hash: genesisHash(agentId) })

/** The hash of `entry` after `prevHash`; `undefined` when the entry has no canonical JSON form. */
export const chainHash = (prevHash: Uint8Array, entry: ChainEntry): Uint8Array | undefined => {
  const json = tryCanonicalJson(entry)
  return json === undefined ? undefined : taggedHash("chain", prevHash, utf8(json))
}

/** Appends `entry` at `head`: the entry must sit at the head's position. */
export const appendToChain = (
  head: ChainHead,
  entry: ChainEntry
): { readonly link: ChainLink; readonly head: ChainHead } => {
  if (entry.position !== head.position) {
    throw new RangeError(`chain entry position ${entry.position} does not extend head at ${head.position}`)
  }
  const hash = chainHash(head.hash, entry)
  if (hash === undefined) throw new TypeError("chain entry has no canonical JSON form")
  return {
    link: { entry, prev_hash: toHex(head.hash), hash: toHex(hash) },
    head: { position: head.position + 1, hash }
  }
}

export type ChainVerification =
  | { readonly valid: true; readonly head: ChainHead | undefined }
  | { readonly valid: false; readonly index: number; readonly error: string }

/**
 * Checks one link on its own: its hash is the hash of its entry after its `prev_hash`, and a
 * position-0 link extends the agent's genesis.
 */
export const verifyLink = (link: ChainLink): string | undefined => {
  const prev = fromHex(link.prev_hash)
  const claimed = fromHex(link.hash)
  if (prev === undefined || prev.length !== 32) return "prev_hash is not 32 bytes of hex"
  if (claimed === undefined || claimed.length !== 32) return "hash is not 32 bytes of hex"
  const position = link.entry.position
  if (!Number.isSafeInteger(position) || position < 0) return "position is not a non-negative integer"
  if (position === 0 && !bytesEqual(prev, genesisHash(link.entry.agent_id)))
    return "first link does not extend the agent's genesis"
  const computed = chainHash(prev, link.entry)
  if (computed === undefined) return "entry has no canonical JSON form"
  return bytesEqual(computed, claimed) ? undefined : "hash does not match the entry"
}

/**
 * Verifies a run of consecutive links of one agent: each link is sound, positions follow each other,
 * and each link extends the hash of the one before. `anchor`, when given, is the head the run must
 * extend (a run not starting at position 0 otherwise trusts its first `prev_hash`). Never throws.
 */
export const verifyChain = (links: ReadonlyArray<ChainLink>, anchor?: ChainHead): ChainVerification => {
  let head = anchor
  let agentId: string | undefined
  for (let index = 0; index < links.length; index++) {
    const link = links[index]!
    const error = verifyLink(link)
    if (error !== undefined) return { valid: false, index, error }
    if (agentId !== undefined && link.entry.agent_id !== agentId)
      return { valid: false, index, error: "agent_id changes within the run" }
    agentId = link.entry.agent_id
    if (head !== undefined) {
      if (link.entry.position !== head.position)
        return { valid: false, index, error: `expected position ${head.position}` }
      if (!bytesEqual(fromHex(link.prev_hash)!, head.hash))
        return { valid: false, index, error: "prev_hash does not match the previous link" }
    }
    head = { position: link.entry.position + 1, hash: fromHex(link.hash)! }
  }
  return { valid: true, head }
}
