/**
 * A migrated embedded database for the tests, from a template: opening PGlite runs initdb in WASM
 * (one to two seconds on this machine) and the migrations add more, and the store tests open one
 * per test. The template is a migrated database dumped once (`PGlite.dumpDataDir`); each test gets
 * a database at the template's state and runs the migrations on it as the product does (each
 * already applied: one query), so a test still fails on a migration the template lacks.
 *
 * The dump is kept in the system's temporary directory under a name that hashes the migrations'
 * sources and PGlite's version, so every test file of a run and later runs share it; a change of a
 * migration names another file. Files are written under a temporary name and renamed, so two test
 * workers building it at once both leave a whole one.
 *
 * Loading the dump still costs most of a second, so a database is reused: when a test's scope
 * closes, its database goes back to the template's state (every table emptied with triggers off,
 * the template's rows copied back, every sequence at its start, the session's settings, prepared
 * statements, temporary tables, listeners and advisory locks dropped) and waits for the next test of
 * the module graph (the fast lane's worker shares one between its files). A database whose schema a
 * test changed, or that a test closed, is not reused; nor one reused MAX_USES times (deleted rows
 * stay as dead tuples: no vacuum, so rows keep their insertion order as in a fresh database).
 */
import { PGlite, type PGliteOptions } from "@electric-sql/pglite"
import * as Reactivity from "@effect/experimental/Reactivity"
import type { MigrationError } from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { createHash } from "node:crypto"
import { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs"
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

/**
 * The migrated template written out as a database directory (what `PgliteClient.layer({ dataDir })`
 * opens as an existing database, skipping initdb): for the tests of the embedded default's files on
 * disk, where initdb on the real file system takes several seconds. The dump is a plain tar
 * (`dumpDataDir("none")`): 512-byte headers, each file's bytes padded to 512.
 */
export const writeTemplateTo = (dir: string): Effect.Effect<void> =>
  Effect.promise(async () => {
    const tar = new Uint8Array(await (await migratedTemplate()).arrayBuffer())
    const field = (at: number, length: number) =>
      new TextDecoder().decode(tar.subarray(at, at + length)).replace(/\0.*$/s, "")
    mkdirSync(dir, { recursive: true, mode: 0o700 })
    for (let at = 0; at + 512 <= tar.length && tar[at] !== 0;) {
      const prefix = field(at + 257, 5) === "ustar" ? field(at + 345, 155) : ""
      const name = prefix === "" ? field(at, 100) : `${prefix}/${field(at, 100)}`
      const size = Number.parseInt(field(at + 124, 12).trim() || "0", 8)
      const mode = Number.parseInt(field(at + 100, 8).trim() || "600", 8)
      const type = field(at + 156, 1)
      const path = join(dir, name)
      if (type === "5") mkdirSync(path, { recursive: true, mode })
      else if (type === "0" || type === "") writeFileSync(path, tar.subarray(at + 512, at + 512 + size), { mode })
      at += 512 + Math.ceil(size / 512) * 512
    }
  })

/**
 * PGlite's WebAssembly modules and file bundle, compiled and read once per module graph: PGlite
 * otherwise compiles its 9 MB of WebAssembly for every instance (a third of opening one).
 */
let assets: Promise<Pick<PGliteOptions, "pgliteWasmModule" | "initdbWasmModule" | "fsBundle">> | undefined

const pgliteAssets = () => {
  assets ??= (async () => {
    const dist = join(import.meta.dirname, "../../node_modules/@electric-sql/pglite/dist")
    const [pgliteWasmModule, initdbWasmModule] = await Promise.all([
      WebAssembly.compile(readFileSync(join(dist, "pglite.wasm"))),
      WebAssembly.compile(readFileSync(join(dist, "initdb.wasm")))
    ])
    return { pgliteWasmModule, initdbWasmModule, fsBundle: new Blob([readFileSync(join(dist, "pglite.data"))]) }
  })()
  return assets
}

/** What a database started from the template holds: its tables, and the rows of those with some. */
interface TemplateState {
  readonly tables: ReadonlyArray<string>
  readonly rows: ReadonlyArray<{ readonly table: string; readonly blob: Blob }>
  readonly catalog: string
}

/**
 * A fingerprint of the catalog that any DDL changes: the row count and newest row version of each
 * catalog a schema change writes. A database a test changed the schema of is closed, not reused.
 */
const CATALOG = `select string_agg(format('%s:%s:%s', c, n, x), ',' order by c) as catalog from (
  ${[
    "pg_class",
    "pg_attribute",
    "pg_attrdef",
    "pg_constraint",
    "pg_index",
    "pg_trigger",
    "pg_proc",
    "pg_type",
    "pg_namespace",
    "pg_sequence",
    "pg_depend",
    "pg_extension",
    "pg_event_trigger",
    "pg_rewrite",
    "pg_policy"
  ]
    .map((c) => `select '${c}' as c, count(*) as n, max(xmin::text::bigint) as x from ${c}`)
    .join(" union all ")}
) s`

let templateState: Promise<TemplateState> | undefined

const readTemplateState = (db: PGlite): Promise<TemplateState> => {
  templateState ??= (async () => {
    const tables = (
      await db.query<{ name: string }>(
        `select format('%I.%I', n.nspname, c.relname) as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
         where c.relkind in ('r', 'p') and n.nspname not in ('pg_catalog', 'information_schema') and n.nspname not like 'pg_toast%'
         order by 1`
      )
    ).rows.map((row) => row.name)
    const rows: Array<{ table: string; blob: Blob }> = []
    for (const table of tables) {
      const count = await db.query<{ n: number }>(`select count(*)::int as n from ${table}`)
      if (count.rows[0]!.n > 0) {
        const copy = await db.query(`copy ${table} to '/dev/blob'`)
        rows.push({ table, blob: copy.blob! })
      }
    }
    const catalog = (await db.query<{ catalog: string }>(CATALOG)).rows[0]!.catalog
    return { tables, rows, catalog }
  })()
  return templateState
}

/**
 * Back to the template's state: the session's state dropped, every table emptied (triggers and
 * foreign keys off while it is, as for a restore) and the template's rows put back, every sequence
 * at its start. False when the schema is no longer the template's.
 */
const resetToTemplate = async (db: PGlite, state: TemplateState): Promise<boolean> => {
  await db.exec("rollback").catch(() => undefined)
  await db.exec("reset all; deallocate all; unlisten *; discard temp; select pg_advisory_unlock_all()")
  if ((await db.query<{ catalog: string }>(CATALOG)).rows[0]!.catalog !== state.catalog) return false
  await db.exec(
    `set session_replication_role = replica; ${state.tables.map((table) => `delete from ${table};`).join(" ")}
     select setval(seqrelid, seqstart, false) from pg_sequence; reset session_replication_role`
  )
  for (const { blob, table } of state.rows) await db.query(`copy ${table} from '/dev/blob'`, [], { blob })
  return true
}

/** Databases at the template's state, idle between tests; a database is reused this many times, then closed. */
const idle: Array<{ readonly db: PGlite; readonly uses: number }> = []
const MAX_IDLE = 2
const MAX_USES = 50

const acquireDatabase = Effect.acquireRelease(
  Effect.promise(async () => {
    const pooled = idle.pop()
    if (pooled !== undefined) return pooled
    const db = await PGlite.create({ ...(await pgliteAssets()), loadDataDir: await migratedTemplate() })
    await readTemplateState(db)
    return { db, uses: 0 }
  }),
  ({ db, uses }) =>
    Effect.promise(async () => {
      if (db.closed) return
      const reused =
        uses + 1 < MAX_USES &&
        idle.length < MAX_IDLE &&
        (await resetToTemplate(db, await readTemplateState(db)).catch(() => false))
      if (reused) idle.push({ db, uses: uses + 1 })
      else await db.close()
    })
)

/** An in-memory PGlite at the template's state (for a harness that runs the migrations itself). */
export const pgliteFromTemplate: Layer.Layer<SqlClient.SqlClient, SqlError> = Layer.scoped(
  SqlClient.SqlClient,
  Effect.flatMap(acquireDatabase, ({ db }) => PgliteClient.fromDatabase(db))
).pipe(Layer.provide(Reactivity.layer))

/** A migrated in-memory PGlite, started from the template: for tests, in place of `migrated(PgliteClient.layer())`. */
export const migratedPglite: Layer.Layer<SqlClient.SqlClient, SqlError | MigrationError> = migrated(pgliteFromTemplate)
