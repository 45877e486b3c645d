/**
 * The embedded default as `candor serve` builds it with no DATABASE_URL: PGlite in
 * `${dataDir}/pg`, migrated at start, kept across restarts, locked to one client at a time; and the
 * client's transaction rules.
 */
import { describe, expect, it } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Migrations from "../../../adapters/store/Migrations.js"
import { Store } from "../../../adapters/store/Store.js"
import * as StoreDatabase from "../../../adapters/store/StoreDatabase.js"
import { fresh, makeInputs } from "./Fixtures.js"
import * as SecretKeys from "../../../adapters/keys/SecretKeys.js"
import { generateSecretKey } from "../../../core/SecretBox.js"

const tempDir = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "candor-pglite-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

/** Polls until the fiber waits on something (a lock, a query), with a deadline instead of a sleep. */
const untilSuspended = (fiber: Fiber.RuntimeFiber<unknown, unknown>) =>
  Effect.gen(function* () {
    for (let i = 0; i < 10_000; i++) {
      if ((yield* Fiber.status(fiber))._tag === "Suspended") return
      yield* Effect.yieldNow()
    }
    throw new Error("the fiber never suspended")
  })

describe("PgliteClient", () => {
  it.scoped(
    "keeps a migrated database in the data directory across restarts, and keeps transactions apart",
    () =>
      Effect.gen(function* () {
        const dataDir = yield* tempDir
        const config = { databaseUrl: Option.none(), dataDir }
        const chain = makeInputs("agent-file", fresh("agent-file"), 3)
        // One key across restarts, as the data dir's key file gives `candor serve`.
        const keys = SecretKeys.SecretKeys.fromKeys(generateSecretKey())

        yield* Effect.gen(function* () {
          const store = yield* Store
          expect(yield* store.commitBatch(chain.inputs)).toEqual({ _tag: "Committed" })
        }).pipe(Effect.provide(StoreDatabase.layer(config).pipe(Layer.provide(keys))))
        expect(existsSync(join(dataDir, "pg", "PG_VERSION"))).toBe(true)

        yield* Effect.gen(function* () {
          const store = yield* Store
          const sql = yield* SqlClient.SqlClient
          expect(yield* store.loadLogState("agent-file")).toEqual(chain.state)
          expect(yield* store.getCheckpoint(chain.inputs[2]!.checkpoint.checkpoint_id)).toEqual(
            chain.inputs[2]!.checkpoint
          )
          expect(yield* Migrations.run).toEqual([])
          const applied = yield* sql<{ migration_id: number }>`select migration_id from candor_migrations`
          expect(applied).toEqual(Migrations.migrationNames.map((name) => ({ migration_id: Number(name.slice(0, 4)) })))

          yield* sql`create table t (id integer primary key)`
          // A failed inner transaction rolls back to its savepoint; the outer one commits.
          const inner = yield* sql.withTransaction(
            Effect.gen(function* () {
              yield* sql`insert into t values (1)`
              yield* Effect.flip(
                sql.withTransaction(Effect.zipRight(sql`insert into t values (2)`, Effect.fail("inner")))
              )
              return yield* sql<{ id: number }>`select id from t order by id`
            })
          )
          expect(inner).toEqual([{ id: 1 }])

          // A statement of another fiber waits for an open transaction instead of joining it: were it
          // run inside, the rollback below would take its row too.
          const started = yield* Deferred.make<void>()
          const release = yield* Deferred.make<void>()
          const transaction = yield* Effect.fork(
            sql.withTransaction(
              Effect.gen(function* () {
                yield* sql`insert into t values (3)`
                yield* Deferred.succeed(started, undefined)
                yield* Deferred.await(release)
                return yield* Effect.fail("roll back")
              })
            )
          )
          yield* Deferred.await(started)
          const outside = yield* Effect.fork(sql`insert into t values (4)`)
          yield* untilSuspended(outside)
          yield* Deferred.succeed(release, undefined)
          expect((yield* Fiber.await(transaction))._tag).toBe("Failure")
          yield* Fiber.join(outside)
          expect(yield* sql<{ id: number }>`select id from t order by id`).toEqual([{ id: 1 }, { id: 4 }])

          // Several statements in one call: how migrations run.
          yield* sql.unsafe("insert into t values (5); insert into t values (6)").unprepared
          expect(yield* sql<{ n: number }>`select count(*)::int as n from t`).toEqual([{ n: 4 }])
        }).pipe(Effect.provide(StoreDatabase.layer(config).pipe(Layer.provide(keys))))
      }),
    60_000
  )

  it.scoped(
    "lets one client at a time open a data directory, and takes over a lock its holder left behind",
    () =>
      Effect.gen(function* () {
        const dataDir = yield* tempDir
        const lock = join(dataDir, "pg", "candor.lock")
        const config = { databaseUrl: Option.none(), dataDir }
        yield* Effect.gen(function* () {
          yield* SqlClient.SqlClient
          expect(readFileSync(lock, "utf8")).toBe(String(process.pid))
          const second = yield* Effect.flip(
            Layer.build(StoreDatabase.layer(config).pipe(Layer.provide(SecretKeys.layerEphemeral))).pipe(Effect.scoped)
          )
          expect(String(second)).toContain(`in use by process ${process.pid}`)
        }).pipe(Effect.provide(StoreDatabase.layer(config).pipe(Layer.provide(SecretKeys.layerEphemeral))))
        // Released when the first closed.
        expect(existsSync(lock)).toBe(false)

        // A lock of a process that has exited is stale.
        const exited = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], {
          encoding: "utf8"
        })
        writeFileSync(lock, exited.stdout)
        yield* Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          expect(yield* sql<{ n: number }>`select 1 as n`).toEqual([{ n: 1 }])
        }).pipe(Effect.provide(StoreDatabase.layer(config).pipe(Layer.provide(SecretKeys.layerEphemeral))))
      }),
    60_000
  )
})
