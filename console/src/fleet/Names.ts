/**
 * How the console names an agent and its organization (GET /v1/agents rows): the display name, else
 * the id; the organization's name, else its id, else "personal". Pure, so a test holds the rules.
 * The text is shown as text (Preact escapes it); the ids stay a click away (the link and its title).
 */
import type { AgentListItem } from "../../../core/schema/AgentList.js"

/**
 * A GET /v1/agents item's names (core/schema/AgentList.ts): `display_name` is the name given, else
 * the gateway's `x-candor-agent` label; null without either.
 */
export type NamedAgent = Pick<AgentListItem, "agent_id" | "display_name" | "org_id" | "org_name">

/** What the agent is called on screen. */
export const agentTitle = (agent: NamedAgent): string => agent.display_name ?? agent.agent_id

/** Its organization as shown: the name, else the id; "personal" outside any organization. */
export const orgTitle = (agent: NamedAgent): string => agent.org_name ?? agent.org_id ?? "personal"

/** The agents by id, and the organizations' names by id, from GET /v1/agents: the feed names its events' ids with them. */
export const directoryOf = (
  agents: ReadonlyArray<NamedAgent>
): { readonly agents: ReadonlyMap<string, NamedAgent>; readonly orgs: ReadonlyMap<string, string> } => {
  const orgs = new Map<string, string>()
  for (const agent of agents)
    if (agent.org_id !== null && agent.org_name !== null) orgs.set(agent.org_id, agent.org_name)
  return { agents: new Map(agents.map((agent) => [agent.agent_id, agent])), orgs }
}
