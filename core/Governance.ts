/**
 * The governance log's pure parts: a log's origin, a record's leaf hash, and the offline check of an
 * entry against a signed tree head (what `candor verify` and any third party run). The storage is
 * adapters/store/GovernanceLog.ts; the record format is core/schema/Governance.ts.
 */
import { canonicalBytes } from "./Canonical.js"
import { fromHex } from "./Bytes.js"
import { leafHash, verifyInclusion } from "./Merkle.js"
import { type NoteVerifier, verifyCheckpointNote } from "./Note.js"
import type { GovernanceRecord } from "./schema/Governance.js"

/** Whose log: one per agent, one per organization. */
export type GovernanceLogRef =
  { readonly kind: "agents"; readonly id: string } | { readonly kind: "orgs"; readonly id: string }

export const agentGovernanceLog = (agentId: string): GovernanceLogRef => ({ kind: "agents", id: agentId })
export const orgGovernanceLog = (orgId: string): GovernanceLogRef => ({ kind: "orgs", id: orgId })

/** The key the store files a log under: `agents/<id>` or `orgs/<id>`. */
export const governanceLogKey = (log: GovernanceLogRef): string => `${log.kind}/${log.id}`

/** `<CANDOR_LOG_ORIGIN>/agents/<agent_id>/governance` or `<CANDOR_LOG_ORIGIN>/orgs/<org_id>/governance`. */
export const governanceOrigin = (logOrigin: string, log: GovernanceLogRef): string =>
  `${logOrigin}/${governanceLogKey(log)}/governance`

/** The RFC 6962 leaf hash of a record: SHA-256(0x00 ‖ JCS(record)). */
export const governanceLeafHash = (record: GovernanceRecord): Uint8Array => leafHash(canonicalBytes(record))

export type GovernanceEntryVerification = { readonly ok: true } | { readonly ok: false; readonly error: string }

/**
 * An entry checked offline: its record hashes to the leaf, the leaf is at `index` in the tree the
 * signed tree head commits to (RFC 6962 inclusion), the head is signed by one of `verifiers` under
 * the record's own origin, so the entry belongs to that log and no other.
 */
export const verifyGovernanceEntry = (input: {
  readonly record: GovernanceRecord
  readonly index: number
  readonly auditPath: ReadonlyArray<string>
  readonly signedTreeHead: string
  readonly verifiers: ReadonlyArray<NoteVerifier>
}): GovernanceEntryVerification => {
  const head = verifyCheckpointNote(input.signedTreeHead, input.verifiers, input.record.origin)
  if (head === undefined) {
    return { ok: false, error: `the tree head is not a checkpoint of ${input.record.origin} signed by a known key` }
  }
  const path = input.auditPath.map(fromHex)
  if (path.some((hash) => hash === undefined)) return { ok: false, error: "audit path: not hex hashes" }
  const included = verifyInclusion({
    leafHash: governanceLeafHash(input.record),
    leafIndex: input.index,
    treeSize: head.size,
    proof: path as ReadonlyArray<Uint8Array>,
    root: head.root
  })
  return included ? { ok: true } : { ok: false, error: `the record is not leaf ${input.index} of the signed tree` }
}
