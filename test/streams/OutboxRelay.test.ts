/**
 * The outbox relay on the embedded store: a payload that does not decode as its kind's format is
 * kept as dead at once (one attempt, the failing paths as its error, never retried), while the
 * items around it are sent; a handler that fails is still retried. A handler with a schedule of its
 * own is followed (under the TestClock): `FinalFailure` is dead at once, `RetryIn` is due again after
 * its delay whatever the relay's attempt limit, any other failure takes the relay's backoff.
 */
import { layer } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/TestClock"
import { expect } from "vitest"
import * as SqlStore from "../../adapters/store/SqlStore.js"
import { decodePayload, FinalFailure, relayDefaults, relayRound, RetryIn, runRelay } from "../../streams/OutboxRelay.js"
import * as SecretKeys from "../../adapters/keys/SecretKeys.js"
import { migratedPglite } from "../support/PgliteTemplate.js"

const StoreLayer = SqlStore.layer.pipe(Layer.provide(SecretKeys.layerEphemeral), Layer.provideMerge(migratedPglite))

const Greeting = Schema.Struct({ to: Schema.String, times: Schema.Number })

const insert = (kind: string, payload: unknown) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql`insert into outbox (kind, payload, due_at, created_at) values (${kind}, ${JSON.stringify(payload)}::json, now(), now())`
  )

const rows = (kind: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ payload: string; attempts: number; dead: boolean; last_error: string | null }>`
      select payload::text as payload, attempts, dead, last_error from outbox where kind = ${kind} order by id`
  )

/** Polls `check` until it holds, with a deadline. */
const eventually = <A, E, R>(effect: Effect.Effect<A, E, R>, check: (a: A) => boolean, what: string) =>
  effect.pipe(
    Effect.filterOrFail(check, () => new Error(`not yet: ${what}`)),
    Effect.retry(Schedule.spaced("20 millis").pipe(Schedule.upTo("30 seconds")))
  )

const options = (kind: string) => ({ ...relayDefaults, kind, backoffMs: () => 20, pollInterval: "20 millis" }) as const

layer(StoreLayer, { timeout: "60 seconds", excludeTestServices: true })("outbox relay", (it) => {
  it.scoped("a payload that does not decode is kept as dead at once; the others are sent", () =>
    Effect.gen(function* () {
      const kind = "greeting"
      yield* insert(kind, { to: "ada", times: 1 })
      yield* insert(kind, { to: "bob", times: "twice" })
      yield* insert(kind, "not an object")
      yield* insert(kind, { to: "cyd", times: 3 })
      const sent = yield* Ref.make<ReadonlyArray<string>>([])
      const decode = decodePayload(Greeting)
      const handle = (item: Parameters<typeof decode>[0]) =>
        Effect.flatMap(decode(item), (greeting) => Ref.update(sent, (all) => [...all, greeting.to]))
      yield* Effect.forkScoped(runRelay(options(kind), handle, yield* Queue.sliding<void>(1)))

      const left = yield* eventually(rows(kind), (all) => all.every((row) => row.dead), "only dead items left")
      expect(yield* Ref.get(sent)).toEqual(["ada", "cyd"])
      expect(left).toEqual([
        {
          payload: JSON.stringify({ to: "bob", times: "twice" }),
          attempts: 1,
          dead: true,
          last_error: "malformed payload: times"
        },
        {
          payload: JSON.stringify("not an object"),
          attempts: 1,
          dead: true,
          last_error: "malformed payload: (payload)"
        }
      ])
    })
  )

  it.scoped("a handler that fails is retried, then kept as dead after its last attempt", () =>
    Effect.gen(function* () {
      const kind = "flaky"
      yield* insert(kind, { to: "ada", times: 1 })
      const handle = () => Effect.fail("receiver down")
      yield* Effect.forkScoped(runRelay({ ...options(kind), maxAttempts: 3 }, handle, yield* Queue.sliding<void>(1)))
      const [row] = yield* eventually(rows(kind), (all) => all[0]?.dead === true, "dead")
      expect(row).toMatchObject({ attempts: 3, dead: true, last_error: "delivery failed" })
    })
  )
})

/** An item due at `at`. */
const insertDue = (kind: string, at: Date) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql`insert into outbox (kind, payload, due_at, created_at)
        values (${kind}, '{}'::json, ${at.toISOString()}::timestamptz, ${at.toISOString()}::timestamptz)`
  )

const stateOf = (kind: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ attempts: number; dead: boolean; last_error: string | null; due_at: unknown }>`
      select attempts, dead, last_error, due_at from outbox where kind = ${kind}`.pipe(
      Effect.map(([row]) => ({ ...row!, due_at: new Date(row!.due_at as string | Date).toISOString() }))
    )
  )

const T = new Date(Date.UTC(2026, 10, 1))
const after = (ms: number) => new Date(T.getTime() + ms).toISOString()

layer(StoreLayer, { timeout: "60 seconds" })("outbox relay, a handler's own schedule", (it) => {
  it.scoped("FinalFailure: kept as dead at once, with the handler's error, whatever attempts are left", () =>
    Effect.gen(function* () {
      const kind = "final"
      yield* TestClock.setTime(T.getTime())
      yield* insertDue(kind, T)
      const handle = () => Effect.fail(new FinalFailure({ error: "HTTP 410" }))
      expect(yield* relayRound({ ...relayDefaults, kind, maxAttempts: 8 }, handle)).toBe(1)
      expect(yield* stateOf(kind)).toMatchObject({ attempts: 1, dead: true, last_error: "HTTP 410" })
      yield* TestClock.adjust("1 hour")
      expect(yield* relayRound({ ...relayDefaults, kind }, handle)).toBe(0)
    })
  )

  it.scoped("RetryIn: due again after its delay, past the relay's attempt limit and whatever its backoff", () =>
    Effect.gen(function* () {
      const kind = "retry-in"
      yield* TestClock.setTime(T.getTime())
      yield* insertDue(kind, T)
      const handle = () => Effect.fail(new RetryIn({ ms: 90_000, error: "HTTP 429" }))
      // One attempt allowed, and a backoff of a second: neither applies to RetryIn.
      const relay = relayRound({ ...relayDefaults, kind, maxAttempts: 1, backoffMs: () => 1000 }, handle)
      expect(yield* relay).toBe(1)
      expect(yield* stateOf(kind)).toEqual({ attempts: 1, dead: false, last_error: "HTTP 429", due_at: after(90_000) })
      yield* TestClock.adjust(89_999)
      expect(yield* relay).toBe(0)
      yield* TestClock.adjust(1)
      expect(yield* relay).toBe(1)
      expect(yield* stateOf(kind)).toEqual({ attempts: 2, dead: false, last_error: "HTTP 429", due_at: after(180_000) })
    })
  )

  it.scoped("any other failure: the relay's backoff, then dead after its last attempt", () =>
    Effect.gen(function* () {
      const kind = "other"
      yield* TestClock.setTime(T.getTime())
      yield* insertDue(kind, T)
      const handle = () => Effect.fail(new Error("connection reset by https://receiver.example"))
      const relay = relayRound({ ...relayDefaults, kind, maxAttempts: 2, backoffMs: (n) => n * 5000 }, handle)
      expect(yield* relay).toBe(1)
      // The error recorded is the relay's own words, never the handler's (it may quote a remote answer).
      expect(yield* stateOf(kind)).toEqual({
        attempts: 1,
        dead: false,
        last_error: "delivery failed",
        due_at: after(5000)
      })
      yield* TestClock.adjust(4999)
      expect(yield* relay).toBe(0)
      yield* TestClock.adjust(1)
      expect(yield* relay).toBe(1)
      expect(yield* stateOf(kind)).toMatchObject({ attempts: 2, dead: true, last_error: "delivery failed" })
    })
  )
})
