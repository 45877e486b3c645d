/**
 * HTTPS for Candor's servers: the certificate and key read from files, TLS 1.2 as the floor, and a
 * reload that swaps in re-read files without dropping a connection (`server.setSecureContext`), run
 * on SIGHUP so certificate rotation (certbot, cert-manager) needs no restart. Plain values in, so
 * the servers using it know nothing of how the paths are configured.
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Runtime from "effect/Runtime"
import type * as Scope from "effect/Scope"
import { readFile } from "node:fs/promises"
import { createSecureContext, type Server as TlsServer, type TlsOptions } from "node:tls"

/** Where the PEM certificate chain and its private key are. */
export interface TlsFiles {
  readonly certFile: string
  readonly keyFile: string
}

/** The PEM bytes a server is given. */
export interface TlsMaterial {
  readonly cert: Buffer
  readonly key: Buffer
}

/** The oldest protocol accepted: TLS 1.0 and 1.1 are refused whatever Node's own default is. */
export const TLS_MIN_VERSION = "TLSv1.2" as const

/** A certificate or key file that cannot be read, or a pair that does not make a usable context. */
export class TlsFileError extends Data.TaggedError("TlsFileError")<{
  readonly path: string
  readonly reason: string
}> {
  override get message(): string {
    return `TLS certificate or key ${this.path}: ${this.reason}`
  }
}

const read = (path: string) =>
  Effect.tryPromise({
    try: () => readFile(path),
    catch: (error) => new TlsFileError({ path, reason: error instanceof Error ? error.message : String(error) })
  })

/**
 * Both files, checked by building a context from them: a key that does not match the certificate
 * or a file that is not PEM fails here (at startup, or on reload) rather than at the first handshake.
 */
export const loadTls = (files: TlsFiles): Effect.Effect<TlsMaterial, TlsFileError> =>
  Effect.gen(function* () {
    const [cert, key] = yield* Effect.all([read(files.certFile), read(files.keyFile)])
    yield* Effect.try({
      try: () => createSecureContext({ cert, key, minVersion: TLS_MIN_VERSION }),
      catch: (error) =>
        new TlsFileError({
          path: `${files.certFile} / ${files.keyFile}`,
          reason: error instanceof Error ? error.message : String(error)
        })
    })
    return { cert, key }
  })

/** Options for `https.createServer` (merged with the server's own HTTP options). */
export const serverTlsOptions = (material: TlsMaterial): TlsOptions => ({
  cert: material.cert,
  key: material.key,
  minVersion: TLS_MIN_VERSION
})

/**
 * Re-reads the files and swaps them in for new connections; open ones keep theirs. A file that
 * fails leaves the server on its previous certificate (and the error is the caller's to report).
 */
export const reloadTls = (server: TlsServer, files: TlsFiles): Effect.Effect<void, TlsFileError> =>
  Effect.flatMap(loadTls(files), (material) => Effect.sync(() => server.setSecureContext(serverTlsOptions(material))))

/**
 * Reloads on every SIGHUP for the life of the scope, logging the outcome under `server` (which
 * server it was): "reloaded", or an error with the old certificate kept.
 */
export const reloadOnSighup = (
  server: TlsServer,
  files: TlsFiles,
  name: string
): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function* () {
    const run = Runtime.runFork(yield* Effect.runtime<never>())
    const reload = reloadTls(server, files).pipe(
      Effect.zipRight(Effect.log("TLS certificate reloaded")),
      Effect.catchAll((error) =>
        Effect.logError("TLS certificate reload failed; the previous certificate stays in use").pipe(
          Effect.annotateLogs("error", error.message)
        )
      ),
      Effect.annotateLogs({ server: name, cert_file: files.certFile })
    )
    const onSighup = () => void run(reload)
    yield* Effect.acquireRelease(
      Effect.sync(() => process.on("SIGHUP", onSighup)),
      () => Effect.sync(() => process.off("SIGHUP", onSighup))
    )
  })

/** Whether a bind address only accepts connections from this machine (plain HTTP is then fine). */
export const isLoopbackHost = (host: string): boolean => {
  const bare = host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, "$1")
  return bare === "localhost" || bare === "::1" || /^127(\.\d{1,3}){3}$/.test(bare) || bare === "::ffff:127.0.0.1"
}
