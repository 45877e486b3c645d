/**
 * The one repository conformance suite every `Store` layer must pass (run on PGlite and on
 * PostgreSQL). Tests share one database per file, so each works on agents and outbox kinds of its
 * own (`uniqueId`).
 */
import { expect, type Vitest } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"
import { attest } from "../../../core/Attestation.js"
import { fromHex } from "../../../core/Bytes.js"
import { verifyCertificate } from "../../../core/Certificate.js"
import { MemoryMerkleLog, verifyConsistency, verifyInclusion } from "../../../core/Merkle.js"
import { verifyCheckpointNote } from "../../../core/Note.js"
import { type CommitInput, defaultAgentSettings, Store } from "../../../adapters/store/Store.js"
import {
  card,
  checkpointId,
  fresh,
  hex,
  key,
  leafHashes,
  makeInput,
  makeInputs,
  noteVerifier,
  origin,
  resolveKey,
  uniqueId
} from "./Fixtures.js"

const DAY = 24 * 60 * 60 * 1000

/** Every row a committed input leaves behind, read back through the store. */
const expectStored = (input: CommitInput) =>
  Effect.gen(function* () {
    const store = yield* Store
    const id = input.checkpoint.checkpoint_id
    expect(yield* store.getCheckpoint(id)).toEqual(input.checkpoint)
    const certificate = yield* store.getCertificate(id)
    expect(certificate).toEqual(input.attestation.certificate)
    expect(verifyCertificate(certificate!, { resolveKey }).valid).toBe(true)
    expect(yield* store.getTrace(input.trace.trace_id)).toEqual(input.trace)
    const size = input.attestation.state.frontier.size
    const head = yield* store.treeHead(input.checkpoint.agent_id, size)
    expect(head).toMatchObject({
      agent_id: input.checkpoint.agent_id,
      tree_size: size,
      root: input.attestation.certificate.merkle.root,
      note: input.treeHead
    })
  })

/** Nothing of these inputs is in the store, and the agent's log is still `before` of the first. */
const expectAbsent = (inputs: ReadonlyArray<CommitInput>) =>
  Effect.gen(function* () {
    const store = yield* Store
    const ids = inputs.map((input) => input.checkpoint.checkpoint_id)
    expect([...(yield* store.existingCheckpoints(ids))]).toEqual([])
    for (const input of inputs) {
      expect(yield* store.getCertificate(input.checkpoint.checkpoint_id)).toBeUndefined()
      expect(yield* store.getTrace(input.trace.trace_id)).toBeUndefined()
      expect(yield* store.treeHead(input.checkpoint.agent_id, input.attestation.state.frontier.size)).toBeUndefined()
    }
    const first = inputs[0]!
    expect(yield* store.loadLogState(first.checkpoint.agent_id)).toEqual(first.before)
  })

export const storeConformance = (it: Vitest.MethodsNonLive<Store | SqlClient.SqlClient>) => {
  it.effect("commits a checkpoint and reads every row of it back", () =>
    Effect.gen(function* () {
      const store = yield* Store
      const agent = uniqueId("agent")
      const input = makeInput(agent, fresh(agent), { alerts: true })
      expect(yield* store.loadLogState(agent)).toEqual(fresh(agent))
      expect(yield* store.commitBatch([input])).toEqual({ _tag: "Committed" })
      yield* expectStored(input)
      expect(yield* store.loadLogState(agent)).toEqual(input.attestation.state)
      expect(yield* store.recentTraces(agent, 10)).toEqual([input.trace])
      expect(yield* store.sessionCheckpoints(agent, input.checkpoint.session_id, 10)).toEqual([input.checkpoint])
      expect(yield* store.driftAlerts(agent, 10)).toEqual(input.alerts)
      const head = yield* store.treeHead(agent)
      expect(verifyCheckpointNote(head!.note, [noteVerifier], origin(agent))?.size).toBe(1)
      expect(yield* store.inclusionProof(agent, 0, 1)).toEqual([])
      expect(yield* store.commitBatch([])).toEqual({ _tag: "Committed" })
    })
  )

  it.effect("commits consecutive inputs of one agent and of many agents in one batch", () =>
    Effect.gen(function* () {
      const store = yield* Store
      const agents = Array.from({ length: 5 }, () => uniqueId("agent"))
      const first = agents.map((agent) => makeInputs(agent, fresh(agent), 3))
      // Interleaved: each agent's inputs are in order, the agents are mixed.
      const batch1 = [0, 1, 2].flatMap((i) => first.map((chain) => chain.inputs[i]!))
      expect(yield* store.commitBatch(batch1)).toEqual({ _tag: "Committed" })
      const second = agents.map((agent, i) => makeInputs(agent, first[i]!.state, 4))
      expect(yield* store.commitBatch(second.flatMap((chain) => chain.inputs))).toEqual({ _tag: "Committed" })
      for (const [i, agent] of agents.entries()) {
        expect(yield* store.loadLogState(agent)).toEqual(second[i]!.state)
        for (const input of [...first[i]!.inputs, ...second[i]!.inputs]) yield* expectStored(input)
        expect((yield* store.treeHead(agent))?.tree_size).toBe(7)
      }
    })
  )

  it.effect("refuses a stale head with Conflict and writes nothing of the batch", () =>
    Effect.gen(function* () {
      const store = yield* Store
      const [a, b, c] = [uniqueId("a"), uniqueId("b"), uniqueId("c")]
      const aStart = makeInputs(a, fresh(a), 2)
      const cStart = makeInputs(c, fresh(c), 1)
      expect(yield* store.commitBatch([...aStart.inputs, ...cStart.inputs])).toEqual({ _tag: "Committed" })
      // A second owner that still believes a is at 1, and c has never been seen; b is innocent.
      const staleA = makeInput(a, aStart.inputs[0]!.attestation.state)
      const staleC = makeInput(c, fresh(c))
      const newB = makeInputs(b, fresh(b), 2, { outbox: () => [{ kind: `k-${b}`, payload: { b } }] })
      const result = yield* store.commitBatch([...newB.inputs, staleA])
      expect(result).toEqual({ _tag: "Conflict", agentIds: [a] })
      const result2 = yield* store.commitBatch([staleC, ...newB.inputs])
      expect(result2).toEqual({ _tag: "Conflict", agentIds: [c] })
      yield* expectAbsent(newB.inputs)
      expect(yield* store.claimOutbox(`k-${b}`, 10, 1000)).toEqual([])
      expect(yield* store.loadLogState(a)).toEqual(aStart.state)
      expect(yield* store.loadLogState(c)).toEqual(cStart.state)
      expect(yield* store.getCheckpoint(staleA.checkpoint.checkpoint_id)).toBeUndefined()
      // The innocent agent goes through on its own.
      expect(yield* store.commitBatch(newB.inputs)).toEqual({ _tag: "Committed" })
      expect(yield* store.loadLogState(b)).toEqual(newB.state)
    })
  )

  it.effect("refuses a taken checkpoint id and a redelivered batch with Conflict", () =>
    Effect.gen(function* () {
      const store = yield* Store
      const [a, b] = [uniqueId("a"), uniqueId("b")]
      const first = makeInputs(a, fresh(a), 2)
      expect(yield* store.commitBatch(first.inputs)).toEqual({ _tag: "Committed" })
      expect(yield* store.commitBatch(first.inputs)).toEqual({ _tag: "Conflict", agentIds: [a] })
      const taken = first.inputs[0]!.checkpoint.checkpoint_id
      const reuse = makeInput(a, first.state, { checkpointId: () => taken })
      const other = makeInputs(b, fresh(b), 1)
      expect(yield* store.commitBatch([...other.inputs, reuse])).toEqual({ _tag: "Conflict", agentIds: [a] })
      yield* expectAbsent(other.inputs)
      expect(yield* store.loadLogState(a)).toEqual(first.state)
      // The same id twice in one batch.
      const dupId = checkpointId()
      const x = makeInput(b, fresh(b), { checkpointId: () => dupId })
      const y = makeInput(b, x.attestation.state, { checkpointId: () => dupId })
      expect(yield* store.commitBatch([x, y])).toEqual({ _tag: "Conflict", agentIds: [b] })
      yield* expectAbsent([x])
    })
  )

  it.effect("refuses inputs that do not extend one another, before writing", () =>
    Effect.gen(function* () {
      const store = yield* Store
      const a = uniqueId("a")
      const chain = makeInputs(a, fresh(a), 3)
      const gap = [chain.inputs[0]!, chain.inputs[2]!]
      expect(yield* store.commitBatch(gap)).toEqual({ _tag: "Conflict", agentIds: [a] })
      yield* expectAbsent(chain.inputs)
    })
  )

  it.effect("lets exactly one of two concurrent owners extend a head", () =>
    Effect.gen(function* () {
      const store = yield* Store
      const a = uniqueId("a")
      const start = makeInputs(a, fresh(a), 1)
      expect(yield* store.commitBatch(start.inputs)).toEqual({ _tag: "Committed" })
      const one = makeInputs(a, start.state, 3)
      const two = makeInputs(a, start.state, 2)
      const results = yield* Effect.all([store.commitBatch(one.inputs), store.commitBatch(two.inputs)], {
        concurrency: 2
      })
      expect(results.map((r) => r._tag).sort()).toEqual(["Committed", "Conflict"])
      const winner = results[0]!._tag === "Committed" ? one : two
      expect(yield* store.loadLogState(a)).toEqual(winner.state)
      const page = yield* store.listCheckpoints({ agentId: a, limit: 100, offset: 0 })
      expect(page.total).toBe(1 + winner.inputs.length)
    })
  )

  it.effect("answers which checkpoint ids are stored", () =>
    Effect.gen(function* () {
      const store = yield* Store
      const a = uniqueId("a")
      const chain = makeInputs(a, fresh(a), 3)
      yield* store.commitBatch(chain.inputs)
      const ids = chain.inputs.map((input) => input.checkpoint.checkpoint_id)
      const unknown = checkpointId()
      expect(yield* store.existingCheckpoints([ids[0]!, unknown, ids[2]!])).toEqual(new Set([ids[0], ids[2]]))
      expect(yield* store.existingCheckpoints([])).toEqual(new Set())
    })
  )

  it.effect("serves inclusion and consistency proofs at every size the log has had", () =>
    Effect.gen(function* () {
      const store = yield* Store
      const a = uniqueId("a")
      const log = new MemoryMerkleLog()
      let state = fresh(a)
      // Batches of uneven sizes, so stored nodes come from many different commits.
      for (const count of [1, 2, 5, 8, 1, 16, 4]) {
        const chain = makeInputs(a, state, count)
        expect(yield* store.commitBatch(chain.inputs)).toEqual({ _tag: "Committed" })
        for (const leaf of leafHashes(chain.inputs)) log.append(leaf)
        state = chain.state
      }
      const size = log.size // 37
      const sizes = [1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 31, 32, 33, size]
      for (const treeSize of sizes) {
        const head = yield* store.treeHead(a, treeSize)
        expect(head?.root).toBe(hex(log.root(treeSize)))
        expect(yield* store.rootAt(a, treeSize)).toBe(hex(log.root(treeSize)))
        const root = fromHex(head!.root)!
        for (let leaf = 0; leaf < treeSize; leaf++) {
          const proof = yield* store.inclusionProof(a, leaf, treeSize)
          expect(proof).toEqual(log.inclusionProof(leaf, treeSize).map(hex))
          const leafHash = log.node(0, leaf)!
          expect(
            verifyInclusion({ leafIndex: leaf, treeSize, leafHash, proof: proof!.map((p) => fromHex(p)!), root })
          ).toBe(true)
        }
        for (const from of sizes.filter((s) => s <= treeSize)) {
          const proof = yield* store.consistencyProof(a, from, treeSize)
          expect(proof).toEqual(log.consistencyProof(from, treeSize).map(hex))
          const root1 = log.root(from)
          expect(
            verifyConsistency({
              size1: from,
              size2: treeSize,
              proof: proof!.map((p) => fromHex(p)!),
              root1,
              root2: root
            })
          ).toBe(true)
        }
      }
      // Sizes and leaves the log has not reached, and arguments no proof exists for.
      expect(yield* store.inclusionProof(a, size, size + 1)).toBeUndefined()
      expect(yield* store.inclusionProof(a, 3, 3)).toBeUndefined()
      expect(yield* store.inclusionProof(a, -1, 3)).toBeUndefined()
      expect(yield* store.inclusionProof(uniqueId("nobody"), 0, 1)).toBeUndefined()
      expect(yield* store.consistencyProof(a, 5, size + 1)).toBeUndefined()
      expect(yield* store.consistencyProof(a, 6, 5)).toBeUndefined()
      expect(yield* store.consistencyProof(a, 0, 5)).toBeUndefined()
      expect(yield* store.consistencyProof(a, 0, 0)).toEqual([])
      expect(yield* store.consistencyProof(a, size, size)).toEqual([])
      expect(yield* store.treeHead(a, size + 1)).toBeUndefined()
      expect((yield* store.treeHead(a))?.tree_size).toBe(size)
      expect(yield* store.rootAt(a, size + 1)).toBeUndefined()
      expect(yield* store.rootAt(a, -1)).toBeUndefined()
      expect(yield* store.rootAt(a, 0)).toBe(hex(log.root(0)))
    })
  )

  it.effect("keeps the signed head of each agent's newest size; a batch whose newest input has none is refused", () =>
    Effect.gen(function* () {
      const store = yield* Store
      const a = uniqueId("a")
      const chain = makeInputs(a, fresh(a), 3)
      // Heads of the sizes in between left to be signed on demand.
      const inputs = chain.inputs.map((input, i) => (i < 2 ? { ...input, treeHead: undefined } : input))
      expect(yield* store.commitBatch(inputs)).toEqual({ _tag: "Committed" })
      expect(yield* store.treeHead(a, 1)).toBeUndefined()
      expect((yield* store.treeHead(a))?.tree_size).toBe(3)
      expect(yield* store.rootAt(a, 1)).toBe(chain.inputs[0]!.attestation.certificate.merkle.root)
      const next = makeInputs(a, chain.state, 1)
      expect(yield* store.commitBatch([{ ...next.inputs[0]!, treeHead: undefined }])).toEqual({
        _tag: "Conflict",
        agentIds: [a]
      })
      expect((yield* store.loadLogState(a)).head.position).toBe(3)
    })
  )

  it.effect("reloads a log state that appends exactly like the one in memory", () =>
    Effect.gen(function* () {
      const store = yield* Store
      const a = uniqueId("a")
      const chain = makeInputs(a, fresh(a), 11)
      yield* store.commitBatch(chain.inputs)
      const loaded = yield* store.loadLogState(a)
      expect(loaded).toEqual(chain.state)
      const next = makeInput(a, chain.state)
      const fromLoaded = { ...next, before: loaded, attestation: attest(loaded, inputOf(next), key) }
      expect(fromLoaded.attestation).toEqual(next.attestation)
      expect(yield* store.commitBatch([fromLoaded])).toEqual({ _tag: "Committed" })
      expect(yield* store.loadLogState(a)).toEqual(next.attestation.state)
    })
  )

  it.effect("lists checkpoints newest first with limit, offset, verdict, session and total", () =>
    Effect.gen(function* () {
      const store = yield* Store
      const a = uniqueId("a")
      const sessions = [uniqueId("s"), uniqueId("s"), uniqueId("s")]
      const chain = makeInputs(a, fresh(a), 30, { sessionId: (p) => sessions[Math.floor(p / 10)]! })
      yield* store.commitBatch(chain.inputs.slice(0, 13))
      yield* store.commitBatch(chain.inputs.slice(13))
      const newestFirst = chain.inputs.map((input) => input.checkpoint).reverse()
      const page = yield* store.listCheckpoints({ agentId: a, limit: 7, offset: 5 })
      expect(page).toEqual({ items: newestFirst.slice(5, 12), total: 30 })
      // The last page, and one past the end: the total still counts the whole set.
      expect(yield* store.listCheckpoints({ agentId: a, limit: 5, offset: 29 })).toEqual({
        items: newestFirst.slice(29),
        total: 30
      })
      expect(yield* store.listCheckpoints({ agentId: a, limit: 5, offset: 30 })).toEqual({ items: [], total: 30 })
      for (const verdict of ["clear", "review_needed", "boundary_violation"] as const) {
        const expected = newestFirst.filter((c) => c.verdict === verdict)
        expect(expected.length).toBe(10)
        expect(yield* store.listCheckpoints({ agentId: a, limit: 4, offset: 2, verdict })).toEqual({
          items: expected.slice(2, 6),
          total: 10
        })
      }
      const session = sessions[1]!
      const inSession = newestFirst.filter((c) => c.session_id === session)
      expect(yield* store.listCheckpoints({ agentId: a, limit: 100, offset: 0, sessionId: session })).toEqual({
        items: inSession,
        total: 10
      })
      const both = inSession.filter((c) => c.verdict === "clear")
      expect(
        yield* store.listCheckpoints({ agentId: a, limit: 100, offset: 0, sessionId: session, verdict: "clear" })
      ).toEqual({
        items: both,
        total: both.length
      })
      expect(yield* store.listCheckpoints({ agentId: a, limit: 10, offset: 30 })).toEqual({ items: [], total: 30 })
      expect(yield* store.listCheckpoints({ agentId: uniqueId("nobody"), limit: 10, offset: 0 })).toEqual({
        items: [],
        total: 0
      })
      expect(yield* store.sessionCheckpoints(a, session, 3)).toEqual(inSession.slice(0, 3))
      expect(yield* store.recentTraces(a, 2)).toEqual(
        chain.inputs
          .slice(-2)
          .map((input) => input.trace)
          .reverse()
      )
    })
  )

  // Issue 24: a session id is the caller's to choose; an agent's AIP window is rebuilt from its own
  // checkpoints in the session, never from another agent's that named the same session.
  it.effect("reads an agent's session apart from another agent naming the same session, on its index", () =>
    Effect.gen(function* () {
      const store = yield* Store
      const sql = yield* SqlClient.SqlClient
      const [x, y] = [uniqueId("x"), uniqueId("y")]
      const session = uniqueId("shared")
      const xs = makeInputs(x, fresh(x), 4, { sessionId: () => session })
      // Y's checkpoints are interleaved in time with X's, and the newest are Y's.
      const ys = makeInputs(y, fresh(y), 5, { sessionId: () => session })
      expect(yield* store.commitBatch([...xs.inputs, ...ys.inputs])).toEqual({ _tag: "Committed" })
      const newestFirst = (inputs: ReadonlyArray<CommitInput>) => inputs.map((input) => input.checkpoint).reverse()
      expect(yield* store.sessionCheckpoints(x, session, 10)).toEqual(newestFirst(xs.inputs))
      expect(yield* store.sessionCheckpoints(x, session, 2)).toEqual(newestFirst(xs.inputs).slice(0, 2))
      expect(yield* store.sessionCheckpoints(y, session, 10)).toEqual(newestFirst(ys.inputs))
      expect(yield* store.sessionCheckpoints(uniqueId("nobody"), session, 10)).toEqual([])
      // The rebuild reads one (agent, session) range of the index, newest first: no sort, no scan of
      // the agent's other sessions.
      yield* sql`analyze checkpoints`
      const plan = yield* sql<Record<string, unknown>>`explain select checkpoint_id from checkpoints
        where agent_id = ${x} and session_id = ${session} order by occurred_at desc, position desc limit 20`
      const text = plan.map((row) => Object.values(row).join(" ")).join("\n")
      expect(text).toContain("checkpoints_agent_session_time")
      expect(text).not.toMatch(/Sort/)
    })
  )

  it.effect("versions cards and keeps conscience values per agent", () =>
    Effect.gen(function* () {
      const store = yield* Store
      const [a, b] = [uniqueId("a"), uniqueId("b")]
      expect(yield* store.activeCard(a)).toBeUndefined()
      expect(yield* store.putCard(a, card(a, 30, "card-1"))).toBe(1)
      expect(yield* store.putCard(a, card(a, 60, "card-2"))).toBe(2)
      expect(yield* store.putCard(b, card(b, 7))).toBe(1)
      expect(yield* store.activeCard(a)).toEqual({ card: card(a, 60, "card-2"), version: 2 })
      expect(yield* store.activeCard(b)).toEqual({ card: card(b, 7), version: 1 })
      const versions = yield* Effect.all([store.putCard(a, card(a, 1)), store.putCard(a, card(a, 2))], {
        concurrency: 2
      })
      expect(versions.sort()).toEqual([3, 4])
      expect((yield* store.activeCard(a))?.version).toBe(4)

      expect(yield* store.conscienceValues(a)).toEqual([])
      const values = [{ type: "BOUNDARY", name: "n", content: "c", id: "v1" }] as const
      yield* store.putConscienceValues(a, values)
      expect(yield* store.conscienceValues(a)).toEqual(values)
      yield* store.putConscienceValues(a, [])
      expect(yield* store.conscienceValues(a)).toEqual([])
    })
  )

  it.effect("leases outbox items, retries failures and keeps the dead", () =>
    Effect.gen(function* () {
      const store = yield* Store
      const sql = yield* SqlClient.SqlClient
      const a = uniqueId("a")
      const kind = uniqueId("webhook")
      const chain = makeInputs(a, fresh(a), 3, {
        outbox: (p) => [
          { kind, payload: { p } },
          { kind: `${kind}-other`, payload: null }
        ]
      })
      yield* store.commitBatch(chain.inputs)

      const claimed = yield* store.claimOutbox(kind, 2, 1000)
      expect(claimed.map((item) => [item.payload, item.attempts])).toEqual([
        [{ p: 0 }, 1],
        [{ p: 1 }, 1]
      ])
      expect((yield* store.claimOutbox(kind, 10, 1000)).map((item) => item.payload)).toEqual([{ p: 2 }])
      expect(yield* store.claimOutbox(kind, 10, 1000)).toEqual([])
      expect((yield* store.claimOutbox(`${kind}-other`, 10, 1000)).map((item) => item.payload)).toEqual([
        null,
        null,
        null
      ])

      yield* store.completeOutbox([claimed[0]!.id])
      yield* store.failOutbox(claimed[1]!.id, "HTTP 500", 5000, 2)
      // The third item's lease runs out; the failed one waits for its retry time.
      yield* TestClock.adjust(1000)
      const released = yield* store.claimOutbox(kind, 10, 1000)
      expect(released.map((item) => [item.payload, item.attempts])).toEqual([[{ p: 2 }, 2]])
      yield* store.completeOutbox([released[0]!.id])
      yield* TestClock.adjust(4000)
      const retried = yield* store.claimOutbox(kind, 10, 1000)
      expect(retried.map((item) => [item.id, item.attempts])).toEqual([[claimed[1]!.id, 2]])
      yield* store.failOutbox(claimed[1]!.id, "HTTP 502", 5000, 2)
      yield* TestClock.adjust(60_000)
      expect(yield* store.claimOutbox(kind, 10, 1000)).toEqual([])
      const dead = yield* sql<{
        dead: boolean
        last_error: string
      }>`select dead, last_error from outbox where id = ${claimed[1]!.id}::bigint`
      expect(dead).toEqual([{ dead: true, last_error: "HTTP 502" }])
      expect(claimed[0]!.created_at).toBe(new Date(0).toISOString())
    })
  )

  it.effect("keeps agent settings: defaults for an unknown agent, patches merged", () =>
    Effect.gen(function* () {
      const store = yield* Store
      const a = uniqueId("a")
      expect(yield* store.agentSettings(a)).toEqual(defaultAgentSettings)
      expect(defaultAgentSettings).toEqual({
        mode: "observe",
        failure_policy: "fail_open",
        auto_containment_threshold: null,
        containment: null
      })
      const patched = yield* store.putAgentSettings(a, { mode: "enforce", auto_containment_threshold: 3 })
      expect(patched).toEqual({ ...defaultAgentSettings, mode: "enforce", auto_containment_threshold: 3 })
      const paused = {
        status: "paused" as const,
        reason: "admin",
        contained_at: "2026-11-01T00:00:00.000Z",
        contained_by: "system"
      }
      yield* store.putAgentSettings(a, { containment: paused, failure_policy: "fail_closed" })
      expect(yield* store.agentSettings(a)).toEqual({
        mode: "enforce",
        failure_policy: "fail_closed",
        auto_containment_threshold: 3,
        containment: paused
      })
      // A resume clears the containment and keeps the rest; settings live beside the agent's card.
      yield* store.putAgentSettings(a, { containment: null })
      expect(yield* store.agentSettings(a)).toMatchObject({ mode: "enforce", containment: null })
      expect(yield* store.putCard(a, card(a, 30))).toBe(1)
      expect((yield* store.agentSettings(a)).auto_containment_threshold).toBe(3)
    })
  )

  it.effect("stored settings that are not settings fail the read rather than being guessed", () =>
    Effect.gen(function* () {
      const store = yield* Store
      const sql = yield* SqlClient.SqlClient
      const a = uniqueId("a")
      yield* store.putAgentSettings(a, {
        containment: {
          status: "paused",
          reason: "admin",
          contained_at: "2026-11-01T00:00:00.000Z",
          contained_by: "system"
        }
      })
      // Another version's mode: reading it as the defaults would lift the containment.
      yield* sql`update agents set settings = settings || '{"mode": "shout"}'::jsonb where agent_id = ${a}`
      const error = yield* Effect.flip(store.agentSettings(a))
      expect(error).toMatchObject({ _tag: "StoreError", operation: "agentSettings" })
      expect(String(error.cause)).toMatch(/mode/)
      // A patch that replaces the bad member makes the settings readable again.
      expect((yield* store.putAgentSettings(a, { mode: "enforce" })).containment).toMatchObject({ status: "paused" })
    })
  )

  it.effect("records an enforcement once and applies its settings patch only the first time", () =>
    Effect.gen(function* () {
      const store = yield* Store
      const a = uniqueId("a")
      yield* store.putAgentSettings(a, { mode: "nudge" })
      const paused = {
        status: "paused" as const,
        reason: "auto-containment: 3",
        contained_at: "2026-11-01T00:00:00.000Z",
        contained_by: "system"
      }
      const cp = checkpointId()
      const entry = (agentId: string, kind: string, checkpoint: string = cp) => ({
        record_id: `enf-${uniqueId("r")}`,
        agent_id: agentId,
        kind,
        rule: "auto_containment",
        reason: "auto-containment: 3",
        checkpoint_id: checkpoint,
        session_id: "ses-1",
        actor: "system",
        created_at: "2026-11-01T00:00:00.000Z"
      })
      const record = { record: entry(a, "paused"), body: { violations: 3 } }
      const first = yield* store.recordEnforcement(record, { containment: paused })
      expect(first).toEqual({
        recorded: true,
        settings: { ...defaultAgentSettings, mode: "nudge", containment: paused }
      })
      // An admin resumes; the same decision handled again (a new record id, the same checkpoint and
      // kind) records nothing and does not pause again.
      yield* store.putAgentSettings(a, { containment: null })
      const again = yield* store.recordEnforcement({ ...record, record: entry(a, "paused") }, { containment: paused })
      expect(again).toEqual({
        recorded: false,
        settings: { ...defaultAgentSettings, mode: "nudge", containment: null }
      })
      // Without a patch, with an explicit mode; an unknown agent gets a row.
      const b = uniqueId("b")
      expect((yield* store.recordEnforcement({ record: entry(b, "blocked"), mode: "enforce" })).recorded).toBe(true)
      expect(yield* store.agentSettings(b)).toEqual(defaultAgentSettings)
      const records = yield* store.enforcementRecords(a, 10)
      expect(records).toHaveLength(1)
      expect(records[0]).toMatchObject({
        agent_id: a,
        checkpoint_id: cp,
        session_id: "ses-1",
        mode: "nudge",
        action: "paused",
        body: { violations: 3 }
      })
      expect(records[0]!.created_at).toBe("2026-11-01T00:00:00.000Z")
      expect((yield* store.enforcementRecords(b, 10)).map((r) => [r.mode, r.action])).toEqual([["enforce", "blocked"]])
      expect(yield* store.enforcementRecords(uniqueId("nobody"), 10)).toEqual([])
      expect((yield* store.enforcementRecordPage({ agentId: a, limit: 10, offset: 0 })).items).toEqual([record.record])
    })
  )

  it.effect("stores the gateway's enforcement records once per record id, and pages them by kind and time", () =>
    Effect.gen(function* () {
      const store = yield* Store
      const a = uniqueId("a")
      const b = uniqueId("b")
      yield* store.putAgentSettings(a, { mode: "enforce" })
      const at = (minute: number) => `2026-11-01T00:0${minute}:00.000Z`
      const blocked = (agentId: string, minute: number) => ({
        record: {
          record_id: `enf-${uniqueId("r")}`,
          agent_id: agentId,
          kind: "blocked",
          rule: "containment",
          reason: "agent_paused",
          session_id: "ses-1",
          actor: "gateway",
          created_at: at(minute)
        }
      })
      const nudged = {
        record: {
          record_id: `enf-${uniqueId("r")}`,
          agent_id: a,
          kind: "nudged",
          rule: "nudge",
          reason: "boundary_violation",
          checkpoint_id: checkpointId(),
          actor: "gateway",
          created_at: at(2)
        },
        mode: "nudge" as const
      }
      const drafts = [blocked(a, 1), nudged, blocked(a, 3), blocked(b, 4)]
      expect(yield* store.recordEnforcements(drafts)).toBe(4)
      // Delivered again, and twice in one batch: nothing more is stored.
      expect(yield* store.recordEnforcements([...drafts, drafts[0]!])).toBe(0)
      expect(yield* store.recordEnforcements([])).toBe(0)

      const page = yield* store.enforcementRecordPage({ agentId: a, limit: 10, offset: 0 })
      expect(page.total).toBe(3)
      expect(page.items).toEqual([drafts[2]!.record, nudged.record, drafts[0]!.record])
      // The mode the gateway saw, else the agent's stored one.
      expect((yield* store.enforcementRecords(a, 10)).map((r) => r.mode)).toEqual(["enforce", "nudge", "enforce"])
      const only = (query: Partial<Parameters<typeof store.enforcementRecordPage>[0]>) =>
        store.enforcementRecordPage({ agentId: a, limit: 10, offset: 0, ...query })
      expect((yield* only({ kind: "blocked" })).items.map((r) => r.created_at)).toEqual([at(3), at(1)])
      expect((yield* only({ kind: "killed" })).total).toBe(0)
      expect((yield* only({ from: at(2), to: at(3) })).items).toEqual([nudged.record])
      const second = yield* only({ limit: 1, offset: 1 })
      expect(second).toEqual({ items: [nudged.record], total: 3 })
      // Another agent's records are never in this agent's pages.
      expect((yield* store.enforcementRecordPage({ agentId: b, limit: 10, offset: 0 })).items).toEqual([
        drafts[3]!.record
      ])
    })
  )

  it.effect("purges rows past the card's retention and keeps the log provable", () =>
    Effect.gen(function* () {
      const store = yield* Store
      const [a, b] = [uniqueId("a"), uniqueId("b")]
      const now = new Date("2026-11-30T00:00:00.000Z")
      // a: 10 checkpoints from 20 days ago to 11 days ago, then 5 from 2 days ago.
      const timestamp = (p: number) => new Date(now.getTime() - (p < 10 ? 20 - p : 2) * DAY).toISOString()
      const chain = makeInputs(a, fresh(a), 15, { timestamp })
      const old = makeInputs(b, fresh(b), 3, { timestamp: () => "2020-01-01T00:00:00Z" })
      yield* store.commitBatch([...chain.inputs, ...old.inputs])
      yield* store.putCard(a, card(a, 7))
      const log = new MemoryMerkleLog()
      for (const leaf of leafHashes(chain.inputs)) log.append(leaf)

      expect(yield* store.purgeExpired(now)).toBe(20) // 10 checkpoints and their 10 traces; b has no card
      for (const input of chain.inputs.slice(0, 10)) {
        expect(yield* store.getCheckpoint(input.checkpoint.checkpoint_id)).toBeUndefined()
        expect(yield* store.getCertificate(input.checkpoint.checkpoint_id)).toBeUndefined()
        expect(yield* store.getTrace(input.trace.trace_id)).toBeUndefined()
      }
      for (const input of [...chain.inputs.slice(10), ...old.inputs]) yield* expectStored(input)
      expect((yield* store.listCheckpoints({ agentId: a, limit: 100, offset: 0 })).total).toBe(5)
      const kept = chain.inputs.slice(10).filter((input) => input.checkpoint.verdict === "clear").length
      expect((yield* store.listCheckpoints({ agentId: a, limit: 100, offset: 0, verdict: "clear" })).total).toBe(kept)
      const proof = yield* store.inclusionProof(a, 3, 15)
      expect(proof).toEqual(log.inclusionProof(3, 15).map(hex))
      expect(yield* store.consistencyProof(a, 4, 15)).toEqual(log.consistencyProof(4, 15).map(hex))
      expect(yield* store.purgeExpired(now)).toBe(0)
      // The log goes on from where it was.
      expect(yield* store.commitBatch(makeInputs(a, chain.state, 1).inputs)).toEqual({ _tag: "Committed" })
    })
  )

  it.effect("leaves nothing behind when a statement fails mid-transaction", () =>
    Effect.gen(function* () {
      const store = yield* Store
      const [a, b] = [uniqueId("a"), uniqueId("b")]
      const start = makeInputs(a, fresh(a), 2)
      yield* store.commitBatch(start.inputs)
      const next = makeInputs(a, start.state, 2)
      const other = makeInputs(b, fresh(b), 1, { outbox: () => [{ kind: `k-${b}`, payload: 1 }] })
      // The traces are written after the heads, checkpoints and counters: a bad time fails there.
      const last = next.inputs[1]!
      const broken = { ...last, trace: { ...last.trace, timestamp: "not a time" } }
      const failure = yield* Effect.flip(store.commitBatch([...other.inputs, next.inputs[0]!, broken]))
      expect(failure._tag).toBe("StoreError")
      yield* expectAbsent(next.inputs)
      yield* expectAbsent(other.inputs)
      expect((yield* store.listCheckpoints({ agentId: a, limit: 10, offset: 0 })).total).toBe(2)
      expect(yield* store.inclusionProof(a, 2, 3)).toBeUndefined()
      expect(yield* store.claimOutbox(`k-${b}`, 10, 1000)).toEqual([])
      expect(yield* store.commitBatch([...other.inputs, ...next.inputs])).toEqual({ _tag: "Committed" })
      yield* expectStored(next.inputs[1]!)
    })
  )
}

/** The attestation input an input was made from (all of it is in its certificate). */
const inputOf = (input: CommitInput) => {
  const { certificate } = input.attestation
  const { verdict: _v, concerns_hash: _h, rules_version: _r, ...claims } = certificate.claims
  return {
    certificate_id: certificate.certificate_id,
    issued_at: certificate.issued_at,
    subject: certificate.subject,
    claims,
    input_commitments: certificate.input_commitments
  }
}
