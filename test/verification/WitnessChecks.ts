/**
 * What the witnessing tests share (PGlite in Witness.test.ts, PostgreSQL in
 * Witness.postgres.test.ts): a fake witness trusting the harness's log key, a witnessing cycle on
 * the real repository and HTTP client, and the outcomes of one agent.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SigningKeys } from "../../adapters/keys/SigningKeys.js"
import * as WitnessRepo from "../../adapters/store/WitnessRepo.js"
import { WitnessClient, type WitnessEndpoint } from "../../adapters/witness/WitnessClient.js"
import { witnessCycle } from "../../streams/Witnessing.js"
import { type FakeWitness, startFakeWitness } from "../support/FakeWitness.js"
import { LOG_ORIGIN } from "./Support.js"

/** A fake witness for this test's logs, closed with the scope. */
export const fakeWitness = (name?: string) =>
  Effect.gen(function* () {
    const { active } = yield* SigningKeys
    return yield* Effect.acquireRelease(
      Effect.promise(() =>
        startFakeWitness({ logKey: active.publicKey, originPrefix: `${LOG_ORIGIN}/agents/`, ...(name ? { name } : {}) })
      ),
      (witness) => Effect.promise(() => witness.close())
    )
  })

export const endpointOf = (witness: FakeWitness): WitnessEndpoint => ({
  url: witness.url,
  key: witness.key,
  vkey: witness.vkey
})

/** One witnessing cycle for these witnesses; the outcomes for `agentId`, per witness name. */
export const cycle = (witnesses: ReadonlyArray<FakeWitness>, agentId: string, batch = 1000) =>
  witnessCycle(witnesses.map(endpointOf), batch).pipe(
    Effect.map((results) =>
      Object.fromEntries(
        results.map((result) => [
          result.witness,
          result.outcomes.filter((outcome) => outcome.agentId === agentId).map(({ agentId: _, ...rest }) => rest)
        ])
      )
    ),
    Effect.provide(Layer.merge(WitnessRepo.layer, WitnessClient.layer({ timeout: "5 seconds" })))
  )

/** The requests the witness received for this agent's log, with the status it answered. */
export const requestsFor = (witness: FakeWitness, agentId: string) =>
  witness.requests.filter((request) => request.body.includes(`\n\n${LOG_ORIGIN}/agents/${agentId}\n`))
