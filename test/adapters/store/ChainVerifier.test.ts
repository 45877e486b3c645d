/**
 * The chain verifier on records the real actors made: one pass per tree size, a grown log extended
 * over its new certificates only, a new key in the ring or an audit older than an hour verified again
 * from genesis (so a certificate changed in the database after it was checked is reported within the
 * hour), and audits bounded in number.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as TestClock from "effect/TestClock"
import * as TestContext from "effect/TestContext"
import * as ChainVerifier from "../../../adapters/store/ChainVerifier.js"
import * as KeyRepo from "../../../adapters/store/KeyRepo.js"
import * as ProofRepo from "../../../adapters/store/ProofRepo.js"
import { chainCertificates, chainPasses } from "../../../adapters/metrics/VerificationMetrics.js"
import { generateSigningKey } from "../../../core/Signing.js"
import { commitEvents, violation, world } from "../../verification/Support.js"

const count = (metric: Metric.Metric.Counter<number>) =>
  Effect.map(Metric.value(metric), (state) => Number(state.count))
const passes = (kind: "full" | "incremental") => count(chainPasses.pipe(Metric.tagged("kind", kind)))

/** A verifier of its own (not the API's), on the world's store. */
const verifier = (options: Partial<ChainVerifier.ChainVerifierOptions> = {}) =>
  ChainVerifier.make({ ...ChainVerifier.defaultChainVerifierOptions, ...options })

const repos = Layer.mergeAll(ProofRepo.layer, KeyRepo.layer)

layer(world(), { timeout: "120 seconds", excludeTestServices: true })("ChainVerifier", (it) => {
  it.scoped("verifies a size once, extends a grown log, and starts over when the key ring changes", () =>
    Effect.gen(function* () {
      const chain = yield* verifier()
      const agentId = "agt-verifier-ring"
      yield* commitEvents(agentId, [[], [], []])
      const full = yield* passes("full")
      const checked = yield* count(chainCertificates)
      const first = yield* chain.verify(agentId)
      expect(first.audit).toMatchObject({ position: 3, chainErrorCount: 0, failedSignatureCount: 0 })
      expect(yield* chain.isCurrent(agentId)).toBe(true)
      yield* chain.verify(agentId)
      expect((yield* passes("full")) - full).toBe(1)
      expect((yield* count(chainCertificates)) - checked).toBe(3)

      yield* commitEvents(agentId, [[]])
      expect(yield* chain.isCurrent(agentId)).toBe(false)
      expect((yield* chain.verify(agentId)).audit.position).toBe(4)
      expect((yield* count(chainCertificates)) - checked).toBe(4)

      // A key registered since: the signatures are checked again against the new ring, from genesis.
      yield* (yield* KeyRepo.KeyRepo).registerRetired(generateSigningKey().publicKey)
      expect(yield* chain.isCurrent(agentId)).toBe(false)
      expect((yield* chain.verify(agentId)).audit.failedSignatureCount).toBe(0)
      expect((yield* passes("full")) - full).toBe(2)
      expect((yield* count(chainCertificates)) - checked).toBe(8)
    }).pipe(Effect.provide(repos))
  )

  it.scoped("a certificate changed after its log was verified is reported once the audit is an hour old", () =>
    Effect.gen(function* () {
      const chain = yield* verifier()
      const sql = yield* SqlClient.SqlClient
      const agentId = "agt-verifier-tamper"
      const ids = yield* commitEvents(agentId, [[], [violation], []])
      // The verifier's time is the test clock's from here on (the pipeline above needs the real one).
      yield* Effect.gen(function* () {
        expect((yield* chain.verify(agentId)).audit.failedSignatureCount).toBe(0)
        const [row] = yield* sql<{ body: any }>`select body from certificates where checkpoint_id = ${ids[1]!}`
        const forged = { ...row!.body, claims: { ...row!.body.claims, verdict: "clear", concerns: [] } }
        yield* sql`update certificates set body = ${JSON.stringify(forged)}::json where checkpoint_id = ${ids[1]!}`
        // Within the hour the audit of this size stands…
        yield* TestClock.adjust("59 minutes")
        expect((yield* chain.verify(agentId)).audit.failedSignatureCount).toBe(0)
        // …then the log is read again from genesis.
        yield* TestClock.adjust("1 minute")
        const again = yield* chain.verify(agentId)
        expect(again.audit.failedSignatures).toStrictEqual([ids[1]])
        expect(again.audit.chainErrorCount).toBeGreaterThan(0)
      }).pipe(Effect.provide(TestContext.TestContext))
    }).pipe(Effect.provide(repos))
  )

  it.scoped("keeps at most maxAgents audits; unknown ids take none", () =>
    Effect.gen(function* () {
      const chain = yield* verifier({ maxAgents: 2 })
      for (let i = 0; i < 10; i++) expect((yield* chain.verify(`agt-made-up-${i}`)).audit.position).toBe(0)
      const agents = ["agt-verifier-a", "agt-verifier-b", "agt-verifier-c"]
      for (const agentId of agents) yield* commitEvents(agentId, [[]])
      for (const agentId of agents) yield* chain.verify(agentId)
      expect(yield* chain.isCurrent("agt-verifier-a")).toBe(false)
      expect(yield* chain.isCurrent("agt-verifier-b")).toBe(true)
      expect(yield* chain.isCurrent("agt-verifier-c")).toBe(true)
    }).pipe(Effect.provide(repos))
  )
})
