/**
 * Proof jobs are durable: a prover failure is visible as `failed` with its attempts and retried
 * with backoff until the proof is made; a statement the prover refuses stays failed without
 * retries; a job given up after its last attempt is still visible, and its owner can ask again.
 * A failure no retry follows (a refusal, the last attempt) writes one `proof.failed` event, an
 * intermediate one none.
 * The attached proof never disturbs the certificate's signature.
 */
import { expect, layer } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SigningKeys } from "../../adapters/keys/SigningKeys.js"
import { verifyCertificate } from "../../core/Certificate.js"
import * as ProverModule from "../../prover/Prover.js"
import { Prover } from "../../prover/Prover.js"
import { ProverError } from "../../prover/ProverError.js"
import { verifyVerdictProof } from "../../prover/VerdictProof.js"
import { ApiHarness } from "../api/Support.js"
import { eventId } from "../../core/Events.js"
import { outboxEvents } from "../support/EventOutbox.js"
import { commitEvents, eventually, violation, world } from "./Support.js"

/** What the prover does on each attempt for a checkpoint, consumed in order; then it proves. */
const plans = new Map<string, Array<"fail" | "refuse">>()

/** The in-process prover behind a script of failures. */
const ScriptedProver = Layer.effect(
  Prover,
  Effect.map(Prover, (real) => ({
    id: "scripted",
    verify: real.verify,
    prove: (statement: Parameters<typeof real.prove>[0]) => {
      const next = plans.get(statement.checkpoint_id)?.shift()
      if (next === "fail") return Effect.fail(new ProverError({ reason: "failed", message: "worker crashed" }))
      if (next === "refuse")
        return Effect.fail(new ProverError({ reason: "refused", message: "verdict is not the rule's" }))
      return real.prove(statement)
    }
  }))
).pipe(Layer.provide(ProverModule.layerInProcess()))

const plan = (steps: Array<"fail" | "refuse">) => (ids: ReadonlyArray<string>) => plans.set(ids[0]!, steps)

const jobs = (checkpointId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ attempts: number; dead: boolean }>`
      select attempts, dead from outbox where kind = 'prover' and (payload ->> 'checkpoint_id') = ${checkpointId}`
  )

const proofFailed = (checkpointId: string) =>
  Effect.map(outboxEvents({ type: "proof.failed" }), (events) =>
    events.filter((e) => (e.data as { checkpoint_id: string }).checkpoint_id === checkpointId)
  )

const ScriptedWorld = world({ prover: ScriptedProver, relay: { backoffMs: () => 500, maxAttempts: 3 } })

layer(ScriptedWorld, { timeout: "120 seconds", excludeTestServices: true })("proof jobs", (it) => {
  it.effect("a failing prover is retried with backoff, visibly, until the proof is attached", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const [id] = yield* commitEvents("agt-jobs-retry", [[violation]], plan(["fail", "fail"]))
      const failed = yield* eventually(
        api.call("GET", `/v1/checkpoints/${id}/proof`),
        (res) => res.body.status === "failed"
      )
      expect(failed.body).toMatchObject({ sampled: true, verdict_proof: null, error: "failed: worker crashed" })
      expect(failed.body.attempts).toBeGreaterThanOrEqual(1)
      const done = yield* eventually(
        api.call("GET", `/v1/checkpoints/${id}/proof`),
        (res) => res.body.status === "completed"
      )
      expect(done.body).toMatchObject({ attempts: 3, error: null })
      expect(yield* jobs(id!)).toEqual([])
      // Failed twice, then proved: no failure was final.
      expect(yield* proofFailed(id!)).toEqual([])

      const cert = (yield* api.call("GET", `/v1/checkpoints/${id}/certificate`)).body
      const { active } = yield* SigningKeys
      expect(verifyVerdictProof(cert)).toBe(true)
      expect(verifyCertificate(cert, { resolveKey: () => active.publicKey, verifyVerdictProof })).toMatchObject({
        valid: true,
        checks: { signature: true, verdict_proof: true }
      })
    })
  )

  it.effect("a refused statement is failed once, not retried", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { orgAgent, orgId } = api.fixtures
      const [id] = yield* commitEvents(orgAgent, [[violation]], plan(["refuse", "refuse", "refuse"]))
      const failed = yield* eventually(
        api.call("GET", `/v1/checkpoints/${id}/proof`),
        (res) => res.body.status === "failed"
      )
      expect(failed.body).toMatchObject({ attempts: 1, error: "refused: verdict is not the rule's" })
      // The job is done (nothing left to retry), and the script still holds the two unused refusals.
      yield* eventually(jobs(id!), (rows) => rows.length === 0)
      expect(plans.get(id!)).toHaveLength(2)
      expect(yield* proofFailed(id!)).toEqual([
        {
          id: eventId("proof.failed", id!),
          type: "proof.failed",
          created_at: expect.any(String),
          org_id: orgId,
          agent_id: orgAgent,
          data: { checkpoint_id: id, agent_id: orgAgent, error: "refused: verdict is not the rule's", attempts: 1 }
        }
      ])
    })
  )

  it.effect("a job given up after its last attempt stays visible as failed; its owner can ask again", () =>
    Effect.gen(function* () {
      const api = yield* ApiHarness
      const { agentA, userA } = api.fixtures
      const [id] = yield* commitEvents(agentA, [[violation]], plan(["fail", "fail", "fail"]))
      yield* eventually(jobs(id!), (rows) => rows.length === 1 && rows[0]!.dead)
      const failed = (yield* api.call("GET", `/v1/checkpoints/${id}/proof`)).body
      expect(failed).toMatchObject({
        status: "failed",
        attempts: 3,
        error: "failed: worker crashed",
        verdict_proof: null
      })
      // Written with the last failure, in its transaction: one event, after the third attempt.
      expect((yield* proofFailed(id!)).map((e) => [e.org_id, e.agent_id, e.data])).toEqual([
        [null, agentA, { checkpoint_id: id, agent_id: agentA, error: "failed: worker crashed", attempts: 3 }]
      ])

      const asked = yield* api.call("POST", `/v1/checkpoints/${id}/prove`, { token: userA.token })
      expect(asked.status).toBe(202)
      const done = yield* eventually(
        api.call("GET", `/v1/checkpoints/${id}/proof`),
        (res) => res.body.status === "completed"
      )
      expect(done.body.attempts).toBe(4)
      expect(verifyVerdictProof((yield* api.call("GET", `/v1/checkpoints/${id}/certificate`)).body)).toBe(true)
    })
  )
})
