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

export const parseRoute = (hash: string): Route => {
  const [, page = "", arg] = hash.replace(/^#/, "").split("/")
  const id = arg === undefined || arg === "" ? undefined : decodeURIComponent(arg)
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
    default:
      return `#/${route.page}`
  }
}

export const navigate = (route: Route): void => {
  location.hash = hrefOf(route)
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
