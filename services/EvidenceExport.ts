/**
 * The evidence export (docs/api.md, "Evidence export"): an agent's checkpoints with their
 * certificates, traces, verdict proofs and audit paths, its enforcement records (JSONL), then the
 * signed tree head that covers them. Streamed in constant memory: the stream pulls one keyset page
 * of the log at a time (with one read of the Merkle nodes for the page's audit paths) only when the
 * client has taken the one before, so a million-checkpoint export holds one page, never the whole
 * export.
 *
 * The head is the newest stored one when the export starts; checkpoints committed while it runs
 * are past its size and left out, so every line proves against the last one. Whether the caller may
 * read the agent is the caller's to check. (The compliance export is services/Reclassifications.ts's.)
 */
import * as Chunk from "effect/Chunk"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { BadRequest, NotFound } from "../adapters/http/ApiErrors.js"
import { ExportRepo, type ExportRecordCursor } from "../adapters/store/ExportRepo.js"
import { Store, StoreError } from "../adapters/store/Store.js"
import { cosignedHead, type WitnessRepo } from "../adapters/store/WitnessRepo.js"
import {
  checkpointLine,
  csvCheckpointRow,
  csvHeader,
  csvTreeHeadRow,
  enforcementRecordLine,
  type ExportHead,
  jsonLine,
  treeHeadLine
} from "../core/Export.js"
import type { ExportFormat } from "../core/schema/Export.js"

/** Checkpoints per page: one query of bodies and one of Merkle nodes each. */
export const EXPORT_PAGE_SIZE = 500

export interface ExportOptions {
  readonly format: ExportFormat
  readonly from?: string | undefined
  readonly to?: string | undefined
  readonly pageSize?: number | undefined
}

/** The export's text, a page per element, pulled lazily: the next page is read when this one was taken. */
export const exportStream = (
  repo: ExportRepo["Type"],
  head: ExportHead,
  options: ExportOptions
): Stream.Stream<string, StoreError> => {
  const pageSize = options.pageSize ?? EXPORT_PAGE_SIZE
  const pages = Stream.paginateChunkEffect(-1, (after: number) =>
    Effect.gen(function* () {
      const rows = yield* repo.page({
        agentId: head.agent_id,
        after,
        below: head.tree_size,
        from: options.from,
        to: options.to,
        limit: pageSize
      })
      const paths = yield* repo.inclusionProofs(
        head.agent_id,
        rows.map((row) => row.certificate.merkle.leaf_index),
        head.tree_size
      )
      const text = rows
        .map((row, i) => {
          const path = paths[i]
          // A leaf below the head's size always has a path; a missing node is a broken store.
          if (path === undefined) throw new Error(`no audit path for leaf ${row.certificate.merkle.leaf_index}`)
          return options.format === "csv" ? csvCheckpointRow(row, head) : jsonLine(checkpointLine(row, head, path))
        })
        .join("")
      const last = rows.at(-1)
      return [
        text === "" ? Chunk.empty<string>() : Chunk.of(text),
        rows.length < pageSize || last === undefined ? Option.none() : Option.some(last.position)
      ] as const
    }).pipe(Effect.catchAllDefect((cause) => Effect.fail(new StoreError({ operation: "exportPage", cause }))))
  )
  // The enforcement records after the checkpoints, oldest first, a keyset page at a time (JSONL only).
  const records = Stream.paginateChunkEffect(undefined as ExportRecordCursor | undefined, (after) =>
    Effect.map(
      repo.enforcementRecords({ agentId: head.agent_id, after, from: options.from, to: options.to, limit: pageSize }),
      (rows) => {
        const text = rows.map(({ record }) => jsonLine(enforcementRecordLine(record))).join("")
        const last = rows.at(-1)
        return [
          text === "" ? Chunk.empty<string>() : Chunk.of(text),
          rows.length < pageSize || last === undefined ? Option.none() : Option.some(last.cursor)
        ] as const
      }
    )
  )
  return options.format === "csv"
    ? Stream.make(csvHeader()).pipe(Stream.concat(pages), Stream.concat(Stream.make(csvTreeHeadRow(head))))
    : pages.pipe(Stream.concat(records), Stream.concat(Stream.make(jsonLine(treeHeadLine(head)))))
}

export const make = Effect.gen(function* () {
  const store = yield* Store
  const repo = yield* ExportRepo
  const witnesses = yield* Effect.context<WitnessRepo>()

  /**
   * The agent's export from its newest signed head: 400 for a `from` not before `to`, 404 for an
   * agent without a log (nothing to export, and no signed head to end one with).
   */
  const open = (agentId: string, options: ExportOptions) =>
    Effect.gen(function* () {
      const { from, to } = options
      if (from !== undefined && to !== undefined && Date.parse(from) >= Date.parse(to))
        return yield* new BadRequest({ error: "from: must be before to" })
      const stored = yield* store.treeHead(agentId)
      if (stored === undefined) return yield* new NotFound({ error: `agent ${agentId} has no log yet` })
      // With the witness cosignatures of its size, when there are any (docs/witnesses.md).
      const head = yield* cosignedHead(stored).pipe(Effect.provide(witnesses))
      return exportStream(repo, head, options)
    })

  return { open }
})

export class EvidenceExport extends Context.Tag("candor/services/EvidenceExport")<
  EvidenceExport,
  Effect.Effect.Success<typeof make>
>() {}

export const layer = Layer.effect(EvidenceExport, make)
