/**
 * Reasoning-derived fields at rest on the embedded default: concern evidence and reasoning
 * summaries (checkpoints, traces, certificate claims) sealed before they reach SQL, so no spelling
 * of them is found in any file of the data dir, while every read returns them; a store with another
 * key fails naming the key; a body moved to another row does not open; rows written in clear before
 * migration 0014 are read as they are and sealed in batches; a rotation re-seals every row.
 */
import { describe, expect, it } from "@effect/vitest"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { verifyCertificate } from "../../../core/Certificate.js"
import { generateSecretKey, type SecretKey } from "../../../core/SecretBox.js"
import * as SecretKeys from "../../../adapters/keys/SecretKeys.js"
import * as AgentQueries from "../../../adapters/store/AgentQueries.js"
import * as ExportRepo from "../../../adapters/store/ExportRepo.js"
import { resealFields, SealedFieldUnreadable, sealLegacyFields } from "../../../adapters/store/SealedFields.js"
import * as SqlStore from "../../../adapters/store/SqlStore.js"
import type { CommitInput } from "../../../adapters/store/Store.js"
import { Store } from "../../../adapters/store/Store.js"
import * as StoreDatabase from "../../../adapters/store/StoreDatabase.js"
import { fresh, makeInputs, resolveKey, uniqueId } from "./Fixtures.js"
import { filesHolding, spellings } from "./SecretBytes.js"
import { migratedPglite, writeTemplateTo } from "../../support/PgliteTemplate.js"

const tempDir = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "candor-sealed-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

/** Distinctive text per position: found by the byte search if it is stored anywhere in clear. */
const reasoningOf = (tag: string) => (position: number) => ({
  evidence: `evidence-${tag}-${position} I will email the key to the address in the page`,
  summary: `summary-${tag}-${position} the agent adopts an injected instruction`,
  consideration: `consideration-${tag}-${position} the page is not the principal`
})

const chainOf = (count: number) => {
  const agentId = uniqueId("agent-sealed")
  const tag = randomBytes(8).toString("hex")
  const reasoning = reasoningOf(tag)
  const { inputs } = makeInputs(agentId, fresh(agentId), count, { reasoning })
  // Evidence only where the checkpoint has concerns (every third has none).
  const texts = inputs.flatMap((input, i) =>
    input.checkpoint.concerns.length > 0
      ? [reasoning(i).evidence, reasoning(i).summary, reasoning(i).consideration]
      : [reasoning(i).summary, reasoning(i).consideration]
  )
  return { agentId, inputs, texts }
}

/** What every read returns for `inputs`, all of them opened. */
const readsAll = (agentId: string, inputs: ReadonlyArray<CommitInput>) =>
  Effect.gen(function* () {
    const store = yield* Store
    const queries = yield* AgentQueries.make
    const exports = yield* ExportRepo.make
    const newestFirst = [...inputs].reverse()
    for (const input of inputs) {
      expect(yield* store.getCheckpoint(input.checkpoint.checkpoint_id)).toEqual(input.checkpoint)
      expect(yield* store.getTrace(input.trace.trace_id)).toEqual(input.trace)
      const certificate = yield* store.getCertificate(input.checkpoint.checkpoint_id)
      expect(certificate).toEqual(input.attestation.certificate)
      // The signature covers the clear claim: the opened certificate still verifies.
      expect(verifyCertificate(certificate!, { resolveKey }).checks.signature).toBe(true)
    }
    const page = yield* store.listCheckpoints({ agentId, limit: 10, offset: 0 })
    expect(page.items).toEqual(newestFirst.map((input) => input.checkpoint))
    // The AIP window rebuild reads a session's checkpoints.
    expect(yield* store.sessionCheckpoints(agentId, inputs[0]!.checkpoint.session_id, 10)).toEqual(page.items)
    expect(yield* store.recentTraces(agentId, 10)).toEqual(newestFirst.map((input) => input.trace))
    expect(yield* queries.nonClearCheckpoints(agentId, 10, 0)).toEqual(
      newestFirst.filter((input) => input.checkpoint.verdict !== "clear").map((input) => input.checkpoint)
    )
    const exported = yield* exports.page({ agentId, after: -1, below: inputs.length, limit: 10 })
    expect(exported.map((row) => [row.checkpoint, row.certificate, row.trace])).toEqual(
      inputs.map((input) => [input.checkpoint, input.attestation.certificate, input.trace])
    )
  })

/** The stored text of the three tables' rows of `agentId`. */
const storedText = (sql: SqlClient.SqlClient, agentId: string) =>
  Effect.map(
    sql<{ body: string }>`
      select body::text as body from checkpoints where agent_id = ${agentId}
      union all select t.body::text from traces t where t.agent_id = ${agentId}
      union all select c.body::text from certificates c
        join checkpoints k on k.checkpoint_id = c.checkpoint_id where k.agent_id = ${agentId}`,
    (rows) => rows.map((row) => row.body).join("\n")
  )

const onPglite = (key: SecretKey) =>
  SqlStore.layer.pipe(Layer.provideMerge(SecretKeys.SecretKeys.fromKeys(key)), Layer.provideMerge(migratedPglite))

describe("reasoning-derived fields at rest (PGlite)", () => {
  it.scoped("no spelling of evidence or summary is found in any file of the data dir; every read opens them", () =>
    Effect.gen(function* () {
      const dataDir = yield* tempDir
      // The database is there already, as the migrated template (initdb on the file system takes
      // seconds); `candor serve` opens it as it would any earlier data dir.
      yield* writeTemplateTo(join(dataDir, "pg"))
      const { agentId, inputs, texts } = chainOf(3)
      const serveLike = StoreDatabase.layer({ databaseUrl: Option.none(), dataDir }).pipe(
        Layer.provideMerge(SecretKeys.layer({ secretKey: Option.none(), dataDir })),
        Layer.provide(NodeFileSystem.layer)
      )
      yield* Effect.gen(function* () {
        const store = yield* Store
        expect(yield* store.commitBatch(inputs)).toEqual({ _tag: "Committed" })
        yield* readsAll(agentId, inputs)
      }).pipe(Effect.provide(serveLike))

      // The search sees row contents: a checkpoint id is there, in clear.
      const id = inputs[2]!.checkpoint.checkpoint_id
      expect(filesHolding(join(dataDir, "pg"), [Buffer.from(id)]).length).toBeGreaterThan(0)
      for (const text of texts) expect(filesHolding(dataDir, spellings(text))).toEqual([])

      // A restart reuses the key from the data dir: everything still opens.
      yield* readsAll(agentId, inputs).pipe(Effect.provide(serveLike))
    })
  )

  it.scoped("a store with another key fails naming the key; a body moved to another row does not open", () => {
    const key = generateSecretKey()
    return Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const store = yield* Store
      const { inputs, texts } = chainOf(3)
      yield* store.commitBatch(inputs)
      const [, b, c] = inputs.map((input) => input.checkpoint.checkpoint_id)

      const stranger = yield* SqlStore.make.pipe(Effect.provide(SecretKeys.SecretKeys.fromKeys(generateSecretKey())))
      const unheld = yield* Effect.flip(stranger.getCheckpoint(b!))
      expect(unheld.cause).toBeInstanceOf(SealedFieldUnreadable)
      const message = (unheld.cause as SealedFieldUnreadable).message
      expect(message).toContain(`checkpoints row ${b}`)
      expect(message).toContain(`sealed under key ${key.keyId}, which this process does not hold`)
      for (const text of texts) expect(message).not.toContain(text)
      expect((yield* Effect.flip(stranger.getTrace(inputs[1]!.trace.trace_id))).cause).toBeInstanceOf(
        SealedFieldUnreadable
      )

      // Checkpoint c's sealed body copied into row b: its fields are bound to c and do not open in b.
      yield* sql`update checkpoints set body = (select body from checkpoints where checkpoint_id = ${c!})
        where checkpoint_id = ${b!}`
      const moved = yield* Effect.flip(store.getCheckpoint(b!))
      expect((moved.cause as SealedFieldUnreadable).message).toContain(
        `the reasoning_summary of checkpoints row ${b} does not open under key ${key.keyId}: altered, or moved from another row`
      )
      // A trace's sealed body copied into another trace's row does not open there either.
      yield* sql`update traces set body = (select body from traces where trace_id = ${inputs[2]!.trace.trace_id})
        where trace_id = ${inputs[0]!.trace.trace_id}`
      expect((yield* Effect.flip(store.getTrace(inputs[0]!.trace.trace_id))).cause).toBeInstanceOf(
        SealedFieldUnreadable
      )
    }).pipe(Effect.provide(onPglite(key)))
  })

  it.scoped("rows written in clear before 0014 are read as they are, then sealed in batches, once", () => {
    const key = generateSecretKey()
    return Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const store = yield* Store
      const { agentId, inputs, texts } = chainOf(5)
      yield* store.commitBatch(inputs)
      // As a store before 0014 wrote them: the clear bodies, no key.
      for (const input of inputs) {
        yield* sql`update checkpoints set body = ${JSON.stringify(input.checkpoint)}::json, sealed_by = null
          where checkpoint_id = ${input.checkpoint.checkpoint_id}`
        yield* sql`update traces set body = ${JSON.stringify(input.trace)}::json, sealed_by = null
          where trace_id = ${input.trace.trace_id}`
        yield* sql`update certificates set body = ${JSON.stringify(input.attestation.certificate)}::json, sealed_by = null
          where checkpoint_id = ${input.checkpoint.checkpoint_id}`
      }
      const clear = yield* storedText(sql, agentId)
      expect(texts.every((text) => clear.includes(text))).toBe(true)
      yield* readsAll(agentId, inputs)

      // Batches of 2: 5 rows in each of three tables.
      expect(yield* sealLegacyFields(sql, key, 2)).toBe(15)
      expect(yield* sealLegacyFields(sql, key, 2)).toBe(0)
      const sealed = yield* storedText(sql, agentId)
      for (const text of texts) expect(sealed).not.toContain(text)
      yield* readsAll(agentId, inputs)
    }).pipe(Effect.provide(onPglite(key)))
  })

  it.scoped("a rotation re-seals every row under the new key, in batches; the old key then opens none", () => {
    const old = generateSecretKey()
    const next = generateSecretKey()
    return Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const { agentId, inputs } = chainOf(5)
      yield* (yield* Store).commitBatch(inputs)
      // Every row of the three tables (5 each), 2 per transaction.
      expect(yield* resealFields(sql, [old], next, 2)).toBe(15)
      const keys = yield* sql<{ sealed_by: string }>`
        select distinct sealed_by from checkpoints union select distinct sealed_by from traces
        union select distinct sealed_by from certificates`
      expect(keys).toEqual([{ sealed_by: next.keyId }])
      // Already under the new key: nothing to do.
      expect(yield* resealFields(sql, [next], next, 2)).toBe(0)

      const after = yield* SqlStore.make.pipe(Effect.provide(SecretKeys.SecretKeys.fromKeys(next)))
      yield* readsAll(agentId, inputs).pipe(
        Effect.provideService(Store, after),
        Effect.provide(SecretKeys.SecretKeys.fromKeys(next))
      )
      const before = yield* SqlStore.make.pipe(Effect.provide(SecretKeys.SecretKeys.fromKeys(old)))
      const failed = yield* Effect.flip(before.getCheckpoint(inputs[1]!.checkpoint.checkpoint_id))
      expect((failed.cause as SealedFieldUnreadable).message).toContain(`sealed under key ${next.keyId}`)
    }).pipe(Effect.provide(onPglite(old)))
  })

  it.scoped("a re-evaluation writes the checkpoint sealed again", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const { agentId, inputs, texts } = chainOf(3)
      yield* (yield* Store).commitBatch(inputs)
      const queries = yield* AgentQueries.make
      const checkpoint = inputs[2]!.checkpoint
      const changed = { ...checkpoint, verdict: "clear" as const, original_verdict: checkpoint.verdict }
      expect(yield* queries.reevaluateCheckpoints([{ checkpoint: changed, previous: checkpoint.verdict }])).toEqual([
        checkpoint.checkpoint_id
      ])
      expect(yield* (yield* Store).getCheckpoint(checkpoint.checkpoint_id)).toEqual(changed)
      const stored = yield* storedText(sql, agentId)
      for (const text of texts) expect(stored).not.toContain(text)
    }).pipe(Effect.provide(onPglite(generateSecretKey())))
  )
})
