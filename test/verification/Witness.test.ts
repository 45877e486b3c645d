/**
 * Witnessing end to end (docs/witnesses.md): checkpoints committed by the real pipeline, a
 * witnessing cycle against a fake witness over real HTTP (test/support/FakeWitness.ts), the
 * cosigned tree head fetched from the API, and `candor verify --witness-key` as a child process:
 * valid with the witness's key, invalid with another witness's or a tampered cosignature. A 409 is
 * retried from the witness's size; a witness that answers garbage or an invalid cosignature gets
 * nothing stored. And CANDOR_WITNESSES' parsing.
 */
import { expect, layer } from "@effect/vitest"
import { describe, it as plainIt } from "vitest"
import * as Effect from "effect/Effect"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fromBase64, toBase64 } from "../../core/Bytes.js"
import { parseWitnessKey, verifyWitnessQuorum, type WitnessKey } from "../../core/Cosignature.js"
import { generateSigningKey } from "../../core/Signing.js"
import { config, parseWitnesses } from "../../src/Config.js"
import { ApiHarness } from "../api/Support.js"
import { runCandor as candor } from "../e2e/ServeProcess.js"
import type { Misbehaviour } from "../support/FakeWitness.js"
import { commitEvents, eventually, originOf, world } from "./Support.js"
import * as WitnessRepo from "../../adapters/store/WitnessRepo.js"
import { WitnessClient } from "../../adapters/witness/WitnessClient.js"
import * as Witnessing from "../../streams/Witnessing.js"
import { witnessCycle } from "../../streams/Witnessing.js"
import { cycle, endpointOf, fakeWitness, requestsFor } from "./WitnessChecks.js"

const keyOf = (vkey: string): WitnessKey => parseWitnessKey(vkey) as WitnessKey

const tempDir = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "candor-witness-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

layer(world({ prover: false }), { timeout: "180 seconds", excludeTestServices: true })("witnessing", (it) => {
  it.scoped(
    "cosigns each new head with a consistency proof from the last; the API serves them; candor verify checks them",
    () =>
      Effect.gen(function* () {
        const api = yield* ApiHarness
        const agentId = "agt-witness-e2e"
        const witness = yield* fakeWitness()
        const [first] = yield* commitEvents(agentId, [[]])

        expect(yield* cycle([witness], agentId)).toEqual({
          [witness.key.name]: [{ _tag: "Cosigned", treeSize: 1, timestamp: expect.any(Number) }]
        })
        expect(witness.requests.at(-1)?.body.startsWith("old 0\n\n")).toBe(true)
        // Nothing new: the next cycle sends nothing for this log.
        const before = witness.requests.length
        expect((yield* cycle([witness], agentId))[witness.key.name]).toEqual([])
        expect(witness.requests.length).toBe(before)

        const root = (yield* api.call("GET", `/v1/agents/${agentId}/merkle-root`)).body
        expect(root.tree_size).toBe(1)
        const cosignedHead = root.signed_tree_head as string
        expect(cosignedHead).toContain(`\u2014 ${witness.key.name} `)
        expect(verifyWitnessQuorum(cosignedHead, [witness.key]).ok).toBe(true)
        // Candor's own signature still verifies on the cosigned note: the note verifier key it names is unchanged.
        expect(root.note_verifier_key).toMatch(new RegExp(`^${originOf(agentId)}\\+`))

        const listed = (yield* api.call("GET", `/v1/agents/${agentId}/cosignatures?tree_size=1`)).body
        expect(listed).toMatchObject({
          agent_id: agentId,
          tree_size: 1,
          signed_tree_head: cosignedHead,
          cosignatures: [{ witness: witness.key.name, timestamp: expect.any(Number) }]
        })
        expect(listed.cosignatures[0].witness_key).toBe(witness.vkey.split("+").slice(0, 2).join("+"))
        expect((yield* api.call("GET", `/v1/agents/${agentId}/cosignatures?tree_size=2`)).status).toBe(400)
        expect((yield* api.call("GET", `/v1/agents/${agentId}/cosignatures?tree_size=0`)).status).toBe(400)
        expect((yield* api.call("GET", `/v1/agents/agt-nobody/cosignatures`)).status).toBe(404)

        // Two more checkpoints: the witness gets "old 1" and a consistency proof to 3.
        yield* commitEvents(agentId, [[], []])
        expect((yield* cycle([witness], agentId))[witness.key.name]).toMatchObject([{ _tag: "Cosigned", treeSize: 3 }])
        const body = witness.requests.at(-1)!.body
        expect(body.startsWith("old 1\n")).toBe(true)
        expect(body.split("\n\n")[0]!.split("\n").length).toBeGreaterThan(1)
        expect(witness.sizes.get(originOf(agentId))).toBe(3)
        // The proofs' heads carry the cosignatures of their sizes.
        const consistency = (yield* api.call("GET", `/v1/agents/${agentId}/consistency-proof?from=1&to=3`)).body
        expect(verifyWitnessQuorum(consistency.from.signed_tree_head, [witness.key]).ok).toBe(true)
        expect(verifyWitnessQuorum(consistency.to.signed_tree_head, [witness.key]).ok).toBe(true)
        // Size 2 was never the newest at a cycle: its head has no cosignature.
        const atTwo = (yield* api.call("GET", `/v1/checkpoints/${first}/inclusion-proof?tree_size=2`)).body
        expect(verifyWitnessQuorum(atTwo.signed_tree_head, [witness.key]).ok).toBe(false)

        // candor verify, offline, with the certificate and the head of its size.
        const certificate = (yield* api.call("GET", `/v1/checkpoints/${first}/certificate`)).body
        const keys = (yield* api.call("GET", "/v1/keys")).body
        const atIssue = (yield* api.call("GET", `/v1/checkpoints/${first}/inclusion-proof?tree_size=1`)).body
        expect(atIssue.signed_tree_head).toBe(cosignedHead)
        const dir = yield* tempDir
        const file = (name: string, content: string) => {
          const path = join(dir, name)
          writeFileSync(path, content)
          return path
        }
        const cert = file("certificate.json", JSON.stringify(certificate))
        const keysFile = file("keys.json", JSON.stringify(keys))
        const head = file("head.txt", cosignedHead)
        // One byte of the cosignature changed (its signature part), the note otherwise intact.
        const line = cosignedHead.split("\n").find((l) => l.startsWith(`\u2014 ${witness.key.name} `))!
        const bytes = fromBase64(line.split(" ")[2]!)!
        bytes[40] = bytes[40]! ^ 0x01
        const tampered = file(
          "tampered.txt",
          cosignedHead.replace(line, `\u2014 ${witness.key.name} ${toBase64(bytes)}`)
        )
        const other = `witness.test/other+${"0".repeat(8)}+x`
        const otherKey = (yield* fakeWitness("witness.test/other")).vkey
        // The evidence export ends with the newest head, cosigned at size 3.
        const exported = yield* api.call("GET", `/v1/agents/${agentId}/export`, { token: api.serviceRoleKey })
        expect(exported.status).toBe(200)
        const exportFile = file("export.jsonl", exported.body as string)
        const base = ["verify", cert, "--keys", keysFile]
        const [valid, wrongWitness, quorumOne, tamperedRun, badKey, badQuorum, noHead, exportRun] = yield* Effect.all(
          [
            candor([...base, "--tree-head", head, "--witness-key", witness.vkey]),
            candor([...base, "--tree-head", head, "--witness-key", otherKey]),
            candor([
              ...base,
              "--tree-head",
              head,
              "--witness-key",
              witness.vkey,
              "--witness-key",
              otherKey,
              "--witness-quorum",
              "1"
            ]),
            candor([...base, "--tree-head", tampered, "--witness-key", witness.vkey]),
            candor([...base, "--tree-head", head, "--witness-key", other]),
            candor([...base, "--tree-head", head, "--witness-key", witness.vkey, "--witness-quorum", "2"]),
            candor([...base, "--witness-key", witness.vkey]),
            candor(["verify", "--export", exportFile, "--keys", keysFile, "--witness-key", witness.vkey])
          ],
          { concurrency: 3 }
        )
        expect(valid.code, valid.stdout + valid.stderr).toBe(0)
        expect(valid.stdout).toMatch(/witnesses\s+ok\s+1 cosigned, 1 of 1 required/)
        expect(valid.stdout).toContain(`${witness.key.name} cosigned size 1 at `)
        expect(valid.stdout).toMatch(/VALID$/m)
        expect(wrongWitness.code).toBe(1)
        expect(wrongWitness.stdout).toMatch(/witnesses\s+FAILED/)
        expect(wrongWitness.stdout).toContain("none by witness.test/other+")
        expect(wrongWitness.stdout).toContain("INVALID")
        expect(quorumOne.code, quorumOne.stdout).toBe(0)
        expect(quorumOne.stdout).toMatch(/1 cosigned, 1 of 2 required/)
        expect(tamperedRun.code).toBe(1)
        expect(tamperedRun.stdout).toContain(`invalid cosignature by ${witness.key.name}+`)
        expect(badKey.code).toBe(2)
        expect(badKey.stderr).toContain("--witness-key")
        expect(badQuorum.code).toBe(2)
        expect(badQuorum.stderr).toContain("--witness-quorum must be between 1 and the 1")
        expect(noHead.code).toBe(2)
        expect(noHead.stderr).toContain("--tree-head")
        expect(exportRun.code, exportRun.stdout + exportRun.stderr).toBe(0)
        expect(exportRun.stdout).toContain(`${witness.key.name} cosigned size 3 at `)
      }),
    { timeout: 150_000 }
  )

  it.scoped("a 409 is retried from the witness's size; a fork is reported, not retried", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const agentId = "agt-witness-409"
      const witness = yield* fakeWitness()
      yield* commitEvents(agentId, [[], []])
      // The witness already cosigned size 2 of this log (another Candor process did, say).
      const two = (yield* api.call("GET", `/v1/agents/${agentId}/merkle-root`)).body
      witness.setRecord(originOf(agentId), 2, Buffer.from(two.root, "hex"))
      yield* commitEvents(agentId, [[]])
      expect((yield* cycle([witness], agentId))[witness.key.name]).toMatchObject([{ _tag: "Cosigned", treeSize: 3 }])
      expect(requestsFor(witness, agentId).map((r) => r.status)).toEqual([409, 200])
      expect(requestsFor(witness, agentId)[1]!.body.startsWith("old 2\n")).toBe(true)

      // A witness that holds another root at the log's size: a fork, reported.
      const forked = yield* fakeWitness("witness.test/forked")
      yield* commitEvents(agentId, [[]])
      forked.setRecord(originOf(agentId), 4, new Uint8Array(32).fill(9))
      const outcome = (yield* cycle([forked], agentId))[forked.key.name]
      expect(outcome).toMatchObject([{ _tag: "Failed" }])
      expect((outcome as Array<{ error: string }>)[0]!.error).toContain("another root for size 4")
      expect(requestsFor(forked, agentId).map((r) => r.status)).toEqual([409, 409])
    })
  )

  it.scoped("a witness answering garbage or an invalid cosignature gets nothing stored; an honest answer then is", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const agentId = "agt-witness-bad"
      const witness = yield* fakeWitness()
      yield* commitEvents(agentId, [[]])
      const cases: ReadonlyArray<[Misbehaviour, string]> = [
        ["garbage", "not signature lines"],
        ["error", "HTTP 500"],
        ["bad_signature", "invalid cosignature"],
        ["other_key", "no cosignature by"],
        ["future", "in the future"]
      ]
      for (const [misbehaviour, reason] of cases) {
        witness.misbehave = misbehaviour
        const outcome = (yield* cycle([witness], agentId))[witness.key.name] as Array<{ _tag: string; error?: string }>
        expect(outcome, misbehaviour).toMatchObject([{ _tag: "Failed" }])
        expect(outcome[0]!.error, misbehaviour).toContain(reason)
        const listed = (yield* api.call("GET", `/v1/agents/${agentId}/cosignatures`)).body
        expect(listed.cosignatures, misbehaviour).toEqual([])
        expect(listed.signed_tree_head).not.toContain(witness.key.name)
      }
      witness.misbehave = undefined
      expect((yield* cycle([witness], agentId))[witness.key.name]).toMatchObject([{ _tag: "Cosigned", treeSize: 1 }])
      const listed = (yield* api.call("GET", `/v1/agents/${agentId}/cosignatures`)).body
      expect(listed.cosignatures).toHaveLength(1)
    })
  )

  it.scoped("the worker's layer runs a cycle at start, then every interval", () =>
    Effect.gen(function* () {
      const agentId = "agt-witness-layer"
      yield* commitEvents(agentId, [[]])
      const witness = yield* fakeWitness("witness.test/layer")
      yield* Layer.launch(Witnessing.layer({ witnesses: [endpointOf(witness)], interval: "1 hour", batch: 1000 })).pipe(
        Effect.forkScoped
      )
      yield* eventually(
        Effect.sync(() => witness.sizes.get(originOf(agentId))),
        (size) => size === 1
      )
    })
  )

  it.scoped("an unreachable witness is a failure of that witness only; the batch bounds a cycle", () =>
    Effect.gen(function* () {
      const agentIds = ["agt-witness-batch-a", "agt-witness-batch-b", "agt-witness-batch-c"]
      for (const agentId of agentIds) yield* commitEvents(agentId, [[]])
      const live = yield* fakeWitness("witness.test/live")
      const dead = yield* fakeWitness("witness.test/dead")
      yield* Effect.promise(() => dead.close())
      // Batch 1: one log per witness per cycle; the dead one fails with a network error, the live one is unaffected.
      const results = yield* witnessCycle([endpointOf(live), endpointOf(dead)], 1).pipe(
        Effect.provide(Layer.merge(WitnessRepo.layer, WitnessClient.layer({ timeout: "5 seconds" })))
      )
      const byName = Object.fromEntries(results.map((r) => [r.witness, r.outcomes]))
      expect(byName["witness.test/dead"]).toEqual([
        { _tag: "Failed", error: "request failed: network", agentId: expect.any(String) }
      ])
      expect(byName["witness.test/live"]).toMatchObject([{ _tag: "Cosigned" }])
      expect(live.requests.length).toBe(1)
      // Every log gets its turn within as many cycles as there are logs (failing ones go last).
      for (let i = 0; i < 10 && !agentIds.every((id) => live.sizes.has(originOf(id))); i++)
        yield* cycle([live], agentIds[0]!, 1)
      expect(agentIds.every((id) => live.sizes.has(originOf(id)))).toBe(true)
    })
  )
})

describe("CANDOR_WITNESSES", () => {
  const vkey = "remora.n621.de+da77ade7+BOvN63jn/bLvkieywe8R6UYAtVtNbZpXh34x7onlmtw2"

  plainIt("reads '<url> <vkey>' entries separated by commas or newlines; private addresses allowed", () => {
    const parsed = parseWitnesses(
      `http://10.0.0.5:8080/witness/ ${vkey},\n https://w.example ${vkey.replace("remora.n621.de+da77ade7", "x")}`
    )
    // The second key's hash does not match its new name: refused with the entry's number.
    expect(Either.isLeft(parsed) && parsed.left).toContain("entry 2")
    const ok = parseWitnesses(`http://10.0.0.5:8080/witness/ ${vkey}`)
    expect(Either.isRight(ok) && ok.right).toEqual([{ url: "http://10.0.0.5:8080/witness", key: keyOf(vkey), vkey }])
  })

  plainIt.each([
    ["one word", vkey, "<url> <verifier key>"],
    ["a bad URL", `ftp://x ${vkey}`, "URL"],
    ["a type 0x01 key", "http://x PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW", "type 0x04"],
    ["the same witness twice", `http://a ${vkey},http://b ${vkey}`, "listed twice"]
  ])("refuses %s", (_, text, reason) => {
    const parsed = parseWitnesses(text)
    expect(Either.isLeft(parsed) && parsed.left).toContain(reason)
  })

  plainIt("is read from the environment with the interval and batch; unset is no witnessing", () => {
    const read = (env: Record<string, string>) =>
      Effect.runSync(
        Effect.either(Effect.withConfigProvider(config, ConfigProvider.fromMap(new Map(Object.entries(env)))))
      )
    const set = read({
      CANDOR_WITNESSES: `http://127.0.0.1:9 ${vkey}`,
      CANDOR_WITNESS_INTERVAL: "30",
      CANDOR_WITNESS_BATCH: "5"
    })
    expect(
      Either.isRight(set) && [set.right.witnesses.length, set.right.witnessIntervalSeconds, set.right.witnessBatch]
    ).toEqual([1, 30, 5])
    const unset = read({})
    expect(Either.isRight(unset) && unset.right.witnesses).toEqual([])
    const bad = read({ CANDOR_WITNESSES: "http://x nonsense" })
    expect(Either.isLeft(bad) && String(bad.left)).toContain("CANDOR_WITNESSES")
    expect(Either.isLeft(read({ CANDOR_WITNESS_INTERVAL: "0" }))).toBe(true)
  })

  plainIt("refuses more than 32 witnesses", () => {
    const entries = Array.from({ length: 33 }, (_, i) => {
      const key = generateSigningKey()
      const name = `w${i}`
      return `http://x ${name}+00000000+${toBase64(Uint8Array.of(4, ...key.publicKey))}`
    })
    const parsed = parseWitnesses(entries.join(","))
    expect(Either.isLeft(parsed) && parsed.left).toContain("at most 32")
  })
})
