/**
 * A spawned `candor serve`: collects its output lines (for failure messages) and succeeds once it
 * logs "listening"; fails with what it printed if it exits first or is not ready in time.
 */
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type { ChildProcess } from "node:child_process"
import { createInterface } from "node:readline"

export const untilListening = (
  child: ChildProcess,
  /** Filled with the child's lines as they come, the newest `keep` of them. */
  lines: Array<string>,
  options: { readonly name: string; readonly timeout: Duration.DurationInput; readonly keep?: number }
): Effect.Effect<void, Error> =>
  Effect.async<void, Error>((resume) => {
    let done = false
    const finish = (effect: Effect.Effect<void, Error>) => {
      if (!done) {
        done = true
        resume(effect)
      }
    }
    for (const stream of [child.stdout!, child.stderr!]) {
      createInterface({ input: stream }).on("line", (line) => {
        lines.push(line)
        if (options.keep !== undefined && lines.length > options.keep) lines.shift()
        if (line.includes(`"message":"listening"`)) finish(Effect.void)
      })
    }
    child.once("exit", (code, signal) =>
      finish(
        Effect.fail(new Error(`${options.name} exited (${code ?? signal}) before it was ready:\n${lines.join("\n")}`))
      )
    )
  }).pipe(
    Effect.timeoutFail({
      duration: options.timeout,
      onTimeout: () => new Error(`${options.name} not ready in time:\n${lines.join("\n")}`)
    })
  )
