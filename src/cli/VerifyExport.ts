/**
 * `candor verify --export <file>`: an evidence export (core/schema/Export.ts) checked offline. The
 * last line is the signed tree head; it must verify with a listed key under the agent's log origin.
 * Every checkpoint line's certificate is checked as `candor verify` checks one (signature, chain
 * link, its own Merkle proof, verdict rule, verdict proof when present), and its `inclusion` must
 * lead from the certificate's leaf to that head's root. Lines in a row of the log must also link:
 * each one's `prev_hash` is the hash of the line before.
 *
 * The file is read twice as a stream (once for its last line, once to check), so a file of any
 * size verifies in constant memory.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { treeHeadTrust, verifyWithKeys } from "../../adapters/keys/Trust.js"
import { fromHex, toHex } from "../../core/Bytes.js"
import { leafHash, verifyInclusion } from "../../core/Merkle.js"
import { verifyCheckpointNote } from "../../core/Note.js"
import { ExportLine, type ExportTreeHeadLine } from "../../core/schema/Export.js"
import { verifyVerdictProof } from "../../prover/VerdictProof.js"

type Keys = ReadonlyArray<{ readonly keyId: string; readonly publicKey: Uint8Array }>

export interface ExportFailure {
  readonly line: number
  readonly checkpoint_id: string | null
  readonly reasons: ReadonlyArray<string>
}

export interface ExportReport {
  readonly valid: boolean
  readonly agent_id: string | null
  readonly tree_size: number | null
  /** The final line's signed tree head as written (witness cosignatures are checked on it). */
  readonly signed_tree_head: string | null
  /** Checkpoint lines read. */
  readonly certificates: number
  readonly ok: number
  readonly failures: ReadonlyArray<ExportFailure>
  /** What is wrong with the file as a whole (no tree head, a head that does not verify). */
  readonly errors: ReadonlyArray<string>
}

const decodeLine = Schema.decodeUnknownEither(Schema.parseJson(ExportLine))

interface Head {
  readonly line: ExportTreeHeadLine
  /** The root the signed note commits to, when the note verifies; undefined otherwise. */
  readonly root: Uint8Array | undefined
}

/** The final line as a tree head, checked against the keys: the head and what is wrong with it. */
export const checkHead = (lastLine: string | undefined, keys: Keys): { head?: Head; errors: Array<string> } => {
  const decoded = lastLine === undefined ? undefined : decodeLine(lastLine)
  if (decoded === undefined || Either.isLeft(decoded) || decoded.right.type !== "tree_head")
    return { errors: ["the export does not end with its signed tree head (the file was cut short?)"] }
  const line = decoded.right
  const trust = treeHeadTrust(line.signed_tree_head, keys, line.agent_id)
  if (typeof trust === "string") return { head: { line, root: undefined }, errors: [`tree head: ${trust}`] }
  const note = verifyCheckpointNote(line.signed_tree_head, trust.verifiers, trust.origin)
  if (note === undefined)
    return { head: { line, root: undefined }, errors: ["tree head: the signed note does not verify with the keys"] }
  if (note.size !== line.tree_size || toHex(note.root) !== line.root)
    return {
      head: { line, root: undefined },
      errors: ["tree head: tree_size or root differ from the signed note's"]
    }
  return { head: { line, root: note.root }, errors: [] }
}

const field = (value: unknown, ...path: Array<string>): unknown =>
  path.reduce<unknown>(
    (at, key) => (typeof at === "object" && at !== null ? (at as Record<string, unknown>)[key] : undefined),
    value
  )

/**
 * Checks the lines one at a time against a head already checked; holds only the previous line's
 * position and hash. `undefined` head: the certificates are still checked, every inclusion fails.
 */
export const makeLineChecker = (keys: Keys, head: Head | undefined) => {
  let previous: { readonly position: number; readonly hash: string } | undefined
  return (text: string, lineNumber: number): ExportFailure | "ok" | "skip" => {
    if (text.trim() === "") return "skip"
    const decoded = decodeLine(text)
    if (Either.isLeft(decoded))
      return { line: lineNumber, checkpoint_id: null, reasons: ["not an export line: " + decoded.left.message] }
    const line = decoded.right
    // Enforcement records are evidence to read: the log does not cover them.
    if (line.type === "tree_head" || line.type === "enforcement_record") return "skip"
    const reasons: Array<string> = []
    const certificate = line.certificate
    const checkpointId = field(certificate, "subject", "checkpoint_id")
    // The proof the line carries is the certificate's, or the proofs table's one for it.
    const withProof =
      typeof certificate === "object" && certificate !== null && line.verdict_proof !== null
        ? { ...certificate, verdict_proof: line.verdict_proof }
        : certificate
    reasons.push(...verifyWithKeys(withProof, keys, { verifyVerdictProof }).errors)
    if (field(line.checkpoint, "checkpoint_id") !== checkpointId)
      reasons.push("checkpoint: its id is not the certificate's subject")
    const agentId = field(certificate, "subject", "agent_id")
    if (head !== undefined && agentId !== head.line.agent_id)
      reasons.push(`certificate: of agent ${String(agentId)}, the export is of ${head.line.agent_id}`)
    const position = field(certificate, "chain", "position")
    const chainHash = field(certificate, "chain", "hash")
    const hashBytes = typeof chainHash === "string" ? fromHex(chainHash) : undefined
    const { inclusion } = line
    if (head === undefined || head.root === undefined) reasons.push("inclusion: no verified tree head to check against")
    else if (inclusion.tree_size !== head.line.tree_size)
      reasons.push(`inclusion: at tree size ${inclusion.tree_size}, the tree head is ${head.line.tree_size}`)
    else if (inclusion.leaf_index !== field(certificate, "merkle", "leaf_index") || inclusion.leaf_index !== position)
      reasons.push("inclusion: leaf_index is not the certificate's")
    else if (
      hashBytes === undefined ||
      !verifyInclusion({
        leafIndex: inclusion.leaf_index,
        treeSize: inclusion.tree_size,
        leafHash: leafHash(hashBytes),
        proof: inclusion.audit_path.map((hex) => fromHex(hex) ?? new Uint8Array()),
        root: head.root
      })
    )
      reasons.push("inclusion: the audit path does not lead to the signed tree head's root")
    if (typeof position === "number" && typeof chainHash === "string") {
      if (previous !== undefined && position <= previous.position)
        reasons.push(`order: position ${position} after ${previous.position}`)
      else if (previous?.position === position - 1 && field(certificate, "chain", "prev_hash") !== previous.hash)
        reasons.push("chain: prev_hash is not the hash of the line before")
      previous = { position, hash: chainHash }
    }
    return reasons.length === 0
      ? "ok"
      : { line: lineNumber, checkpoint_id: typeof checkpointId === "string" ? checkpointId : null, reasons }
  }
}

const TREE_HEAD_LINE = /^\s*\{\s*"type"\s*:\s*"tree_head"/

const lines = (path: string) =>
  Stream.unwrap(Effect.map(FileSystem.FileSystem, (fs) => fs.stream(path))).pipe(Stream.decodeText(), Stream.splitLines)

/** Verifies an export file with the listed keys. Fails only when the file cannot be read. */
export const verifyExportFile = (path: string, keys: Keys) =>
  Effect.gen(function* () {
    const last = yield* lines(path).pipe(
      Stream.filter((line) => line.trim() !== ""),
      Stream.runLast
    )
    const { head, errors } = checkHead(last._tag === "Some" ? last.value : undefined, keys)
    const check = makeLineChecker(keys, head)
    const total = yield* lines(path).pipe(
      Stream.zipWithIndex,
      Stream.runFold(
        { certificates: 0, ok: 0, failures: [] as Array<ExportFailure>, treeHeads: 0 },
        (acc, [text, index]) => {
          const result = check(text, index + 1)
          if (result === "skip") {
            // By its type, not its text: an enforcement record's reason may say anything.
            if (TREE_HEAD_LINE.test(text)) acc.treeHeads++
            return acc
          }
          acc.certificates++
          if (result === "ok") acc.ok++
          else acc.failures.push(result)
          return acc
        }
      )
    )
    const fileErrors = [...errors]
    if (total.treeHeads > 1) fileErrors.push("the export has more than one tree head line")
    const report: ExportReport = {
      valid: fileErrors.length === 0 && total.failures.length === 0,
      agent_id: head?.line.agent_id ?? null,
      tree_size: head?.line.tree_size ?? null,
      signed_tree_head: head?.line.signed_tree_head ?? null,
      certificates: total.certificates,
      ok: total.ok,
      failures: total.failures,
      errors: fileErrors
    }
    return report
  })

const SHOWN_FAILURES = 100

/** The summary a person reads: the head, the counts, each failure with its reasons. */
export const formatExportReport = (report: ExportReport): string => {
  const failed = report.failures.length
  const lines = [
    `Export of agent ${report.agent_id ?? "?"}` +
      (report.tree_size === null ? "" : `, signed tree head of size ${report.tree_size}`),
    `  ${report.ok} certificates ok, ${failed} failed`,
    ...report.errors.map((error) => `  - ${error}`),
    ...report.failures
      .slice(0, SHOWN_FAILURES)
      .map(
        (failure) =>
          `  - line ${failure.line}${failure.checkpoint_id === null ? "" : ` (${failure.checkpoint_id})`}: ${failure.reasons.join("; ")}`
      ),
    ...(failed > SHOWN_FAILURES ? [`  … and ${failed - SHOWN_FAILURES} more failed`] : []),
    report.valid ? "VALID" : "INVALID"
  ]
  return lines.join("\n")
}
