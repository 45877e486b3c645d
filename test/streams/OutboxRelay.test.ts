/**
 * The outbox relay on the embedded store: a payload that does not decode as its kind's format is
 * kept as dead at once (one attempt, the failing paths as its error, never retried), while the
 * items around it are sent; a handler that fails is still retried.
 */
import { layer } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import { expect } from "vitest"
import * as PgliteClient from "../../adapters/store/PgliteClient.js"
import * as SqlStore from "../../adapters/store/SqlStore.js"
import { migrated } from "../../adapters/store/StoreDatabase.js"
import { decodePayload, relayDefaults, runRelay } from "../../streams/OutboxRelay.js"
import * as SecretKeys from "../../adapters/keys/SecretKeys.js"

const StoreLayer = SqlStore.layer.pipe(
  Layer.provide(SecretKeys.layerEphemeral),
  Layer.provideMerge(migrated(PgliteClient.layer()))
)

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
