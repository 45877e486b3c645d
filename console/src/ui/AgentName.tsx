/**
 * An agent as people know it (docs/console.md, "Names"): its name as text with its organization's
 * name beside it, the id a click away (the link's target and its title, the organization's id in
 * the organization's title). An agent without a name shows its id, as before names existed.
 */
import { agentTitle, type NamedAgent, orgTitle } from "../fleet/Names.js"
import { hrefOf } from "../Router.js"

/** The agent's name linking to its page, its id as the link's title. */
export const AgentLink = ({ agent }: { readonly agent: NamedAgent }) => (
  <a
    class={agent.display_name === null ? "mono" : "agent-name"}
    href={hrefOf({ page: "agent", agentId: agent.agent_id })}
    title={agent.agent_id}
    data-testid="agent-link"
  >
    {agentTitle(agent)}
  </a>
)

/** The organization's name, its id as the title; "personal" (muted) outside any organization. */
export const OrgLabel = ({ agent }: { readonly agent: NamedAgent }) =>
  agent.org_id === null ? (
    <span class="muted">{orgTitle(agent)}</span>
  ) : (
    <span class={agent.org_name === null ? "mono" : undefined} title={agent.org_id} data-testid="org-name">
      {orgTitle(agent)}
    </span>
  )
