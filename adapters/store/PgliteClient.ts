/**
 * An Effect 3 `SqlClient` over embedded PGlite (PostgreSQL compiled to WASM): the embedded default,
 * so `candor serve` needs no database server. There is no Effect 3 `@effect/sql-pglite`, so this is
 * the small layer it would be: `Client.make` from @effect/sql with the PostgreSQL compiler of
 * @effect/sql-pg, so every statement compiles exactly as it does on a real server.
 *
 * PGlite is one connection. A semaphore with one permit is held for the whole life of each
 * statement's scope, and a transaction holds it from BEGIN to COMMIT, so a statement of another
 * fiber can never slip into someone else's transaction (PGlite would run it there). Nested
 * `withTransaction` calls become savepoints (handled by `Client.make`).
 */
import { PGlite } from "@electric-sql/pglite"
import * as Reactivity from "@effect/experimental/Reactivity"
import * as Client from "@effect/sql/SqlClient"
import type { Connection } from "@effect/sql/SqlConnection"
import { SqlError } from "@effect/sql/SqlError"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { mkdirSync, openSync, readFileSync, rmSync, writeSync, closeSync } from "node:fs"
import { join } from "node:path"

/** Another live process holds the data directory's lock: PGlite is single-process. */
export class DataDirInUse extends Data.TaggedError("DataDirInUse")<{
  readonly dataDir: string
  readonly holder: number
  readonly lockFile: string
}> {
  override get message(): string {
    return (
      `the data directory ${this.dataDir} is in use by process ${this.holder}${this.holder === process.pid ? " (this one)" : ""}: ` +
      "embedded PGlite allows one process at a time; stop it, or set DATABASE_URL to share a PostgreSQL server " +
      `(if no Candor runs there, delete ${this.lockFile})`
    )
  }
}

export interface PgliteClientOptions {
  /** A directory for the database files; absent: in memory, gone when the scope closes. */
  readonly dataDir?: string | undefined
  /**
   * A database to start from, as `PGlite.dumpDataDir` wrote it (a tarball), instead of an empty one:
   * the tests start from a migrated template, which skips PGlite's initdb and the migrations.
   */
  readonly loadDataDir?: Blob | undefined
}

const fail = (message: string) => (cause: unknown) => new SqlError({ cause, message })

const makeConnection = (db: PGlite): Connection => {
  const query = (sql: string, params: ReadonlyArray<unknown>, rowMode: "object" | "array") =>
    Effect.tryPromise({
      try: () => db.query(sql, params as Array<unknown>, { rowMode }),
      catch: fail("Failed to execute statement")
    })
  const execute: Connection["execute"] = (sql, params, transformRows) =>
    Effect.map(query(sql, params, "object"), (result) =>
      transformRows ? transformRows(result.rows as Array<object>) : result.rows
    )
  return {
    execute,
    executeRaw: (sql, params) => query(sql, params, "object"),
    executeValues: (sql, params) =>
      Effect.map(query(sql, params, "array"), (result) => result.rows as Array<Array<unknown>>),
    executeStream: (sql, params, transformRows) => Stream.fromIterableEffect(execute(sql, params, transformRows)),
    // Without parameters, the simple protocol: several statements at once (migrations, BEGIN, …).
    executeUnprepared: (sql, params, transformRows) =>
      params.length > 0
        ? execute(sql, params, transformRows)
        : Effect.map(
            Effect.tryPromise({ try: () => db.exec(sql), catch: fail("Failed to execute statement") }),
            (results) => {
              const rows = results.map((result) =>
                transformRows ? transformRows(result.rows as Array<object>) : result.rows
              )
              return rows.length === 1 ? rows[0]! : rows
            }
          )
  }
}

const LOCK_FILE = "candor.lock"

const isRunning = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

/**
 * PGlite takes no lock of its own, and two processes (or two clients in one) writing one data
 * directory corrupt it: `<dataDir>/candor.lock` holds the pid of the process that has it open. A
 * lock left by a process that is gone is taken over. Written by hand: a pid file is all one machine
 * needs, and lock libraries keep a timer running to refresh theirs.
 */
const lockDataDir = (dataDir: string) =>
  Effect.acquireRelease(
    Effect.try({
      try: () => {
        mkdirSync(dataDir, { recursive: true })
        const path = join(dataDir, LOCK_FILE)
        for (let attempt = 0; ; attempt++) {
          try {
            const fd = openSync(path, "wx")
            writeSync(fd, String(process.pid))
            closeSync(fd)
            return path
          } catch (error) {
            if ((error as NodeJS.ErrnoException).code !== "EEXIST" || attempt > 0) throw error
            const holder = Number(readFileSync(path, "utf8").trim())
            if (Number.isSafeInteger(holder) && holder > 0 && isRunning(holder)) {
              throw new DataDirInUse({ dataDir, holder, lockFile: path })
            }
            rmSync(path, { force: true })
          }
        }
      },
      catch: (cause) =>
        new SqlError({
          cause,
          message: cause instanceof Error ? cause.message : "PgliteClient: cannot lock the data directory"
        })
    }),
    (path) =>
      Effect.sync(() => {
        try {
          if (readFileSync(path, "utf8").trim() === String(process.pid)) rmSync(path, { force: true })
        } catch {
          // Already gone.
        }
      })
  )

const openPglite = (options: PgliteClientOptions) =>
  Effect.zipRight(
    options.dataDir === undefined ? Effect.void : lockDataDir(options.dataDir),
    Effect.acquireRelease(
      Effect.tryPromise({
        try: () =>
          PGlite.create({
            ...(options.dataDir === undefined ? {} : { dataDir: options.dataDir }),
            ...(options.loadDataDir === undefined ? {} : { loadDataDir: options.loadDataDir })
          }),
        catch: fail("PgliteClient: failed to open the database")
      }),
      (db) => Effect.promise(() => db.close())
    )
  )

/** The client; PGlite is closed when the scope closes. */
export const make = (
  options: PgliteClientOptions = {}
): Effect.Effect<Client.SqlClient, SqlError, Scope.Scope | Reactivity.Reactivity> =>
  Effect.flatMap(openPglite(options), fromDatabase)

/** A client of a database already open (its owner closes it). */
export const fromDatabase = (db: PGlite): Effect.Effect<Client.SqlClient, never, Scope.Scope | Reactivity.Reactivity> =>
  Effect.gen(function* () {
    const connection = makeConnection(db)
    const permit = yield* Effect.makeSemaphore(1)
    // The permit is released by the scope of the statement or transaction that took it.
    const acquirer = Effect.uninterruptibleMask((restore) =>
      Effect.zipRight(
        restore(permit.take(1)),
        Effect.as(
          Effect.flatMap(Effect.scope, (scope) => Scope.addFinalizer(scope, permit.release(1))),
          connection
        )
      )
    )
    return yield* Client.make({
      acquirer,
      transactionAcquirer: acquirer,
      compiler: PgClient.makeCompiler(),
      spanAttributes: [
        ["db.system", "postgresql"],
        ["db.client", "pglite"]
      ]
    })
  })

export const layer = (options: PgliteClientOptions = {}): Layer.Layer<Client.SqlClient, SqlError> =>
  Layer.scoped(Client.SqlClient, make(options)).pipe(Layer.provide(Reactivity.layer))
