/**
 * The evidence export's lines (core/schema/Export.ts, docs/formats.md): JSONL and CSV, one
 * checkpoint per line or row, the tree head last. Pure: the API streams what these return.
 */
import type { Certificate } from "./Certificate.js"
import type { IntegrityCheckpoint } from "./schema/Checkpoint.js"
import type { EnforcementRecord } from "./schema/EnforcementRecord.js"
import type { ExportCheckpointLine, ExportEnforcementRecordLine, ExportTreeHeadLine } from "./schema/Export.js"
import type { APTrace } from "./schema/Trace.js"

/** One stored checkpoint with what the store keeps beside it. */
export interface ExportEntry {
  readonly checkpoint: IntegrityCheckpoint
  readonly certificate: Certificate
  readonly trace: APTrace | null
  /** A completed verdict proof of the proofs table (the certificate's own one wins). */
  readonly proof: Record<string, unknown> | null
}

export interface ExportHead {
  readonly agent_id: string
  readonly tree_size: number
  readonly root: string
  readonly note: string
}

export const checkpointLine = (entry: ExportEntry, head: ExportHead, auditPath: ReadonlyArray<string>) =>
  ({
    type: "checkpoint",
    checkpoint: entry.checkpoint,
    certificate: entry.certificate,
    trace: entry.trace,
    verdict_proof: entry.certificate.verdict_proof ?? entry.proof ?? null,
    inclusion: { leaf_index: entry.certificate.merkle.leaf_index, tree_size: head.tree_size, audit_path: auditPath }
  }) satisfies ExportCheckpointLine

export const enforcementRecordLine = (record: EnforcementRecord) =>
  ({ type: "enforcement_record", record }) satisfies ExportEnforcementRecordLine

export const treeHeadLine = (head: ExportHead) =>
  ({
    type: "tree_head",
    agent_id: head.agent_id,
    tree_size: head.tree_size,
    root: head.root,
    signed_tree_head: head.note
  }) satisfies ExportTreeHeadLine

export const jsonLine = (value: unknown): string => JSON.stringify(value) + "\n"

// ---------------------------------------------------------------------------------------------
// CSV

export const CSV_COLUMNS = [
  "type",
  "agent_id",
  "checkpoint_id",
  "timestamp",
  "session_id",
  "verdict",
  "concern_categories",
  "certificate_id",
  "key_id",
  "chain_hash",
  "leaf_index",
  "tree_size",
  "trace_id",
  "verdict_proof",
  "root",
  "signed_tree_head"
] as const

type CsvRecord = { readonly [C in (typeof CSV_COLUMNS)[number]]?: string | number | null }

/**
 * RFC 4180 by hand: no CSV library is a dependency, and quoting is all an export needs. A field
 * with a comma, a quote, CR or LF is quoted, quotes doubled; rows end with CRLF. A field that a
 * spreadsheet would run as a formula is not rewritten: the export is evidence, kept byte for byte.
 */
export const csvField = (value: string | number | null | undefined): string => {
  const text = value === null || value === undefined ? "" : String(value)
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text
}

const csvRow = (record: CsvRecord): string => CSV_COLUMNS.map((column) => csvField(record[column])).join(",") + "\r\n"

export const csvHeader = (): string => CSV_COLUMNS.join(",") + "\r\n"

export const csvCheckpointRow = (entry: ExportEntry, head: ExportHead): string => {
  const { checkpoint, certificate } = entry
  return csvRow({
    type: "checkpoint",
    agent_id: checkpoint.agent_id,
    checkpoint_id: checkpoint.checkpoint_id,
    timestamp: checkpoint.timestamp,
    session_id: checkpoint.session_id,
    verdict: checkpoint.verdict,
    // Each category once, in the order the judge named them; `;` inside one field.
    concern_categories: [...new Set(checkpoint.concerns.map((concern) => concern.category))].join(";"),
    certificate_id: certificate.certificate_id,
    key_id: certificate.key_id,
    chain_hash: certificate.chain.hash,
    leaf_index: certificate.merkle.leaf_index,
    tree_size: head.tree_size,
    trace_id: entry.trace?.trace_id ?? checkpoint.linked_trace_id,
    verdict_proof: (certificate.verdict_proof ?? entry.proof) === null ? "none" : "attached"
  })
}

export const csvTreeHeadRow = (head: ExportHead): string =>
  csvRow({
    type: "tree_head",
    agent_id: head.agent_id,
    tree_size: head.tree_size,
    root: head.root,
    signed_tree_head: head.note
  })
