/**
 * The embedded default's backend thread (started by src/BackendThread.ts through BackendEntry.mjs):
 * every role but the gateway (`BackendLive`), on the same environment and with the same JSON logs as
 * the main thread. It reports `Ready` with HOST:PORT's address, or `Failed` with its error (and
 * logs nothing of it: the main thread reports it, so the operator reads one line), and stops when
 * told to, then says `Stopped`.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import { setPriority } from "node:os"
import { parentPort, workerData } from "node:worker_threads"
import { type BackendData, backendFailure, type FromBackend, type ToBackendThread } from "./BackendThread.js"
import { layerFromEnv, logLevelConfig } from "./Config.js"
import { BackendLive } from "./Serve.js"

/**
 * This thread's nice value. Linux schedules threads, and a thread's nice value is its own (threads
 * it starts, the prover's, inherit it): when the machine is busy the gateway's thread gets the CPU
 * first, and the backend's work (attestation, commits, proofs) takes the rest, catching up once the
 * burst is over. Elsewhere setpriority would renice the whole process, gateway included, so not there.
 */
const BACKEND_NICE = 10
if (process.platform === "linux") {
  try {
    setPriority(0, BACKEND_NICE)
  } catch {
    // Not permitted here (a seccomp profile): the threads simply share the CPU as equals.
  }
}

const control = parentPort!
const { bridge } = workerData as BackendData
const send = (message: FromBackend) => control.postMessage(message)

const LogLevelLive = Layer.unwrapEffect(Effect.map(logLevelConfig, Logger.minimumLogLevel))

const fiber = Layer.launch(BackendLive(bridge, (api) => send({ _tag: "Ready", api }))).pipe(
  Effect.provide(layerFromEnv),
  Effect.provide(LogLevelLive),
  Effect.provide([Logger.json, NodeContext.layer]),
  Effect.runFork
)

control.on("message", (message: ToBackendThread) => {
  if (message._tag === "Stop") Effect.runFork(Fiber.interrupt(fiber))
  // Signals reach only the main thread, which passes SIGHUP on; emitted here, it reaches the
  // listeners the TLS reload (adapters/http/Tls.ts) registered on this thread's `process`.
  else if (message._tag === "Sighup") process.emit("SIGHUP", "SIGHUP")
})

fiber.addObserver((exit) => {
  if (Exit.isFailure(exit) && !Cause.isInterruptedOnly(exit.cause))
    send({ _tag: "Failed", failure: backendFailure(exit.cause) })
  send({ _tag: "Stopped" })
  control.close()
})
