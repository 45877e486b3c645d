/**
 * A migrated embedded database for the tests, from a template: opening PGlite runs initdb in WASM
 * (one to two seconds on this machine) and the migrations add more, and the store tests open one
 * per test. The template is a migrated database dumped once (`PGlite.dumpDataDir`) and loaded by
 * every test, which then runs the migrations as the product does (each already applied: one
 * query), so a test still fails on a migration the template lacks.
 *
 * The dump is kept in the system's temporary directory under a name that hashes the migrations'
 * sources and PGlite's version, so every test file of a run (vitest isolates each in its own module
 * graph) and later runs share it; a change of a migration names another file. Files are written
 * under a temporary name and renamed, so two test workers building it at once both leave a whole one.
 */
import { PGlite } from "@electric-sql/pglite"
import * as Reactivity from "@effect/experimental/Reactivity"
import type { MigrationError } from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { createHash } from "node:crypto"
import { readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Migrations from "../../adapters/store/Migrations.js"
import * as PgliteClient from "../../adapters/store/PgliteClient.js"
import { migrated } from "../../adapters/store/StoreDatabase.js"

const MIGRATIONS_DIR = join(import.meta.dirname, "../../adapters/store/migrations")

const templatePath = (): string => {
  const hash = createHash("sha256")
  hash.update(
    JSON.parse(readFileSync(join(import.meta.dirname, "../../node_modules/@electric-sql/pglite/package.json"), "utf8"))
      .version
  )
  for (const file of readdirSync(MIGRATIONS_DIR).sort())
    hash.update(file).update(readFileSync(join(MIGRATIONS_DIR, file)))
  hash.update(readFileSync(join(import.meta.dirname, "../../adapters/store/Migrations.ts")))
  return join(tmpdir(), `candor-pglite-template-${hash.digest("hex").slice(0, 16)}.tar`)
}

const buildTemplate = async (path: string): Promise<Blob> => {
  const db = await PGlite.create()
  try {
    await Effect.runPromise(
      Migrations.run.pipe(
        Effect.provideServiceEffect(SqlClient.SqlClient, PgliteClient.fromDatabase(db)),
        Effect.provide(Reactivity.layer),
        Effect.scoped
      )
    )
    const dump = await db.dumpDataDir("none")
    const partial = `${path}.${process.pid}.${Date.now()}`
    writeFileSync(partial, new Uint8Array(await dump.arrayBuffer()))
    renameSync(partial, path)
    return dump
  } finally {
    await db.close()
  }
}

let template: Promise<Blob> | undefined

/** The migrated template, read from its file or built (once per module graph). */
const migratedTemplate = (): Promise<Blob> => {
  template ??= (async () => {
    const path = templatePath()
    try {
      return new Blob([readFileSync(path)])
    } catch {
      return buildTemplate(path)
    }
  })()
  return template
}

/** An in-memory PGlite started from the template (for a harness that runs the migrations itself). */
export const pgliteFromTemplate: Layer.Layer<SqlClient.SqlClient, SqlError> = Layer.unwrapEffect(
  Effect.map(Effect.promise(migratedTemplate), (loadDataDir) => PgliteClient.layer({ loadDataDir }))
)

/** A migrated in-memory PGlite, started from the template: for tests, in place of `migrated(PgliteClient.layer())`. */
export const migratedPglite: Layer.Layer<SqlClient.SqlClient, SqlError | MigrationError> = migrated(pgliteFromTemplate)
