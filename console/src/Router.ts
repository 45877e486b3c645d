/**
 * Hash routes (`#/fleet`, `#/agents/<id>`…): the server serves one document for /console and every
 * view is addressable, bookmarkable and survives a reload without server-side routing.
 */
import { useEffect, useState } from "preact/hooks"

export type Route =
  | { readonly page: "fleet" }
  | { readonly page: "feed" }
  | { readonly page: "agent"; readonly agentId: string }
  | { readonly page: "verify"; readonly checkpointId?: string }
  | { readonly page: "webhooks" }
  | { readonly page: "organization" }
  /** The local operator's one-time link (`candor serve` prints it on the embedded default). */
  | { readonly page: "signIn"; readonly code: string }

/** A malformed escape (`%E0%A4%A`) names nothing rather than throwing. */
const decoded = (text: string): string | undefined => {
  try {
    return decodeURIComponent(text)
  } catch {
    return undefined
  }
}

export const parseRoute = (hash: string): Route => {
  const [, page = "", arg] = hash.replace(/^#/, "").split("/")
  const id = arg === undefined || arg === "" ? undefined : decoded(arg)
  switch (page) {
    case "feed":
      return { page: "feed" }
    case "agents":
      return id === undefined ? { page: "fleet" } : { page: "agent", agentId: id }
    case "verify":
      return id === undefined ? { page: "verify" } : { page: "verify", checkpointId: id }
    case "webhooks":
      return { page: "webhooks" }
    case "organization":
      return { page: "organization" }
    case "sign-in":
      return id === undefined ? { page: "fleet" } : { page: "signIn", code: id }
    default:
      return { page: "fleet" }
  }
}

export const hrefOf = (route: Route): string => {
  switch (route.page) {
    case "agent":
      return `#/agents/${encodeURIComponent(route.agentId)}`
    case "verify":
      return route.checkpointId === undefined ? "#/verify" : `#/verify/${encodeURIComponent(route.checkpointId)}`
    case "signIn":
      return `#/sign-in/${encodeURIComponent(route.code)}`
    default:
      return `#/${route.page}`
  }
}

export const navigate = (route: Route): void => {
  location.hash = hrefOf(route)
}

/** Goes to `route` without a history entry for the current one (the sign-in link's code must not stay in history). */
export const replaceRoute = (route: Route): void => {
  history.replaceState(null, "", hrefOf(route))
  dispatchEvent(new HashChangeEvent("hashchange"))
}

export const useRoute = (): Route => {
  const [route, setRoute] = useState(() => parseRoute(location.hash))
  useEffect(() => {
    const update = () => setRoute(parseRoute(location.hash))
    addEventListener("hashchange", update)
    return () => removeEventListener("hashchange", update)
  }, [])
  return route
}
