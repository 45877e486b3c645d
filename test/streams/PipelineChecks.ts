/**
 * What every pipeline test asserts about the record once events are committed: each agent's chain
 * is contiguous and verifies, every certificate verifies, the Merkle root is the rebuild of the
 * leaves, the signed tree head names it, and the count equals the events published.
 */
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import { expect } from "vitest"
import { fromHex, toHex } from "../../core/Bytes.js"
import { verifyCertificate } from "../../core/Certificate.js"
import { leafHash, MemoryMerkleLog, verifyInclusion } from "../../core/Merkle.js"
import { verifyCheckpointNote } from "../../core/Note.js"
import type { SigningKey } from "../../core/Signing.js"
import { Store } from "../../adapters/store/Store.js"

/** Committed checkpoints of these agents. */
export const committedCount = (agentIds: ReadonlyArray<string>) =>
  Effect.flatMap(Store, (store) =>
    Effect.map(
      Effect.forEach(agentIds, (agentId) => store.listCheckpoints({ agentId, limit: 1, offset: 0 }), {
        concurrency: 8
      }),
      (pages) => pages.reduce((sum, page) => sum + page.total, 0)
    )
  )

/** Waits (polling the store, with a deadline) until `count` checkpoints of these agents are committed. */
export const awaitCommitted = (agentIds: ReadonlyArray<string>, count: number, timeoutMs = 60_000) =>
  committedCount(agentIds).pipe(
    Effect.filterOrFail(
      (n) => n >= count,
      (n) => new Error(`${n} of ${count} committed`)
    ),
    Effect.retry(Schedule.spaced("20 millis").pipe(Schedule.upTo(`${timeoutMs} millis`)))
  )

export const verifyAgentRecord = (agentId: string, key: SigningKey, logOrigin: string) =>
  Effect.gen(function* () {
    const store = yield* Store
    const page = yield* store.listCheckpoints({ agentId, limit: 1000, offset: 0 })
    const certificates = yield* Effect.forEach(page.items, (c) => store.getCertificate(c.checkpoint_id), {
      concurrency: 8
    })
    const byPosition = certificates.map((c) => c!).sort((a, b) => a.chain.position - b.chain.position)
    const resolveKey = (id: string) => (id === key.keyId ? key.publicKey : undefined)
    const log = new MemoryMerkleLog()
    byPosition.forEach((certificate, position) => {
      expect(certificate.chain.position).toBe(position)
      if (position > 0) expect(certificate.chain.prev_hash).toBe(byPosition[position - 1]!.chain.hash)
      const report = verifyCertificate(certificate, { resolveKey })
      expect(report.errors).toEqual([])
      log.append(leafHash(fromHex(certificate.chain.hash)!))
    })
    const head = yield* store.treeHead(agentId)
    expect(head?.tree_size).toBe(byPosition.length)
    expect(head?.root).toBe(toHex(log.root()))
    const origin = `${logOrigin}/agents/${agentId}`
    const note = verifyCheckpointNote(head!.note, [{ name: origin, publicKey: key.publicKey }], origin)
    expect(note?.size).toBe(byPosition.length)
    // Every leaf is provably in the newest tree.
    for (const certificate of byPosition) {
      const proof = yield* store.inclusionProof(agentId, certificate.merkle.leaf_index, byPosition.length)
      expect(
        verifyInclusion({
          leafIndex: certificate.merkle.leaf_index,
          treeSize: byPosition.length,
          leafHash: fromHex(certificate.merkle.leaf_hash)!,
          proof: proof!.map((h) => fromHex(h)!),
          root: log.root()
        })
      ).toBe(true)
    }
    return byPosition.length
  })
