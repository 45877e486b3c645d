/**
 * The evidence export (`GET /v1/agents/{agent_id}/export`, docs/formats.md "Evidence export"): one
 * JSON object per line. Checkpoint lines come in log order; the last line is the signed tree head
 * that every line's `inclusion` proves against, so the file verifies offline (`candor verify
 * --export`). A file without that last line was cut short and does not verify.
 *
 * Enforcement record lines (issue 26) follow the checkpoints, oldest first: what the store records of
 * the agent's 403s, nudges and containment changes. They are evidence to read: the log does not
 * cover them, so the verifier decodes and skips them.
 *
 * The stored objects (checkpoint, certificate, trace, verdict proof) are kept as unknown here: the
 * verifier checks the certificate with core's `verifyCertificate`, which reports what is wrong with
 * it, and the checkpoint and trace are evidence to read, not to check.
 */
import { Schema } from "effect"
import { EnforcementRecord } from "./EnforcementRecord.js"
import { AgentId, Hex32 } from "./Ids.js"

export const ExportInclusion = Schema.Struct({
  leaf_index: Schema.NonNegativeInt,
  tree_size: Schema.NonNegativeInt.annotations({ description: "The final tree head's size" }),
  audit_path: Schema.Array(Hex32).annotations({ description: "RFC 9162 inclusion proof, bottom-up" })
}).annotations({ identifier: "ExportInclusion", description: "The certificate's leaf in the final tree head" })
export type ExportInclusion = typeof ExportInclusion.Type

export const ExportCheckpointLine = Schema.Struct({
  type: Schema.Literal("checkpoint"),
  checkpoint: Schema.Unknown.annotations({ description: "The IntegrityCheckpoint as stored" }),
  certificate: Schema.Unknown.annotations({ description: "Its IntegrityCertificate" }),
  trace: Schema.Unknown.annotations({ description: "The linked AP-Trace, or null" }),
  verdict_proof: Schema.NullOr(Schema.Unknown).annotations({
    description: "The verdict proof when one was made (the certificate's, or the proofs table's)"
  }),
  inclusion: ExportInclusion
}).annotations({ identifier: "ExportCheckpointLine" })
export type ExportCheckpointLine = typeof ExportCheckpointLine.Type

export const ExportTreeHeadLine = Schema.Struct({
  type: Schema.Literal("tree_head"),
  agent_id: AgentId,
  tree_size: Schema.NonNegativeInt,
  root: Hex32,
  signed_tree_head: Schema.String.annotations({ description: "The C2SP checkpoint note, signed" })
}).annotations({ identifier: "ExportTreeHeadLine" })
export type ExportTreeHeadLine = typeof ExportTreeHeadLine.Type

export const ExportEnforcementRecordLine = Schema.Struct({
  type: Schema.Literal("enforcement_record"),
  record: EnforcementRecord
}).annotations({ identifier: "ExportEnforcementRecordLine" })
export type ExportEnforcementRecordLine = typeof ExportEnforcementRecordLine.Type

export const ExportLine = Schema.Union(ExportCheckpointLine, ExportEnforcementRecordLine, ExportTreeHeadLine)
export type ExportLine = typeof ExportLine.Type

export const EXPORT_FORMATS = ["jsonl", "csv"] as const
export type ExportFormat = (typeof EXPORT_FORMATS)[number]
