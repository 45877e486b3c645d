/**
 * The evidence export over real HTTP: JSONL lines in log order ending with the signed tree head,
 * every line verified offline with `candor verify --export`'s function (and once as the real
 * command), a tampered or truncated file refused, the CSV shape, from/to, roles, and the streaming:
 * a few thousand checkpoints arrive as a chunked body whose first bytes come before the end, and
 * the stream reads the log a page at a time.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it as plain, layer } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Agent, fetch } from "undici"
import { type ExportRepo, type ExportRow, make as makeExportRepo } from "../../adapters/store/ExportRepo.js"
import { Store } from "../../adapters/store/Store.js"
import { toBase64 } from "../../core/Bytes.js"
import { frontierRoot } from "../../core/Merkle.js"
import { formatCheckpoint, signNote } from "../../core/Note.js"
import { exportStream } from "../../services/EvidenceExport.js"
import { verifyExportFile } from "../../src/cli/VerifyExport.js"
import { key, origin } from "../adapters/store/Fixtures.js"
import { runCandor } from "../e2e/ServeProcess.js"
import { seed as seedInputs } from "./AgentData.js"
import * as Harness from "./Support.js"
import { ApiHarness } from "./Support.js"

/** The key listing of the fixtures' signing key (it signs the seeded certificates and tree heads). */
const KEYS = { keys: [{ key_id: key.keyId, public_key: toBase64(key.publicKey) }] }
const KEY_LIST = [{ keyId: key.keyId, publicKey: key.publicKey }]

const tempDir = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "candor-export-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

const write = (dir: string, name: string, content: string) => {
  const path = join(dir, name)
  writeFileSync(path, content)
  return path
}

/**
 * Commits checkpoints whose tree heads are signed as the workers sign them: under the log origin
 * (the fixtures sign under a fixed name, which a verifier trusting keys per origin refuses).
 */
const seed = (agentId: string, count: number) =>
  seedInputs(agentId, count, (input) => ({
    ...input,
    treeHead: signNote(
      formatCheckpoint({
        origin: origin(agentId),
        size: input.attestation.state.frontier.size,
        root: frontierRoot(input.attestation.state.frontier),
        extensions: []
      }),
      { name: origin(agentId), key }
    )
  }))

/** A fresh agent of the fixtures' organization. */
const orgAgent = Effect.flatMap(ApiHarness, (api) =>
  api.claimAgent({ userId: api.fixtures.owner.userId, orgId: api.fixtures.orgId })
)

/** The harness hands a one-line body over parsed: the lines of either. */
const lines = (body: unknown): Array<any> =>
  typeof body !== "string"
    ? [body]
    : body
        .split("\n")
        .filter((line) => line !== "")
        .map((line) => JSON.parse(line))

/** RFC 4180 rows: quoted fields may hold commas, doubled quotes and line breaks. */
const parseCsv = (text: string): Array<Array<string>> => {
  const rows: Array<Array<string>> = []
  let row: Array<string> = []
  let field = ""
  let quoted = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!
    if (quoted && c === '"' && text[i + 1] === '"') {
      field += '"'
      i++
    } else if (quoted && c === '"') quoted = false
    else if (quoted || (c !== '"' && c !== "," && c !== "\r")) field += c
    else if (c === '"') quoted = true
    else if (c === ",") {
      row.push(field)
      field = ""
    } else {
      // CRLF ends the row.
      row.push(field)
      rows.push(row)
      row = []
      field = ""
      i++
    }
  }
  return rows
}

const verify = (path: string) => verifyExportFile(path, KEY_LIST).pipe(Effect.provide(NodeContext.layer))

const exportOf = (agentId: string, query = "", token?: string) =>
  Effect.flatMap(ApiHarness, (api) =>
    api.call("GET", `/v1/agents/${agentId}/export${query}`, { token: token ?? api.fixtures.member.token })
  )

layer(Harness.layer(), { timeout: "180 seconds" })("evidence export", (it) => {
  it.scoped("JSONL: each checkpoint in log order with its certificate, trace and audit path, the head last", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const agentId = yield* orgAgent
      // Two batches: the certificates carry proofs at sizes 4 and 7, the export proves all at 7.
      const seeded = [...(yield* seed(agentId, 4)), ...(yield* seed(agentId, 3))]
      const res = yield* exportOf(agentId)
      expect(res.status).toBe(200)
      expect(res.headers.get("content-type")).toContain("application/x-ndjson")
      expect(res.headers.get("content-disposition")).toBe(`attachment; filename="${agentId}-export.jsonl"`)
      const all = lines(res.body)
      expect(all).toHaveLength(8)
      const [head] = all.splice(7)
      all.forEach((line, i) => {
        const input = seeded[i]!
        expect(Object.keys(line).sort()).toEqual(
          ["certificate", "checkpoint", "inclusion", "trace", "type", "verdict_proof"].sort()
        )
        expect(line.type).toBe("checkpoint")
        expect(line.checkpoint).toEqual(input.checkpoint)
        expect(line.certificate).toEqual(input.attestation.certificate)
        expect(line.trace).toEqual(input.trace)
        expect(line.verdict_proof).toBeNull()
        expect(line.inclusion.leaf_index).toBe(i)
        expect(line.inclusion.tree_size).toBe(7)
      })
      const root = (yield* api.call("GET", `/v1/agents/${agentId}/merkle-root`)).body
      expect(head).toEqual({
        type: "tree_head",
        agent_id: agentId,
        tree_size: 7,
        root: root.root,
        signed_tree_head: root.signed_tree_head
      })

      const dir = yield* tempDir
      const report = yield* verify(write(dir, "export.jsonl", res.body))
      expect(report).toMatchObject({ valid: true, certificates: 7, ok: 7, failures: [], errors: [] })
    })
  )

  it.scoped(
    "JSONL: the agent's enforcement records after the checkpoints, oldest first, within from/to; it verifies",
    () =>
      Effect.gen(function* () {
        const agentId = yield* orgAgent
        yield* seed(agentId, 2)
        const record = (kind: string, at: string, reason = "agent_paused") => ({
          record: {
            record_id: `enf-${crypto.randomUUID()}`,
            agent_id: agentId,
            kind,
            rule: "containment",
            // A reason may say anything, a tree head included: it is still one record line.
            reason,
            actor: "gateway",
            created_at: at
          }
        })
        const drafts = [
          record("paused", "2026-11-01T00:02:00.000Z", "investigating"),
          record("blocked", "2026-11-01T00:01:00.000Z", '{"type":"tree_head"}'),
          record("blocked", "2026-11-01T00:03:00.000Z")
        ]
        const store = yield* Store
        yield* store.recordEnforcements(drafts)
        yield* store.recordEnforcements([
          { record: { ...record("killed", "2026-11-01T00:04:00.000Z").record, agent_id: "agt-other" } }
        ])
        // Three records over pages of two (the export's keyset paging).
        const repo = yield* makeExportRepo
        const head = { agent_id: agentId, tree_size: 2, root: "00".repeat(32), note: "n" }
        const paged = Chunk.toReadonlyArray(
          yield* Stream.runCollect(exportStream(repo, head, { format: "jsonl", pageSize: 2 }))
        )
          .join("")
          .split("\n")
          .filter(Boolean)
          .map((line) => JSON.parse(line))
        expect(paged.filter((line) => line.type === "enforcement_record").map((line) => line.record)).toEqual([
          drafts[1]!.record,
          drafts[0]!.record,
          drafts[2]!.record
        ])

        const res = yield* exportOf(agentId)
        expect(res.status).toBe(200)
        const all = lines(res.body)
        expect(all.map((line) => line.type)).toEqual([
          "checkpoint",
          "checkpoint",
          "enforcement_record",
          "enforcement_record",
          "enforcement_record",
          "tree_head"
        ])
        expect(all[2]).toEqual({ type: "enforcement_record", record: drafts[1]!.record })
        const report = yield* verify(write(yield* tempDir, "records.jsonl", res.body))
        expect(report).toMatchObject({ valid: true, certificates: 2, ok: 2, failures: [], errors: [] })
        // from and to select records by their time too.
        const window = lines((yield* exportOf(agentId, "?from=2026-11-01T00:02:00Z&to=2026-11-01T00:03:00Z")).body)
        expect(window.filter((line) => line.type === "enforcement_record")).toEqual([
          { type: "enforcement_record", record: drafts[0]!.record }
        ])
      })
  )

  it.scoped("a tampered, reordered or truncated export does not verify; the command agrees", () =>
    Effect.gen(function* () {
      const agentId = yield* orgAgent
      yield* seed(agentId, 5)
      const body: string = (yield* exportOf(agentId)).body
      const raw = body.split("\n").filter((line) => line !== "")
      const dir = yield* tempDir
      const tamperedLine = JSON.parse(raw[2]!)
      tamperedLine.certificate.claims.verdict = "clear"
      tamperedLine.certificate.claims.concerns = []
      const tampered = [...raw.slice(0, 2), JSON.stringify(tamperedLine), ...raw.slice(3)].join("\n")
      const badPath = JSON.parse(raw[1]!)
      badPath.inclusion.audit_path = [...badPath.inclusion.audit_path].reverse()
      const wrongPath = [raw[0], JSON.stringify(badPath), ...raw.slice(2)].join("\n")

      const bad = yield* verify(write(dir, "tampered.jsonl", tampered))
      expect(bad.valid).toBe(false)
      expect(bad.ok).toBe(4)
      expect(bad.failures).toHaveLength(1)
      expect(bad.failures[0]!.line).toBe(3)
      expect(bad.failures[0]!.reasons.join(" ")).toContain("signature: does not verify")

      const path = yield* verify(write(dir, "path.jsonl", wrongPath))
      expect(path.failures.map((f) => f.line)).toEqual([2])
      expect(path.failures[0]!.reasons.join(" ")).toContain("inclusion")

      const truncated = yield* verify(write(dir, "cut.jsonl", raw.slice(0, 3).join("\n")))
      expect(truncated.valid).toBe(false)
      expect(truncated.errors.join(" ")).toContain("does not end with its signed tree head")

      const swapped = yield* verify(write(dir, "swapped.jsonl", [raw[1], raw[0], ...raw.slice(2)].join("\n")))
      expect(swapped.failures.map((f) => f.reasons.join(" ")).join(" ")).toContain("order")

      // The real command: a summary, exit 0 only when everything verifies.
      const keysFile = write(dir, "keys.json", JSON.stringify(KEYS))
      const good = yield* runCandor(["verify", "--export", write(dir, "export.jsonl", body), "--keys", keysFile])
      expect(good.code, good.stderr).toBe(0)
      expect(good.stdout).toContain("5 certificates ok, 0 failed")
      expect(good.stdout).toContain("VALID")
      const refused = yield* runCandor(["verify", "--export", join(dir, "tampered.jsonl"), "--keys", keysFile])
      expect(refused.code).toBe(1)
      expect(refused.stdout).toContain("4 certificates ok, 1 failed")
      expect(refused.stdout).toContain("line 3")
    })
  )

  it.scoped("a verdict proof of the proofs table is carried on its line and checked", () =>
    Effect.gen(function* () {
      const agentId = yield* orgAgent
      const [, second] = yield* seed(agentId, 2)
      const sql = yield* SqlClient.SqlClient
      const id = second!.checkpoint.checkpoint_id
      yield* sql`insert into proofs (checkpoint_id, agent_id, status, proof)
        values (${id}, ${agentId}, 'completed', ${JSON.stringify({ forged: true })}::jsonb)`
      const body: string = (yield* exportOf(agentId)).body
      const [first, line] = lines(body)
      expect(first.verdict_proof).toBeNull()
      expect(line.verdict_proof).toEqual({ forged: true })
      const report = yield* verify(write(yield* tempDir, "proof.jsonl", body))
      expect(report.failures).toHaveLength(1)
      expect(report.failures[0]!.reasons).toContain("verdict_proof: does not verify")
    })
  )

  it.effect("CSV: one row per checkpoint, quoted per RFC 4180, the tree head last", () =>
    Effect.gen(function* () {
      const agentId = yield* orgAgent
      const seeded = yield* seed(agentId, 3)
      const res = yield* exportOf(agentId, "?format=csv")
      expect(res.status).toBe(200)
      expect(res.headers.get("content-type")).toContain("text/csv")
      expect(res.headers.get("content-disposition")).toBe(`attachment; filename="${agentId}-export.csv"`)
      const [header, ...rows] = parseCsv(res.body)
      expect(header).toEqual([
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
      ])
      expect(rows).toHaveLength(4)
      const record = (row: Array<string>) => Object.fromEntries(header!.map((column, i) => [column, row[i]]))
      rows.slice(0, 3).forEach((row, i) => {
        const input = seeded[i]!
        expect(row).toHaveLength(header!.length)
        expect(record(row)).toMatchObject({
          type: "checkpoint",
          agent_id: agentId,
          checkpoint_id: input.checkpoint.checkpoint_id,
          timestamp: input.checkpoint.timestamp,
          verdict: input.checkpoint.verdict,
          concern_categories: input.checkpoint.concerns.map((c) => c.category).join(";"),
          certificate_id: input.attestation.certificate.certificate_id,
          chain_hash: input.attestation.certificate.chain.hash,
          leaf_index: String(i),
          tree_size: "3",
          trace_id: input.trace.trace_id,
          verdict_proof: "none"
        })
      })
      const head = record(rows[3]!)
      expect(head).toMatchObject({ type: "tree_head", agent_id: agentId, tree_size: "3" })
      // The signed note spans several lines: one quoted field.
      expect(head["signed_tree_head"]).toContain(`/agents/${agentId}\n3\n`)
    })
  )

  it.effect("from and to select checkpoints by timestamp; the head still covers them", () =>
    Effect.gen(function* () {
      const agentId = yield* orgAgent
      // The fixtures' checkpoint at position p is at 2026-11-01T00:00:00Z plus p seconds.
      yield* seed(agentId, 7)
      const res = yield* exportOf(agentId, "?from=2026-11-01T00:00:02Z&to=2026-11-01T00:00:05.000Z")
      expect(res.status).toBe(200)
      const all = lines(res.body)
      expect(all.slice(0, -1).map((line) => line.inclusion.leaf_index)).toEqual([2, 3, 4])
      expect(all.at(-1)).toMatchObject({ type: "tree_head", tree_size: 7 })
      const report = yield* verify(write(yield* tempDir, "window.jsonl", res.body))
      expect(report).toMatchObject({ valid: true, ok: 3 })
      expect(lines((yield* exportOf(agentId, "?from=2026-11-01T00:00:05%2B00:00")).body)).toHaveLength(3)
      expect(lines((yield* exportOf(agentId, "?to=2026-11-01T00:00:00Z")).body)).toHaveLength(1)
    }).pipe(Effect.scoped)
  )

  it.effect("bad parameters are 400s with an error", () =>
    Effect.gen(function* () {
      const agentId = yield* orgAgent
      yield* seed(agentId, 1)
      for (const query of [
        "?from=yesterday",
        "?to=2026-13-01T00:00:00Z",
        "?format=xml",
        "?from=2026-11-02T00:00:00Z&to=2026-11-01T00:00:00Z"
      ]) {
        const res = yield* exportOf(agentId, query)
        expect(res.status, query).toBe(400)
        expect(typeof res.body.error, query).toBe("string")
      }
    })
  )

  it.effect(
    "readers of the agent only: members read, another organization and unknown agents 404, 401 without credentials",
    () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const agentId = yield* orgAgent
        yield* seed(agentId, 1)
        const memberKey = yield* api.createApiKey(api.fixtures.member.userId, {
          orgId: api.fixtures.orgId,
          role: "member"
        })
        expect((yield* exportOf(agentId)).status).toBe(200)
        expect((yield* api.call("GET", `/v1/agents/${agentId}/export`, { apiKey: memberKey })).status).toBe(200)
        expect((yield* exportOf(agentId, "", api.serviceRoleKey)).status).toBe(200)
        const other = yield* exportOf(agentId, "", api.fixtures.userB.token)
        expect(other.status).toBe(404)
        expect(other.body.error).toEqual(expect.any(String))
        expect((yield* api.call("GET", `/v1/agents/${agentId}/export`)).status).toBe(401)
        // Claimed but never seen: no log to export.
        const silent = yield* exportOf(yield* orgAgent)
        expect(silent.status).toBe(404)
        expect(silent.body.error).toContain("no log")
        expect((yield* exportOf("agt-nobody", "", api.serviceRoleKey)).status).toBe(404)
      })
  )

  it.scoped(
    "a few thousand checkpoints stream: a chunked body whose first bytes arrive before its end",
    () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const agentId = yield* orgAgent
        for (let i = 0; i < 6; i++) yield* seed(agentId, 500)
        // A connection of its own: seeding outlasts the server's keep-alive, and a pooled socket it
        // closes meanwhile would be reset under the request.
        const dispatcher = yield* Effect.acquireRelease(
          Effect.sync(() => new Agent()),
          (agent) => Effect.promise(() => agent.close())
        )
        const response = yield* Effect.promise(() =>
          fetch(`${api.url}/v1/agents/${agentId}/export`, {
            headers: { authorization: `Bearer ${api.fixtures.member.token}` },
            dispatcher
          })
        )
        expect(response.status).toBe(200)
        expect(response.headers.get("transfer-encoding")).toBe("chunked")
        expect(response.headers.get("content-length")).toBeNull()
        const reader = response.body!.getReader()
        const decoder = new TextDecoder()
        const first = yield* Effect.promise(() => reader.read())
        const firstText = decoder.decode(first.value, { stream: true })
        // The first bytes are a prefix: the tree head, written last, is not in them.
        expect(firstText.startsWith('{"type":"checkpoint"')).toBe(true)
        expect(firstText).not.toContain('"type":"tree_head"')
        let text = firstText
        for (;;) {
          const next = yield* Effect.promise(() => reader.read())
          if (next.done) break
          text += decoder.decode(next.value, { stream: true })
        }
        expect(text.length).toBeGreaterThan(firstText.length)
        const all = text.split("\n").filter((line) => line !== "")
        expect(all).toHaveLength(3001)
        expect(JSON.parse(all.at(-1)!)).toMatchObject({ type: "tree_head", tree_size: 3000 })
        const report = yield* verify(write(yield* tempDir, "large.jsonl", text))
        expect(report).toMatchObject({ valid: true, certificates: 3000, ok: 3000 })
      }),
    { timeout: 120_000 }
  )
})

describe("exportStream", () => {
  plain.effect("reads the next page only when the one before was taken", () =>
    Effect.gen(function* () {
      const pages: Array<number> = []
      const row = (position: number) =>
        ({
          position,
          checkpoint: { agent_id: "agt", checkpoint_id: `ic-${position}` },
          certificate: { merkle: { leaf_index: position }, verdict_proof: null },
          trace: null,
          proof: null
        }) as unknown as ExportRow
      const repo: ExportRepo["Type"] = {
        page: (query) =>
          Effect.sync(() => {
            pages.push(query.after)
            const start = query.after + 1
            return Array.from({ length: Math.max(0, Math.min(query.limit, query.below - start)) }, (_, i) =>
              row(start + i)
            )
          }),
        enforcementRecords: () => Effect.succeed([]),
        inclusionProofs: (_agent, leaves) => Effect.succeed(leaves.map(() => []))
      }
      const head = { agent_id: "agt", tree_size: 10, root: "00".repeat(32), note: "n" }
      const stream = exportStream(repo, head, { format: "jsonl", pageSize: 3 })
      const first = yield* Stream.runCollect(Stream.take(stream, 1))
      expect(pages).toEqual([-1])
      expect(Chunk.unsafeHead(first).split("\n").filter(Boolean)).toHaveLength(3)
      pages.length = 0
      const all = Chunk.toReadonlyArray(yield* Stream.runCollect(stream)).join("")
      expect(pages).toEqual([-1, 2, 5, 8])
      expect(all.split("\n").filter(Boolean)).toHaveLength(11)
    })
  )
})
