/** A request's state for a page: loading, its value, or its error message; `reload` asks again. */
import { useCallback, useEffect, useState } from "preact/hooks"
import { messageOf } from "./Format.js"

export type Async<A> =
  | { readonly _tag: "loading" }
  | { readonly _tag: "ready"; readonly value: A }
  | { readonly _tag: "failed"; readonly message: string }

export const useAsync = <A>(
  load: (signal: AbortSignal) => Promise<A>,
  deps: ReadonlyArray<unknown>
): [Async<A>, () => void] => {
  const [state, setState] = useState<Async<A>>({ _tag: "loading" })
  const [round, setRound] = useState(0)
  useEffect(() => {
    const controller = new AbortController()
    load(controller.signal).then(
      (value) => !controller.signal.aborted && setState({ _tag: "ready", value }),
      (error: unknown) => !controller.signal.aborted && setState({ _tag: "failed", message: messageOf(error) })
    )
    return () => controller.abort()
  }, [...deps, round])
  return [state, useCallback(() => setRound((n) => n + 1), [])]
}
