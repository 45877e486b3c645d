/** The trust edge repository on PGlite (cases in TrustEdgeRepoCases.ts), each on a fresh database. */
import { describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as TrustEdgeRepo from "../../../adapters/store/TrustEdgeRepo.js"
import * as Cases from "./TrustEdgeRepoCases.js"
import { migratedPglite } from "../../support/PgliteTemplate.js"

const onFresh = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  effect.pipe(Effect.provide(TrustEdgeRepo.layer.pipe(Layer.provideMerge(migratedPglite))))

describe("TrustEdgeRepo (PGlite)", () => {
  it.effect("one active edge per pair, soft deletes, listing by direction", () => onFresh(Cases.lifecycle))
  it.effect("at most 1000 active outgoing edges", () => onFresh(Cases.outgoingLimit))
  it.effect("concurrent creates of one pair: one edge", () => onFresh(Cases.concurrentCreates))
  it.effect("the graphs of random graphs give the pure walk the whole graph's answers", () =>
    onFresh(Cases.graphsOfRandomGraphs)
  )
  it.effect("the graphs where the 50-agent limit cuts a hop", () => onFresh(Cases.graphsWhereTheLimitCuts))
})
