/**
 * An agent (`#/agents/<id>`): its name beside its organization's (GET /v1/agents/{id}; renamed with
 * PATCH by those who may write), its containment and enforcement mode with the controls the caller may
 * use (GET /v1/agents/{id}/permissions), verdicts and concern categories over time (uPlot, loaded on
 * demand), recent checkpoints linked to the verify page, drift alerts, reputation and badge, the
 * conscience values in force, the tool policy in a YAML editor (CodeMirror, loaded on demand) and the
 * governance log. docs/console.md, "Agent page".
 */
import { useEffect, useMemo, useState } from "preact/hooks"
import { Chart } from "../agent/Chart.js"
import { ConfirmDialog } from "../agent/Dialog.js"
import { NameForm } from "../agent/NameForm.js"
import { PolicyEditor } from "../agent/PolicyEditor.js"
import { concernSeries, verdictSeries } from "../agent/Series.js"
import type {
  Checkpoint,
  Containment,
  DriftAlert,
  EffectiveValue,
  GovernanceEntry,
  Mode,
  Permissions,
  Reputation,
  Status
} from "../agent/Types.js"
import { api, ApiError } from "../Api.js"
import { agentTitle, type NamedAgent } from "../fleet/Names.js"
import { hrefOf } from "../Router.js"
import { OrgLabel } from "../ui/AgentName.js"

type Action = "pause" | "resume" | "kill" | "reactivate"

const ACTIONS: ReadonlyArray<{
  readonly action: Action
  readonly label: string
  readonly from: ReadonlyArray<Status>
  readonly needs: string
  readonly explain: string
}> = [
  {
    action: "pause",
    label: "Pause",
    from: ["active"],
    needs: "Admin",
    explain: "Every gateway refuses its requests until it is resumed."
  },
  { action: "resume", label: "Resume", from: ["paused"], needs: "Admin", explain: "Its requests go through again." },
  {
    action: "kill",
    label: "Kill",
    from: ["active", "paused"],
    needs: "Owner",
    explain: "Every gateway refuses its requests until an Owner reactivates it."
  },
  {
    action: "reactivate",
    label: "Reactivate",
    from: ["killed"],
    needs: "Owner",
    explain: "Its requests go through again."
  }
]
const MODES: ReadonlyArray<{ readonly mode: Mode; readonly explain: string }> = [
  { mode: "observe", explain: "judge and record only" },
  { mode: "nudge", explain: "tell the model about a violation in its next request" },
  { mode: "enforce", explain: "refuse violating requests and tools" }
]

const reasonOf = (error: unknown): string => (error instanceof Error ? error.message : String(error))
const when = (iso: string) => new Date(iso).toLocaleString()
/** A read that may be absent (404): null instead of an error. */
const optional = <T,>(promise: Promise<T>): Promise<T | null> =>
  promise.catch((error: unknown) => (error instanceof ApiError && error.status === 404 ? null : Promise.reject(error)))

interface Data {
  readonly agent: NamedAgent
  readonly permissions: Permissions
  readonly containment: Containment
  readonly mode: Mode
  readonly checkpoints: ReadonlyArray<Checkpoint>
  readonly total: number
  readonly drift: ReadonlyArray<DriftAlert>
  readonly values: { readonly values: ReadonlyArray<EffectiveValue>; readonly values_hash: string } | null
  readonly reputation: Reputation | null
  readonly governance: { readonly tree_size: number; readonly entries: ReadonlyArray<GovernanceEntry> }
}

const load = async (agentId: string): Promise<Data> => {
  const id = encodeURIComponent(agentId)
  const [agent, permissions, containment, enforcement, checkpoints, drift, values, reputation, governance] =
    await Promise.all([
      api<NamedAgent>(`/v1/agents/${id}`),
      api<Permissions>(`/v1/agents/${id}/permissions`),
      api<Containment>(`/v1/agents/${id}/containment`),
      api<{ enforcement_mode: Mode }>(`/v1/agents/${id}/enforcement`),
      api<{ checkpoints: ReadonlyArray<Checkpoint>; total: number }>(`/v1/agents/${id}/checkpoints?limit=500`),
      api<{ alerts: ReadonlyArray<DriftAlert> }>(`/v1/agents/${id}/drift/aip`),
      optional(api<Data["values"] & object>(`/v1/agents/${id}/conscience-values/effective`)),
      optional(api<Reputation>(`/v1/reputation/${id}`, { anonymous: true })),
      api<Data["governance"]>(`/v1/agents/${id}/governance-log?limit=1000`)
    ])
  return {
    agent,
    permissions,
    containment,
    mode: enforcement.enforcement_mode,
    checkpoints: checkpoints.checkpoints,
    total: checkpoints.total,
    drift: drift.alerts,
    values,
    reputation,
    governance
  }
}

const VerdictTag = ({ verdict }: { readonly verdict: string }) => (
  <span class={`tag tag-${verdict}`}>{verdict.replace("_", " ")}</span>
)

export const AgentPage = ({ agentId }: { readonly agentId: string }) => {
  const [data, setData] = useState<Data | undefined>(undefined)
  const [error, setError] = useState<string | undefined>(undefined)
  const [notice, setNotice] = useState<{ readonly ok: boolean; readonly text: string } | undefined>(undefined)
  const [confirm, setConfirm] = useState<Action | undefined>(undefined)
  const [reason, setReason] = useState("")
  const [busy, setBusy] = useState(false)
  const id = encodeURIComponent(agentId)

  const refresh = () => load(agentId).then(setData, (e: unknown) => setError(reasonOf(e)))
  useEffect(() => {
    setData(undefined)
    setError(undefined)
    void refresh()
  }, [agentId])

  // Checkpoints come newest first; the charts read oldest first.
  const oldestFirst = useMemo(() => [...(data?.checkpoints ?? [])].reverse(), [data?.checkpoints])
  const verdicts = useMemo(() => verdictSeries(oldestFirst), [oldestFirst])
  const concerns = useMemo(() => concernSeries(oldestFirst), [oldestFirst])

  if (error !== undefined)
    return (
      <p role="alert" class="error">
        {error}
      </p>
    )
  if (data === undefined) return <p aria-busy="true">Loading agent {agentId}…</p>
  const { permissions, containment } = data
  const status = containment.containment_status

  const act = (action: Action) => {
    setBusy(true)
    const body =
      (action === "pause" || action === "kill") && reason.trim() !== "" ? { reason: reason.trim() } : undefined
    api<Partial<Containment> & { containment_status: Status }>(`/v1/agents/${id}/${action}`, {
      method: "POST",
      ...(body === undefined ? {} : { body })
    }).then(
      (answer) => {
        // The answer is the new state: shown at once, then everything is read again.
        setData({
          ...data,
          containment: {
            containment_status: answer.containment_status,
            contained_at: answer.contained_at ?? null,
            contained_by: answer.contained_by ?? null,
            containment_reason: answer.containment_reason ?? null
          }
        })
        setBusy(false)
        setConfirm(undefined)
        setReason("")
        setNotice({ ok: true, text: `${ACTIONS.find((a) => a.action === action)!.label}: done.` })
        void refresh()
      },
      (e: unknown) => {
        setBusy(false)
        setConfirm(undefined)
        setNotice({ ok: false, text: reasonOf(e) })
      }
    )
  }
  const setMode = (mode: Mode) =>
    api<{ enforcement_mode: Mode }>(`/v1/agents/${id}/enforcement`, { method: "PUT", body: { mode } }).then(
      (answer) => {
        setData({ ...data, mode: answer.enforcement_mode })
        setNotice({ ok: true, text: `Enforcement mode: ${answer.enforcement_mode}.` })
        void refresh()
      },
      (e: unknown) => setNotice({ ok: false, text: reasonOf(e) })
    )
  const pending = ACTIONS.find((a) => a.action === confirm)

  return (
    <div class="agent-page">
      <header class="agent-head">
        <h1 data-testid="agent-title">
          {data.agent.display_name === null ? (
            <>
              Agent <code>{agentId}</code>
            </>
          ) : (
            agentTitle(data.agent)
          )}
        </h1>
        <OrgLabel agent={data.agent} />
        <span class={`status status-${status}`} data-testid="agent-status" role="status">
          {status}
        </span>
        <span class="muted">your role: {permissions.role}</span>
      </header>
      {data.agent.display_name === null ? null : (
        <p class="muted">
          id <code data-testid="agent-id">{agentId}</code>
        </p>
      )}
      {containment.containment_reason === null ? null : (
        <p class="muted">
          {status} by {containment.contained_by} at{" "}
          {containment.contained_at === null ? "?" : when(containment.contained_at)}: {containment.containment_reason}
        </p>
      )}
      <div aria-live="polite">
        {notice === undefined ? null : (
          <p role={notice.ok ? "status" : "alert"} class={notice.ok ? "ok" : "error"} data-testid="agent-notice">
            {notice.text}
          </p>
        )}
      </div>

      <section class="panel controls" aria-labelledby="controls-title">
        <h2 id="controls-title">Containment and enforcement</h2>
        <NameForm
          key={data.agent.agent_id}
          agent={data.agent}
          canWrite={permissions.may.write}
          onRenamed={(agent) => setData({ ...data, agent })}
        />
        <div class="row" role="group" aria-label="Containment">
          {ACTIONS.map(({ action, label, from, needs }) => {
            const allowed = permissions.may[action]
            const applies = from.includes(status)
            return (
              <button
                type="button"
                class={action === "kill" ? "danger" : ""}
                data-testid={`action-${action}`}
                disabled={!allowed || !applies}
                title={!allowed ? `Needs ${needs}` : applies ? undefined : `Not while the agent is ${status}`}
                onClick={() => setConfirm(action)}
              >
                {label}
              </button>
            )
          })}
        </div>
        <fieldset class="modes" disabled={!permissions.may.write} data-testid="enforcement">
          <legend>Enforcement mode{permissions.may.write ? "" : " (Admin or Owner to change)"}</legend>
          {MODES.map(({ mode, explain }) => (
            <label>
              <input
                type="radio"
                name="mode"
                value={mode}
                checked={data.mode === mode}
                onChange={() => setMode(mode)}
              />
              <strong>{mode}</strong> <span class="muted">{explain}</span>
            </label>
          ))}
        </fieldset>
      </section>

      <section class="panel" aria-labelledby="charts-title">
        <h2 id="charts-title">Verdicts over time</h2>
        <p class="muted">
          The newest {data.checkpoints.length} of {data.total} checkpoints.
        </p>
        <div class="charts">
          <Chart title="Verdicts" series={verdicts} testId="verdict-chart" />
          <Chart title="Concern categories" series={concerns} testId="concern-chart" />
        </div>
      </section>

      <section class="panel" aria-labelledby="timeline-title">
        <h2 id="timeline-title">Recent checkpoints</h2>
        <ol class="timeline" data-testid="timeline">
          {data.checkpoints.slice(0, 50).map((checkpoint) => (
            <li data-testid="timeline-item">
              <time dateTime={checkpoint.timestamp}>{when(checkpoint.timestamp)}</time>{" "}
              <VerdictTag verdict={checkpoint.verdict} />{" "}
              {checkpoint.concerns.map((concern) => concern.category).join(", ")}{" "}
              <a href={hrefOf({ page: "verify", checkpointId: checkpoint.checkpoint_id })} data-testid="verify-link">
                verify {checkpoint.checkpoint_id}
              </a>
            </li>
          ))}
        </ol>
      </section>

      <section class="panel" aria-labelledby="drift-title">
        <h2 id="drift-title">Drift alerts</h2>
        {data.drift.length === 0 ? (
          <p class="muted">No drift alerts.</p>
        ) : (
          <ul data-testid="drift-alerts">
            {data.drift.map((alert) => (
              <li>
                <span class={`tag tag-${alert.severity}`}>{alert.severity}</span> {when(alert.detection_timestamp)}:{" "}
                {alert.message} ({alert.drift_direction})
                {(alert.checkpoint_ids ?? []).map((checkpointId) => (
                  <>
                    {" "}
                    <a href={hrefOf({ page: "verify", checkpointId })}>{checkpointId}</a>
                  </>
                ))}
              </li>
            ))}
          </ul>
        )}
      </section>

      <section class="panel" aria-labelledby="reputation-title" data-testid="reputation">
        <h2 id="reputation-title">Reputation</h2>
        {data.reputation === null ? (
          <p class="muted">Not published (a private agent, or no score yet).</p>
        ) : (
          <>
            <p>
              <img
                src={`/v1/reputation/${id}/badge.svg`}
                alt={`Reputation badge: ${data.reputation.grade}`}
                data-testid="badge"
              />{" "}
              Score <strong data-testid="reputation-score">{data.reputation.score}</strong>, grade{" "}
              {data.reputation.grade}, {data.reputation.tier}, confidence {data.reputation.confidence}, over{" "}
              {data.reputation.checkpoint_count} checkpoints.
            </p>
            <table>
              <thead>
                <tr>
                  <th scope="col">Component</th>
                  <th scope="col">Score</th>
                  <th scope="col">Weight</th>
                </tr>
              </thead>
              <tbody>
                {data.reputation.components.map((component) => (
                  <tr data-testid="reputation-component">
                    <td>{component.label}</td>
                    <td>{component.score}</td>
                    <td>{component.weight}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </>
        )}
      </section>

      <section class="panel" aria-labelledby="values-title">
        <h2 id="values-title">Conscience values in force</h2>
        {data.values === null ? (
          <p class="muted">Not available.</p>
        ) : (
          <>
            <table data-testid="conscience-values">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Type</th>
                  <th scope="col">Severity</th>
                  <th scope="col">From</th>
                  <th scope="col">Content</th>
                </tr>
              </thead>
              <tbody>
                {data.values.values.map((value) => (
                  <tr>
                    <td>
                      {value.name}
                      {value.boundary ? <span class="tag tag-boundary_violation">boundary</span> : null}
                    </td>
                    <td>{value.type}</td>
                    <td>{value.severity}</td>
                    <td>{value.layer}</td>
                    <td>{value.content}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            <p class="muted">
              values_hash <code>{data.values.values_hash}</code> (the next certificates commit to it)
            </p>
          </>
        )}
      </section>

      <PolicyEditor agentId={agentId} canWrite={permissions.may.write} />

      <section class="panel" aria-labelledby="governance-title">
        <h2 id="governance-title">Governance log</h2>
        <p class="muted">{data.governance.tree_size} entries, signed like the checkpoint log; newest first.</p>
        <table data-testid="governance-log">
          <thead>
            <tr>
              <th scope="col">#</th>
              <th scope="col">When</th>
              <th scope="col">Action</th>
              <th scope="col">By</th>
              <th scope="col">Change</th>
            </tr>
          </thead>
          <tbody>
            {[...data.governance.entries]
              .reverse()
              .slice(0, 100)
              .map(({ index, record }) => (
                <tr data-testid="governance-entry">
                  <td>{index}</td>
                  <td>{when(record.created_at)}</td>
                  <td>{record.action}</td>
                  <td>{record.actor}</td>
                  <td>
                    <code>{JSON.stringify(record.previous_state)}</code> →{" "}
                    <code>{JSON.stringify(record.new_state)}</code>
                    {record.reason === null ? null : <> ({record.reason})</>}
                  </td>
                </tr>
              ))}
          </tbody>
        </table>
      </section>

      {pending === undefined ? null : (
        <ConfirmDialog
          title={`${pending.label} agent ${agentId}?`}
          confirmLabel={pending.label}
          danger={pending.action === "kill"}
          busy={busy}
          onConfirm={() => act(pending.action)}
          onCancel={() => setConfirm(undefined)}
        >
          <p>{pending.explain}</p>
          {pending.action === "pause" || pending.action === "kill" ? (
            <label>
              Reason (optional, kept in the log)
              <textarea
                rows={2}
                maxLength={1000}
                value={reason}
                onInput={(event) => setReason(event.currentTarget.value)}
              />
            </label>
          ) : null}
        </ConfirmDialog>
      )}
    </div>
  )
}
