/**
 * The live feed (GET /v1/stream, docs/stream.md): containment, boundary violations, drift, blocked
 * requests, policy violations and the rest as they happen, newest first, filterable by kind and
 * agent. Built for 1,000 events per second: events are collected as they arrive and drawn once per
 * animation frame, the list is virtualised (only visible rows exist), the buffer keeps the newest
 * 5,000. The connection resumes after a loss from the last event id (FeedStream.ts), and its state is
 * shown; a refused credential stops it. Agents and organizations are named from GET /v1/agents, read
 * when the page opens (an agent it does not list yet shows its id).
 */
import { useEffect, useMemo, useRef, useState } from "preact/hooks"
import { api, ApiError, rawRequest } from "../Api.js"
import {
  categoryOf,
  FEED_CATEGORIES,
  type FeedCategory,
  type FeedEvent,
  FeedBuffer,
  summaryOf
} from "../feed/FeedBuffer.js"
import { type ConnectionState, type FeedStream, openFeedStream } from "../feed/FeedStream.js"
import { useVirtualRows } from "../feed/UseVirtualRows.js"
import { directoryOf, type NamedAgent } from "../fleet/Names.js"
import { hrefOf } from "../Router.js"
import { AgentLink } from "../ui/AgentName.js"
import { clock, count } from "../ui/Format.js"
import { useAsync } from "../ui/UseAsync.js"

const CAPACITY = 5_000
const ROW_HEIGHT = 36

const stateText = (state: ConnectionState): string => {
  switch (state._tag) {
    case "connecting":
      return state.attempt > 1 ? `Reconnecting (attempt ${state.attempt})…` : "Connecting…"
    case "live":
      return "Live"
    case "waiting":
      return `Connection lost (${state.reason}); retrying in ${Math.ceil(state.retryInMs / 1000)} s`
    case "stopped":
      return `Stopped: ${state.reason}`
  }
}

/** An organization's event: the organization's name when known (its id as the title), else its id. */
const OrgOf = ({
  orgId,
  orgs
}: {
  readonly orgId: string | null | undefined
  readonly orgs: ReadonlyMap<string, string>
}) => {
  if (orgId === null || orgId === undefined) return <span class="mono muted" />
  const name = orgs.get(orgId)
  return name === undefined ? (
    <span class="mono muted">{orgId}</span>
  ) : (
    <span class="muted" title={orgId}>
      {name}
    </span>
  )
}

const ALL_CATEGORIES = new Set<FeedCategory>(FEED_CATEGORIES.map((c) => c.category))

export const FeedPage = () => {
  const buffer = useMemo(() => new FeedBuffer(CAPACITY), [])
  const [version, setVersion] = useState(0)
  const [state, setState] = useState<ConnectionState>({ _tag: "connecting", attempt: 1 })
  const [categories, setCategories] = useState<ReadonlySet<FeedCategory>>(ALL_CATEGORIES)
  const [agentFilter, setAgentFilter] = useState("")
  const [paused, setPaused] = useState(false)
  const stream = useRef<FeedStream | undefined>(undefined)
  const scroller = useRef<HTMLDivElement>(null)
  const [listed] = useAsync((signal) => api<{ agents: ReadonlyArray<NamedAgent> }>("/v1/agents", { signal }), [])
  const directory = useMemo(() => directoryOf(listed._tag === "ready" ? listed.value.agents : []), [listed])

  useEffect(() => {
    let pending: Array<FeedEvent> = []
    let frame: number | undefined
    let timer: ReturnType<typeof setTimeout> | undefined
    const flush = () => {
      if (frame !== undefined) cancelAnimationFrame(frame)
      if (timer !== undefined) clearTimeout(timer)
      frame = undefined
      timer = undefined
      const batch = pending
      pending = []
      if (buffer.add(batch) > 0) setVersion((v) => v + 1)
    }
    stream.current = openFeedStream({
      request: (path, signal) => rawRequest(path, { signal }),
      onEvent: (event) => {
        pending.push(event)
        // Never more waiting than the buffer keeps (a hidden tab at 1,000 events per second).
        if (pending.length > CAPACITY) pending = pending.slice(-CAPACITY)
        // Once per frame; a hidden tab gets no frames, so a timer flushes it too.
        frame ??= requestAnimationFrame(flush)
        timer ??= setTimeout(flush, 250)
      },
      onState: setState,
      refusal: (error) =>
        error instanceof ApiError && error.status !== 429 && error.status < 500 ? error.message : undefined
    })
    return () => {
      stream.current?.stop()
      if (frame !== undefined) cancelAnimationFrame(frame)
      if (timer !== undefined) clearTimeout(timer)
    }
  }, [buffer])

  // While paused the view keeps its rows; the buffer goes on filling.
  const [frozen, setFrozen] = useState(0)
  useEffect(() => {
    if (!paused) setFrozen(version)
  }, [version, paused])
  const agent = agentFilter.trim()
  const named = agent.toLowerCase()
  const matches = (agentId: string | null | undefined): boolean =>
    agent === "" ||
    (agentId !== null &&
      agentId !== undefined &&
      (agentId.includes(agent) ||
        (directory.agents.get(agentId)?.display_name?.toLowerCase().includes(named) ?? false)))
  const rows = useMemo(
    () => buffer.newestFirst((event) => categories.has(categoryOf(event.type)) && matches(event.agent_id)),
    [frozen, categories, agent, directory]
  )
  const virtualizer = useVirtualRows(rows.length, ROW_HEIGHT, scroller)

  const toggle = (category: FeedCategory) => {
    const next = new Set(categories)
    if (next.has(category)) next.delete(category)
    else next.add(category)
    setCategories(next)
  }

  return (
    <section aria-labelledby="feed-title" class="feed">
      <div class="page-head">
        <h1 id="feed-title">Live feed</h1>
        <span class={`conn conn-${state._tag}`} role="status" data-testid="feed-state">
          {stateText(state)}
        </span>
        <span class="spacer" />
        <button type="button" aria-pressed={paused} onClick={() => setPaused(!paused)}>
          {paused ? `Resume view (${count(version - frozen)} updates waiting)` : "Pause view"}
        </button>
        <button type="button" onClick={() => stream.current?.reconnect()}>
          Reconnect
        </button>
      </div>
      <form class="filters" aria-label="Filter events" onSubmit={(e) => e.preventDefault()}>
        <fieldset>
          <legend>Kinds</legend>
          {FEED_CATEGORIES.map(({ category, label }) => (
            <label class={`check cat-${category}`} key={category}>
              <input type="checkbox" checked={categories.has(category)} onChange={() => toggle(category)} />
              {label}
            </label>
          ))}
        </fieldset>
        <label>
          Agent
          <input
            type="search"
            placeholder="agent id or name"
            value={agentFilter}
            onInput={(e) => setAgentFilter(e.currentTarget.value)}
          />
        </label>
      </form>
      <p class="muted">
        <span data-testid="feed-shown">{count(rows.length)}</span> shown of{" "}
        <span data-testid="feed-kept">{count(buffer.size)}</span> kept;{" "}
        <span data-testid="feed-received">{count(buffer.received)}</span> received since this page opened.
      </p>
      <div
        class="feed-list"
        ref={scroller}
        tabIndex={0}
        role="list"
        aria-label="Events, newest first"
        data-testid="feed-list"
      >
        <div style={{ height: `${virtualizer.getTotalSize()}px`, position: "relative" }}>
          {virtualizer.getVirtualItems().map((item) => {
            const event = rows[item.index]!
            const category = categoryOf(event.type)
            return (
              <div
                role="listitem"
                key={event.id}
                class={`feed-row cat-${category}`}
                data-event-id={event.id}
                data-type={event.type}
                style={{ transform: `translateY(${item.start}px)`, height: `${ROW_HEIGHT}px` }}
              >
                <time dateTime={event.created_at}>{clock(event.created_at)}</time>
                <span class="type">{event.type}</span>
                {event.agent_id === undefined || event.agent_id === null ? (
                  <OrgOf orgId={event.org_id} orgs={directory.orgs} />
                ) : directory.agents.has(event.agent_id) ? (
                  <AgentLink agent={directory.agents.get(event.agent_id)!} />
                ) : (
                  <a class="mono" href={hrefOf({ page: "agent", agentId: event.agent_id })}>
                    {event.agent_id}
                  </a>
                )}
                <span class="summary">{summaryOf(event)}</span>
              </div>
            )
          })}
        </div>
        {rows.length === 0 ? (
          <p class="empty muted">No events yet{state._tag === "live" ? "; listening." : "."}</p>
        ) : null}
      </div>
    </section>
  )
}
