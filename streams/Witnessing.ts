/**
 * Witnessing (docs/witnesses.md), in the worker role: every interval, each configured witness is
 * sent the newest signed tree head of up to `batch` agent logs it has not cosigned at that size
 * (c2sp.org/tlog-witness `add-checkpoint`), with the consistency proof from the last size it
 * cosigned (`old 0` and no proof the first time). A 409 carries the witness's own size: the
 * submission is retried once from that size. The cosignature lines it answers are verified against
 * the witness's configured key (cosignature/v1 on exactly this checkpoint, not dated in the future)
 * before they are stored; anything else is recorded as the log's error for that witness and logged.
 *
 * Several worker processes may run cycles at once: a witness answers a second submission of the same
 * head with a 409 or a fresh cosignature of it, so the worst case is a wasted request, never a wrong
 * record. Logs a witness keeps refusing go to the back of its queue (attempted longest ago first).
 */
import * as Clock from "effect/Clock"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import { Store } from "../adapters/store/Store.js"
import { type DueLog, WitnessRepo, layer as witnessRepoLayer } from "../adapters/store/WitnessRepo.js"
import { WitnessClient, type WitnessEndpoint } from "../adapters/witness/WitnessClient.js"
import { fromHex } from "../core/Bytes.js"
import { formatAddCheckpoint, verifyCosignatures, witnessKeyId } from "../core/Cosignature.js"
import { appendSignatureLines } from "../core/Note.js"

export interface WitnessingOptions {
  readonly witnesses: ReadonlyArray<WitnessEndpoint>
  readonly interval: Duration.DurationInput
  /** Logs submitted to each witness per cycle. */
  readonly batch: number
}

/** A cosignature dated more than this after our clock is refused as from the future. */
export const MAX_CLOCK_SKEW_SECONDS = 600

export type SubmissionOutcome =
  | { readonly _tag: "Cosigned"; readonly treeSize: number; readonly timestamp: number }
  | { readonly _tag: "Failed"; readonly error: string }

/** Submits one log's head to one witness (with one retry after a 409) and records the outcome. */
export const submitLog = (witness: WitnessEndpoint, log: DueLog) =>
  Effect.gen(function* () {
    const repo = yield* WitnessRepo
    const store = yield* Store
    const client = yield* WitnessClient
    const id = witnessKeyId(witness.key)
    const failed = (error: string, witnessSize?: number) =>
      Effect.as(repo.failed(id, log.agent_id, error, witnessSize), {
        _tag: "Failed",
        error
      } satisfies SubmissionOutcome as SubmissionOutcome)

    let oldSize = log.cosigned_size
    for (let attempt = 0; attempt < 2; attempt++) {
      const proofHex = oldSize === 0 ? [] : yield* store.consistencyProof(log.agent_id, oldSize, log.tree_size)
      if (proofHex === undefined) return yield* failed(`no consistency proof from size ${oldSize} to ${log.tree_size}`)
      const body = formatAddCheckpoint({ oldSize, proof: proofHex.map((hash) => fromHex(hash)!), note: log.note })
      const answer = yield* Effect.either(client.addCheckpoint(witness, body))
      if (answer._tag === "Left") return yield* failed(`request failed: ${answer.left.reason}`)
      const result = answer.right
      if (result._tag === "Refused") return yield* failed(`HTTP ${result.status}: ${result.message}`)
      if (result._tag === "Conflict") {
        const size = result.size
        if (size > log.tree_size)
          return yield* failed(
            `the witness has cosigned size ${size}, beyond this log's newest signed size ${log.tree_size}`
          )
        if (size === oldSize)
          return yield* failed(`the witness holds another root for size ${size}: a fork, or a rolled-back log`)
        if (attempt === 0) {
          oldSize = size
          continue
        }
        return yield* failed(`the witness's size moved again, to ${size}`, size)
      }
      const note = appendSignatureLines(log.note, result.lines)
      if (note === undefined) return yield* failed("the answer's lines do not fit the note")
      const now = Math.floor((yield* Clock.currentTimeMillis) / 1000)
      const verified = verifyCosignatures(note, [witness.key], { notAfter: now + MAX_CLOCK_SKEW_SECONDS })
      if (!verified.ok) return yield* failed(verified.error)
      const cosignature = verified.cosignatures[0]
      if (cosignature === undefined) return yield* failed(`the answer has no cosignature by ${id}`)
      if (verified.checkpoint.size !== log.tree_size) return yield* failed("the note is not the stored head")
      yield* repo.record({
        agent_id: log.agent_id,
        tree_size: log.tree_size,
        witness_key: id,
        witness_name: witness.key.name,
        cosigned_at: cosignature.timestamp,
        line: cosignature.line
      })
      return { _tag: "Cosigned", treeSize: log.tree_size, timestamp: cosignature.timestamp } as SubmissionOutcome
    }
    return yield* failed("unreachable")
  })

/**
 * One cycle: for each witness (in parallel), its due logs, one after the other (keep-alive, and a
 * witness is not flooded). A store failure ends that witness's cycle; it is logged by the caller.
 */
export const witnessCycle = (witnesses: ReadonlyArray<WitnessEndpoint>, batch: number) =>
  Effect.forEach(
    witnesses,
    (witness) =>
      Effect.gen(function* () {
        const logs = yield* (yield* WitnessRepo).due(witnessKeyId(witness.key), batch)
        const outcomes: Array<SubmissionOutcome & { readonly agentId: string }> = []
        for (const log of logs) {
          const outcome = yield* submitLog(witness, log)
          if (outcome._tag === "Failed")
            yield* Effect.logWarning("witness did not cosign").pipe(
              Effect.annotateLogs({ witness: witness.key.name, agent_id: log.agent_id, error: outcome.error })
            )
          outcomes.push({ ...outcome, agentId: log.agent_id })
        }
        return { witness: witness.key.name, outcomes }
      }),
    { concurrency: "unbounded" }
  )

/** Runs cycles until the scope closes (the first at once). */
export const runWitnessing = (options: WitnessingOptions) =>
  witnessCycle(options.witnesses, options.batch).pipe(
    // A failed cycle (the store unreachable, a defect) is logged; the next one runs at its time.
    Effect.catchAllCause((cause) =>
      Effect.logWarning("witnessing cycle failed").pipe(Effect.annotateLogs({ cause: String(cause) }))
    ),
    Effect.repeat(Schedule.spaced(options.interval)),
    Effect.forkScoped,
    Effect.asVoid
  )

/** Witnessing on the process's store and the real HTTP client. */
export const layer = (options: WitnessingOptions) =>
  Layer.scopedDiscard(runWitnessing(options)).pipe(Layer.provide(Layer.merge(witnessRepoLayer, WitnessClient.layer())))
