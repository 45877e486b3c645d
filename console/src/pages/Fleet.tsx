/**
 * The fleet: every agent the credential may see (GET /v1/agents, one query) with its containment,
 * enforcement mode, verdict counts, reputation grade and last activity; a containment summary of the
 * whole fleet at a glance; search and filters (kept in the page, applied as you type). Refreshed
 * every 5 seconds while the tab is visible. Rows open the agent's page.
 */
import { useEffect, useMemo, useState } from "preact/hooks"
import { api } from "../Api.js"
import { type FleetAgent, type FleetFilter, filterFleet, NO_FILTER, summarise } from "../fleet/Fleet.js"
import { AgentLink, OrgLabel } from "../ui/AgentName.js"
import { ago, count } from "../ui/Format.js"
import { useAsync } from "../ui/UseAsync.js"

const REFRESH_MS = 5_000
/** Rows drawn at once; the search narrows a larger fleet. */
const MAX_ROWS = 500

const ContainmentBar = ({ active, paused, killed }: { active: number; paused: number; killed: number }) => {
  const total = Math.max(1, active + paused + killed)
  const label = `${active} active, ${paused} paused, ${killed} killed`
  return (
    <div class="bar" role="img" aria-label={`Containment: ${label}`}>
      {active > 0 ? <span class="seg ok" style={{ width: `${(active / total) * 100}%` }} /> : null}
      {paused > 0 ? <span class="seg warn" style={{ width: `${(paused / total) * 100}%` }} /> : null}
      {killed > 0 ? <span class="seg bad" style={{ width: `${(killed / total) * 100}%` }} /> : null}
    </div>
  )
}

export const StatusBadge = ({ status }: { readonly status: string }) => (
  <span class={`badge status-${status}`}>{status}</span>
)

export const FleetPage = () => {
  const [state, reload] = useAsync((signal) => api<{ agents: ReadonlyArray<FleetAgent> }>("/v1/agents", { signal }), [])
  const [filter, setFilter] = useState<FleetFilter>(NO_FILTER)
  const [, tick] = useState(0)

  useEffect(() => {
    const timer = setInterval(() => {
      if (document.visibilityState === "visible") {
        reload()
        tick((n) => n + 1)
      }
    }, REFRESH_MS)
    return () => clearInterval(timer)
  }, [reload])

  // The last good list stays on screen while a refresh is under way or fails.
  const [agents, setAgents] = useState<ReadonlyArray<FleetAgent> | undefined>(undefined)
  useEffect(() => {
    if (state._tag === "ready") setAgents(state.value.agents)
  }, [state])

  const summary = useMemo(() => summarise(agents ?? []), [agents])
  const shown = useMemo(() => filterFleet(agents ?? [], filter), [agents, filter])
  const set = (patch: Partial<FleetFilter>) => setFilter({ ...filter, ...patch })

  return (
    <section aria-labelledby="fleet-title">
      <div class="page-head">
        <h1 id="fleet-title">Fleet</h1>
        <button type="button" onClick={reload}>
          Refresh
        </button>
      </div>
      {state._tag === "failed" ? (
        <p role="alert" class="notice bad">
          Could not load the fleet: {state.message}
        </p>
      ) : null}
      {agents === undefined ? (
        state._tag === "loading" ? (
          <p role="status">Loading the fleet…</p>
        ) : null
      ) : (
        <>
          <div class="summary" data-testid="fleet-summary">
            <div class="tile">
              <span class="num">{count(summary.total)}</span> agents
            </div>
            <div class="tile ok">
              <span class="num" data-testid="count-active">
                {count(summary.active)}
              </span>{" "}
              active
            </div>
            <div class="tile warn">
              <span class="num" data-testid="count-paused">
                {count(summary.paused)}
              </span>{" "}
              paused
            </div>
            <div class="tile bad">
              <span class="num" data-testid="count-killed">
                {count(summary.killed)}
              </span>{" "}
              killed
            </div>
            <div class="tile">
              <span class="num">{count(summary.boundary_violation)}</span> boundary violations,{" "}
              {count(summary.review_needed)} to review
            </div>
          </div>
          <ContainmentBar active={summary.active} paused={summary.paused} killed={summary.killed} />

          <form class="filters" role="search" aria-label="Filter agents" onSubmit={(e) => e.preventDefault()}>
            <label>
              Search
              <input
                type="search"
                placeholder="agent or organization"
                value={filter.query}
                onInput={(e) => set({ query: e.currentTarget.value })}
              />
            </label>
            <label>
              Status
              <select
                value={filter.status}
                onChange={(e) => set({ status: e.currentTarget.value as FleetFilter["status"] })}
              >
                <option value="all">any</option>
                <option value="active">active</option>
                <option value="paused">paused</option>
                <option value="killed">killed</option>
              </select>
            </label>
            <label>
              Mode
              <select value={filter.mode} onChange={(e) => set({ mode: e.currentTarget.value as FleetFilter["mode"] })}>
                <option value="all">any</option>
                <option value="observe">observe</option>
                <option value="nudge">nudge</option>
                <option value="enforce">enforce</option>
              </select>
            </label>
            <label class="check">
              <input
                type="checkbox"
                checked={filter.violationsOnly}
                onChange={(e) => set({ violationsOnly: e.currentTarget.checked })}
              />
              With violations
            </label>
          </form>

          <p class="muted" aria-live="polite">
            {shown.length === agents.length
              ? `${count(agents.length)} agents`
              : `${count(shown.length)} of ${count(agents.length)} agents match`}
            {shown.length > MAX_ROWS ? `; the first ${MAX_ROWS} are shown, narrow the search for the rest` : ""}
          </p>
          {agents.length === 0 ? (
            <p class="notice">
              No agents yet. Send a request through the gateway (GATEWAY_PORT) and the agent appears here; with a user's
              credential, claim it first (POST /v1/agents/claim).
            </p>
          ) : (
            <div class="table-wrap">
              <table class="grid" data-testid="fleet-table">
                <caption class="visually-hidden">Agents, newest activity first</caption>
                <thead>
                  <tr>
                    <th scope="col">Agent</th>
                    <th scope="col">Status</th>
                    <th scope="col">Mode</th>
                    <th scope="col" class="num">
                      Clear
                    </th>
                    <th scope="col" class="num">
                      Review
                    </th>
                    <th scope="col" class="num">
                      Violations
                    </th>
                    <th scope="col">Reputation</th>
                    <th scope="col">Last seen</th>
                    <th scope="col">Organization</th>
                  </tr>
                </thead>
                <tbody>
                  {shown.slice(0, MAX_ROWS).map((agent) => (
                    <tr key={agent.agent_id} data-agent={agent.agent_id}>
                      <th scope="row">
                        <AgentLink agent={agent} />
                        {agent.claimed ? null : <span class="badge muted-badge">unclaimed</span>}
                      </th>
                      <td>
                        <StatusBadge status={agent.status} />
                      </td>
                      <td>{agent.enforcement_mode}</td>
                      <td class="num">{count(agent.checkpoint_counts.clear)}</td>
                      <td class="num">{count(agent.checkpoint_counts.review_needed)}</td>
                      <td class={`num${agent.checkpoint_counts.boundary_violation > 0 ? " bad-text" : ""}`}>
                        {count(agent.checkpoint_counts.boundary_violation)}
                      </td>
                      <td>
                        {agent.reputation === null ? (
                          <span class="muted">—</span>
                        ) : (
                          <span title={`score ${agent.reputation.score}`}>
                            <span class="grade">{agent.reputation.grade}</span>{" "}
                            <span class="muted">{agent.reputation.score}</span>
                          </span>
                        )}
                      </td>
                      <td>
                        <time dateTime={agent.last_seen ?? undefined}>{ago(agent.last_seen)}</time>
                      </td>
                      <td>
                        <OrgLabel agent={agent} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </>
      )}
    </section>
  )
}
