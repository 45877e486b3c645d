/**
 * Who the signed-in credential is (GET /v1/console/session) and the organizations it works in, so
 * pages hide or disable what its role cannot do. Only a courtesy: the API enforces every right.
 */
import { createContext } from "preact"
import { useContext } from "preact/hooks"
import type { ConsoleCaller } from "../../core/schema/Console.js"
import type { Organization, OrgRole } from "../../core/schema/Organization.js"
import { api } from "./Api.js"

// The published shapes (core/schema), type-only: nothing of core is bundled.
export type { OrgRole }

/** GET /v1/console/session. The API refuses the service-role key there (403): the console never holds it. */
export type Caller = typeof ConsoleCaller.Type

export interface OrgSummary {
  readonly org_id: string
  readonly name: string
  /** The caller's role there. */
  readonly role: OrgRole
}

export interface CallerInfo {
  readonly caller: Caller
  readonly orgs: ReadonlyArray<OrgSummary>
}

/** The local operator has the service-role key's rights (but the routes reserved to the key). */
export const isService = (caller: Caller): boolean => caller.kind === "operator"

/** Whether the caller may change an organization's settings (Owner or Admin there). */
export const canManageOrg = (info: CallerInfo, orgId: string): boolean => {
  if (info.caller.read_only) return false
  if (isService(info.caller)) return true
  const role = info.orgs.find((org) => org.org_id === orgId)?.role
  return role === "owner" || role === "admin"
}

type OrgListItem = Pick<Organization, "org_id" | "name" | "role">

/**
 * The caller and its organizations: a user's and an organization key's from GET /v1/orgs; the
 * local operator lists no organizations of its own, so its are those of the agents it sees
 * (GET /v1/agents carries each agent's `org_id`), read one by one.
 */
export const loadCallerInfo = async (): Promise<CallerInfo> => {
  const caller = await api<Caller>("/v1/console/session")
  if (!isService(caller)) {
    const { orgs } = await api<{ orgs: ReadonlyArray<OrgListItem> }>("/v1/orgs").catch(() => ({ orgs: [] }))
    return { caller, orgs: orgs.map(({ org_id, name, role }) => ({ org_id, name, role })) }
  }
  const { agents } = await api<{ agents: ReadonlyArray<{ org_id: string | null }> }>("/v1/agents")
  const ids = [...new Set(agents.flatMap((agent) => (agent.org_id === null ? [] : [agent.org_id])))].slice(0, 50)
  const orgs = await Promise.all(
    ids.map((id) =>
      api<OrgListItem>(`/v1/orgs/${encodeURIComponent(id)}`).then(
        (org) => ({ org_id: org.org_id, name: org.name, role: "owner" as const }),
        () => ({ org_id: id, name: id, role: "owner" as const })
      )
    )
  )
  return { caller, orgs }
}

export const CallerContext = createContext<CallerInfo | undefined>(undefined)

/** The signed-in caller; pages render under the shell, which provides it once loaded. */
export const useCaller = (): CallerInfo => {
  const info = useContext(CallerContext)
  if (info === undefined) throw new Error("useCaller outside the signed-in shell")
  return info
}
