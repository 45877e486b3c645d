/**
 * The trust edge repository on PostgreSQL (cases in TrustEdgeRepoCases.ts), each on a throwaway
 * database: there, `pg` runs the concurrent creates on separate connections, so the advisory lock
 * and the unique index on active pairs are what keep one edge per pair.
 */
import { it } from "@effect/vitest"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { migrated } from "../../../adapters/store/StoreDatabase.js"
import * as TrustEdgeRepo from "../../../adapters/store/TrustEdgeRepo.js"
import { describeIntegration } from "../../support/Integration.js"
import { throwawayDatabase } from "../../support/Postgres.js"
import * as Cases from "./TrustEdgeRepoCases.js"

const onThrowaway = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const url = yield* throwawayDatabase
    return yield* effect.pipe(
      Effect.provide(TrustEdgeRepo.layer.pipe(Layer.provideMerge(migrated(PgClient.layer({ url })))))
    )
  })

const timeout = { timeout: 60_000 }

describeIntegration("postgres", "TrustEdgeRepo (PostgreSQL)", () => {
  it.scoped("one active edge per pair, soft deletes, listing by direction", () => onThrowaway(Cases.lifecycle), timeout)
  it.scoped("at most 1000 active outgoing edges", () => onThrowaway(Cases.outgoingLimit), timeout)
  it.scoped("concurrent creates of one pair: one edge", () => onThrowaway(Cases.concurrentCreates), timeout)
  it.scoped(
    "the recursive-CTE graphs of random graphs give the pure walk the whole graph's answers",
    () => onThrowaway(Cases.graphsOfRandomGraphs),
    timeout
  )
  it.scoped(
    "the recursive-CTE graphs where the 50-agent limit cuts a hop",
    () => onThrowaway(Cases.graphsWhereTheLimitCuts),
    timeout
  )
})
