/**
 * The embedded default's backend thread, seen from the main thread (src/Serve.ts `EmbeddedLive`):
 * started with one end of the thread bridge, ready once its servers are bound (or failed, with the
 * error the operator should read: a port in use, a database that cannot be opened), stopped when the
 * main thread's scope closes (after the gateway, so the gateway's last events reach its bus), and
 * the whole process stops if it dies on its own. The messages between the two threads' control
 * channels are here too, for src/Backend.ts.
 */
import * as Cause from "effect/Cause"
import * as Data from "effect/Data"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import { MessageChannel, type MessagePort, Worker } from "node:worker_threads"
import { ListenFailed } from "../adapters/http/ListenFailed.js"
import { BACKEND_YOUNG_GENERATION_MB } from "./NodeFlags.js"

/** HOST:PORT's server, as the "listening" line names it. */
export interface ApiAddress {
  readonly url: string
  readonly port: number | undefined
  /** The local operator's one-time console link (embedded default with its own database only). */
  readonly signInUrl?: string | undefined
}

/** Why the backend stopped, as it can cross the thread boundary (errors' classes do not). */
export type BackendFailure =
  | {
      readonly _tag: "ListenFailed"
      readonly variable: string
      readonly host: string
      readonly port: number
      readonly code: string | undefined
    }
  | { readonly _tag: "Error"; readonly message: string }

export type FromBackend =
  | { readonly _tag: "Ready"; readonly api: ApiAddress }
  | { readonly _tag: "Failed"; readonly failure: BackendFailure }
  | { readonly _tag: "Stopped" }

export type ToBackendThread =
  | { readonly _tag: "Stop" }
  /** The process got SIGHUP (reload the TLS certificate): only the main thread receives signals. */
  | { readonly _tag: "Sighup" }

export interface BackendData {
  /** The backend's end of the thread bridge. */
  readonly bridge: MessagePort
}

/** The backend thread stopped on an error; the message is the whole story (one log line at exit). */
export class BackendFailed extends Data.TaggedError("BackendFailed")<{ readonly message: string }> {}

/** The message of an error and of its cause, without stack traces (as src/Main.ts reports failures). */
const describe = (error: unknown): string => {
  const message = error instanceof Error ? error.message : String(error)
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : undefined
  return cause === undefined || cause === message || message.includes(cause) ? message : `${message}: ${cause}`
}

/** The failure of the backend's program, for the main thread to report. */
export const backendFailure = (cause: Cause.Cause<unknown>): BackendFailure => {
  const failure = Cause.failureOption(cause)
  if (Option.isSome(failure) && failure.value instanceof ListenFailed) {
    const { code, host, port, variable } = failure.value
    return { _tag: "ListenFailed", variable, host, port, code }
  }
  return { _tag: "Error", message: Option.isSome(failure) ? describe(failure.value) : Cause.pretty(cause) }
}

const revive = (failure: BackendFailure): BackendFailed | ListenFailed =>
  failure._tag === "ListenFailed" ? new ListenFailed(failure) : new BackendFailed({ message: failure.message })

const BACKEND_ENTRY = new URL("./BackendEntry.mjs", import.meta.url)

/** How long the backend may take to stop (commit what it holds, close the store) before it is terminated. */
const STOP_WAIT = "30 seconds"

/**
 * Starts the backend thread; `forwardSighup` (TLS on): the process's SIGHUP is passed on to it, so
 * that the API's server reloads its certificate as the gateway's does. Not otherwise, since listening
 * to SIGHUP would keep it from stopping the process as it does by default.
 */
export const startBackend = (options: { readonly forwardSighup: boolean }) =>
  Effect.gen(function* () {
    const { port1, port2 } = new MessageChannel()
    const ready = yield* Deferred.make<ApiAddress, BackendFailed | ListenFailed>()
    const exited = yield* Deferred.make<void>()
    let stopping = false
    const worker = yield* Effect.acquireRelease(
      Effect.sync(() => {
        const data: BackendData = { bridge: port2 }
        return new Worker(BACKEND_ENTRY, {
          workerData: data,
          transferList: [port2],
          resourceLimits: { maxYoungGenerationSizeMb: BACKEND_YOUNG_GENERATION_MB }
        })
      }),
      (worker) =>
        Effect.suspend(() => {
          stopping = true
          worker.postMessage({ _tag: "Stop" } satisfies ToBackendThread)
          return Deferred.await(exited).pipe(
            Effect.timeout(STOP_WAIT),
            Effect.catchAll(() =>
              Effect.logError("backend thread did not stop in time: terminated").pipe(
                Effect.zipRight(Effect.promise(() => worker.terminate()))
              )
            )
          )
        })
    )
    if (options.forwardSighup) {
      const onSighup = () => worker.postMessage({ _tag: "Sighup" } satisfies ToBackendThread)
      yield* Effect.acquireRelease(
        Effect.sync(() => process.on("SIGHUP", onSighup)),
        () => Effect.sync(() => process.off("SIGHUP", onSighup))
      )
    }
    worker.on("message", (message: FromBackend) => {
      if (message._tag === "Ready") Deferred.unsafeDone(ready, Exit.succeed(message.api))
      else if (message._tag === "Failed") Deferred.unsafeDone(ready, Exit.fail(revive(message.failure)))
    })
    worker.on("error", (error) =>
      Deferred.unsafeDone(ready, Exit.fail(new BackendFailed({ message: describe(error) })))
    )
    worker.on("exit", (code) => {
      Deferred.unsafeDone(exited, Exit.void)
      if (stopping) return
      const reason = new BackendFailed({ message: `the backend thread stopped (exit code ${code})` })
      if (Deferred.unsafeDone(ready, Exit.fail(reason)) !== undefined) return
      {
        // Ready before: the API, the workers and the store are gone, and a gateway without them would
        // keep answering while nothing is recorded. Stop the process; a supervisor restarts it.
        console.error(
          JSON.stringify({ message: "candor stopped on an error", logLevel: "ERROR", error: reason.message })
        )
        process.exit(1)
      }
    })
    return { port: port1, ready: Deferred.await(ready) }
  })
