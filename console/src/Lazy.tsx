/**
 * Pages load on first visit (a dynamic import each, its own chunk): the first load carries the shell
 * and the sign-in only, and heavy parts (the agent page's editor and charts) never load unless opened.
 */
import type { ComponentType } from "preact"
import { useEffect, useState } from "preact/hooks"

export const lazyPage = <P extends object>(load: () => Promise<ComponentType<P>>): ComponentType<P> => {
  let loaded: ComponentType<P> | undefined
  let loading: Promise<ComponentType<P>> | undefined
  return (props: P) => {
    const [Page, setPage] = useState<ComponentType<P> | undefined>(() => loaded)
    const [failed, setFailed] = useState<string | undefined>(undefined)
    useEffect(() => {
      if (Page !== undefined) return
      loading ??= load()
      loading.then(
        (component) => {
          loaded = component
          setPage(() => component)
        },
        (error: unknown) => {
          loading = undefined
          setFailed(error instanceof Error ? error.message : String(error))
        }
      )
    }, [])
    if (failed !== undefined) return <p role="alert">This page could not be loaded: {failed}. Reload to try again.</p>
    return Page === undefined ? <p role="status">Loading…</p> : <Page {...props} />
  }
}
