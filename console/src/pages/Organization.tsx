/**
 * An organization's pending approvals (./ApprovalQueue.tsx) and settings: its conscience values (the layer between the defaults and each agent's
 * own values, docs/api.md "Organization conscience values"), their order, mode and switch, and the
 * change log. Members read; Owners and Admins (and the local operator) change
 * them and read the log, so other callers get no write controls.
 */
import { useEffect, useState } from "preact/hooks"
import type { OrgConscience, OrgConscienceLogEntry, OrgConscienceValue } from "../../../core/schema/Conscience.js"
import { api } from "../Api.js"
import { canManageOrg, useCaller } from "../Caller.js"
import { dateTime, messageOf } from "../ui/Format.js"
import { ApprovalQueue } from "./ApprovalQueue.js"
import { useAsync } from "../ui/UseAsync.js"

const TYPES = ["BOUNDARY", "FEAR", "COMMITMENT", "BELIEF", "HOPE"] as const

// The published shapes (core/schema/Conscience.ts), as far as the page reads them; type-only.
type ConscienceValue = Pick<
  OrgConscienceValue,
  "value_id" | "type" | "name" | "content" | "severity" | "is_active" | "sort_order" | "updated_at"
>
type Values = Pick<OrgConscience, "org_id" | "mode" | "enabled"> & { readonly values: ReadonlyArray<ConscienceValue> }
type LogEntry = Pick<OrgConscienceLogEntry, "value_id" | "action" | "actor" | "changes" | "created_at">

const NewValue = ({ root, onDone }: { root: string; onDone: (error?: string) => void }) => {
  const [type, setType] = useState<(typeof TYPES)[number]>("BOUNDARY")
  const [name, setName] = useState("")
  const [content, setContent] = useState("")
  const [severity, setSeverity] = useState<"advisory" | "mandatory">("advisory")
  const submit = async (event: Event) => {
    event.preventDefault()
    try {
      await api(`${root}/conscience-values`, { method: "POST", body: { type, name, content, severity } })
      setName("")
      setContent("")
      onDone()
    } catch (error) {
      onDone(messageOf(error))
    }
  }
  return (
    <form class="panel stack" onSubmit={submit} aria-labelledby="new-value">
      <h3 id="new-value">Add a value</h3>
      <div class="row wrap">
        <label>
          Type
          <select value={type} onChange={(e) => setType(e.currentTarget.value as (typeof TYPES)[number])}>
            {TYPES.map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
        </label>
        <label>
          Severity
          <select value={severity} onChange={(e) => setSeverity(e.currentTarget.value as "advisory" | "mandatory")}>
            <option value="advisory">advisory</option>
            <option value="mandatory">mandatory (a hard boundary)</option>
          </select>
        </label>
        <label class="grow">
          Name
          <input required maxLength={50} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </label>
      </div>
      <label>
        Content
        <textarea
          required
          maxLength={500}
          rows={3}
          value={content}
          onInput={(e) => setContent(e.currentTarget.value)}
        />
      </label>
      <div>
        <button type="submit" class="primary">
          Add value
        </button>
      </div>
    </form>
  )
}

const OrgSettings = ({ orgId, canWrite }: { orgId: string; canWrite: boolean }) => {
  const root = `/v1/orgs/${encodeURIComponent(orgId)}`
  const [values, reload] = useAsync((signal) => api<Values>(`${root}/conscience-values`, { signal }), [root])
  const [log, reloadLog] = useAsync(
    (signal) =>
      canWrite
        ? api<{ entries: ReadonlyArray<LogEntry> }>(`${root}/conscience-values/log?limit=50`, { signal })
        : Promise.resolve({ entries: [] }),
    [root, canWrite]
  )
  const [note, setNote] = useState<string | undefined>(undefined)
  const act = async (label: string, run: () => Promise<unknown>) => {
    setNote(undefined)
    try {
      await run()
    } catch (error) {
      setNote(`${label}: ${messageOf(error)}`)
    }
    reload()
    reloadLog()
  }

  if (values._tag === "loading") return <p role="status">Loading…</p>
  if (values._tag === "failed")
    return (
      <p role="alert" class="notice bad">
        {values.message}
      </p>
    )
  const { mode, enabled } = values.value
  const list = [...values.value.values].sort((a, b) => a.sort_order - b.sort_order)
  const move = (index: number, by: number) => {
    const order = list.map((v) => v.value_id)
    const [moved] = order.splice(index, 1)
    order.splice(index + by, 0, moved!)
    return act("Reorder", () => api(`${root}/conscience-values/order`, { method: "PUT", body: { order } }))
  }

  return (
    <div class="stack">
      {note === undefined ? null : (
        <p role="alert" class="notice bad">
          {note}
        </p>
      )}
      <fieldset class="panel" disabled={!canWrite}>
        <legend>Organization layer</legend>
        <label class="check">
          <input
            type="checkbox"
            checked={enabled}
            onChange={(e) =>
              act("Mode", () =>
                api(`${root}/conscience-values/mode`, { method: "PUT", body: { enabled: e.currentTarget.checked } })
              )
            }
          />
          Enabled (off: the agents resolve as if they had no organization)
        </label>
        <label>
          Mode{" "}
          <select
            value={mode}
            onChange={(e) =>
              act("Mode", () =>
                api(`${root}/conscience-values/mode`, { method: "PUT", body: { mode: e.currentTarget.value } })
              )
            }
          >
            <option value="augment">augment: the defaults, then these values</option>
            <option value="replace">replace: these values instead of the defaults</option>
          </select>
        </label>
      </fieldset>

      <h2 class="sub">Conscience values ({list.length} of 20)</h2>
      {list.length === 0 ? <p class="muted">No values: the agents get the defaults and their own values.</p> : null}
      <ol class="cards" aria-label="Conscience values in order">
        {list.map((value, index) => (
          <li class="panel" key={value.value_id} data-value={value.value_id}>
            <div class="row wrap">
              <span class="badge">{value.type}</span>
              <strong>{value.name}</strong>
              {value.severity === "mandatory" ? <span class="badge status-killed">mandatory</span> : null}
              {value.is_active ? null : <span class="badge muted-badge">inactive</span>}
            </div>
            <p>{value.content}</p>
            {canWrite ? (
              <div class="actions">
                <button
                  type="button"
                  disabled={index === 0}
                  aria-label={`Move ${value.name} up`}
                  onClick={() => move(index, -1)}
                >
                  Up
                </button>
                <button
                  type="button"
                  disabled={index === list.length - 1}
                  aria-label={`Move ${value.name} down`}
                  onClick={() => move(index, 1)}
                >
                  Down
                </button>
                <button
                  type="button"
                  onClick={() =>
                    act("Update", () =>
                      api(`${root}/conscience-values/${encodeURIComponent(value.value_id)}`, {
                        method: "PATCH",
                        body: { is_active: !value.is_active }
                      })
                    )
                  }
                >
                  {value.is_active ? "Deactivate" : "Activate"}
                </button>
                <button
                  type="button"
                  class="danger"
                  onClick={() =>
                    confirm(`Delete the value "${value.name}"?`) &&
                    act("Delete", () =>
                      api(`${root}/conscience-values/${encodeURIComponent(value.value_id)}`, { method: "DELETE" })
                    )
                  }
                >
                  Delete
                </button>
              </div>
            ) : null}
          </li>
        ))}
      </ol>
      {canWrite ? (
        <NewValue
          root={root}
          onDone={(error) => {
            setNote(error === undefined ? undefined : `Add: ${error}`)
            reload()
            reloadLog()
          }}
        />
      ) : (
        <p class="notice">Your role here reads the values; Owners and Admins change them.</p>
      )}

      {canWrite ? (
        <>
          <h2 class="sub">Change log</h2>
          {log._tag === "ready" ? (
            log.value.entries.length === 0 ? (
              <p class="muted">No changes yet.</p>
            ) : (
              <div class="table-wrap">
                <table class="grid">
                  <caption class="visually-hidden">Changes, newest first</caption>
                  <thead>
                    <tr>
                      <th scope="col">When</th>
                      <th scope="col">Action</th>
                      <th scope="col">By</th>
                      <th scope="col">Changes</th>
                    </tr>
                  </thead>
                  <tbody>
                    {log.value.entries.map((entry, i) => (
                      <tr key={i}>
                        <td>{dateTime(entry.created_at)}</td>
                        <td>{entry.action}</td>
                        <td class="mono">{entry.actor}</td>
                        <td class="mono small">{Object.keys(entry.changes).join(", ")}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )
          ) : log._tag === "failed" ? (
            <p role="alert">{log.message}</p>
          ) : (
            <p role="status">Loading the log…</p>
          )}
        </>
      ) : null}
    </div>
  )
}

export const OrganizationPage = () => {
  const info = useCaller()
  const [orgId, setOrgId] = useState<string | undefined>(undefined)
  useEffect(() => {
    if (orgId === undefined && info.orgs[0] !== undefined) setOrgId(info.orgs[0].org_id)
  }, [info])
  const org = info.orgs.find((o) => o.org_id === orgId)
  return (
    <section aria-labelledby="org-title" class="stack">
      <h1 id="org-title">Organization</h1>
      {info.orgs.length === 0 ? (
        <p class="notice">
          This credential belongs to no organization
          {info.caller.kind === "operator" ? ", and none of the agents it sees is claimed into one" : ""}.
        </p>
      ) : (
        <label>
          Organization{" "}
          <select value={orgId ?? ""} onChange={(e) => setOrgId(e.currentTarget.value)}>
            {info.orgs.map((o) => (
              <option key={o.org_id} value={o.org_id}>
                {o.name} ({o.role})
              </option>
            ))}
          </select>
        </label>
      )}
      {org === undefined ? null : (
        <ApprovalQueue key={`approvals-${org.org_id}`} orgId={org.org_id} canDecide={canManageOrg(info, org.org_id)} />
      )}
      {org === undefined ? null : (
        <OrgSettings key={org.org_id} orgId={org.org_id} canWrite={canManageOrg(info, org.org_id)} />
      )}
    </section>
  )
}
