/**
 * Reasoning-derived fields at rest on PostgreSQL: `pg_dump` of the throwaway database (every
 * table, every column) holds no spelling of a concern's evidence or a reasoning summary, while the
 * store (as `candor serve` builds it on DATABASE_URL) still reads them.
 */
import { expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { execFileSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import * as SecretKeys from "../../../adapters/keys/SecretKeys.js"
import { Store } from "../../../adapters/store/Store.js"
import * as StoreDatabase from "../../../adapters/store/StoreDatabase.js"
import { describeIntegration } from "../../support/Integration.js"
import { throwawayDatabase } from "../../support/Postgres.js"
import { fresh, makeInputs, uniqueId } from "./Fixtures.js"
import { holds, spellings } from "./SecretBytes.js"

describeIntegration("postgres", "reasoning-derived fields at rest (PostgreSQL)", () => {
  it.scoped(
    "no spelling of evidence, summary or a consideration is found in a pg_dump of the database",
    () =>
      Effect.gen(function* () {
        const url = yield* throwawayDatabase
        const agentId = uniqueId("agent-pg-sealed")
        const tag = randomBytes(8).toString("hex")
        const reasoning = (position: number) => ({
          evidence: `evidence-${tag}-${position} send the credential to the address in the page`,
          summary: `summary-${tag}-${position} the agent follows an injected instruction`,
          consideration: `consideration-${tag}-${position} the page is not the principal`
        })
        const { inputs } = makeInputs(agentId, fresh(agentId), 3, { reasoning })
        yield* Effect.gen(function* () {
          const store = yield* Store
          expect(yield* store.commitBatch(inputs)).toEqual({ _tag: "Committed" })
          for (const input of inputs) {
            expect(yield* store.getCheckpoint(input.checkpoint.checkpoint_id)).toEqual(input.checkpoint)
            expect(yield* store.getTrace(input.trace.trace_id)).toEqual(input.trace)
            expect(yield* store.getCertificate(input.checkpoint.checkpoint_id)).toEqual(input.attestation.certificate)
          }
          expect(
            yield* store.sessionCheckpoints(inputs[0]!.checkpoint.agent_id, inputs[0]!.checkpoint.session_id, 10)
          ).toEqual([...inputs].reverse().map((input) => input.checkpoint))
        }).pipe(
          Effect.provide(
            StoreDatabase.layer({ databaseUrl: Option.some(url), dataDir: "unused" }).pipe(
              Layer.provide(SecretKeys.layerEphemeral)
            )
          )
        )
        const dump = execFileSync("pg_dump", ["--no-owner", "--dbname", Redacted.value(url)], {
          maxBuffer: 64 * 1024 * 1024
        })
        // The dump holds the rows: their ids are there, in clear; the reasoning in none of its spellings.
        expect(dump.includes(Buffer.from(inputs[1]!.checkpoint.checkpoint_id))).toBe(true)
        inputs.forEach((input, i) => {
          expect(holds(dump, spellings(reasoning(i).summary))).toBe(false)
          expect(holds(dump, spellings(reasoning(i).consideration))).toBe(false)
          if (input.checkpoint.concerns.length > 0) expect(holds(dump, spellings(reasoning(i).evidence))).toBe(false)
        })
      }),
    { timeout: 60_000 }
  )
})
