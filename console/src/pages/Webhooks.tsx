/**
 * Webhook endpoints of an organization or of one agent (docs/webhooks.md): list, create, enable or
 * disable, test, rotate the secret, delete, and the deliveries with redelivery. A signing secret is
 * shown once, when created or rotated. Managing webhooks needs Owner or Admin (an agent outside any
 * organization: its owner; the local operator: everything), so other
 * callers see why the page is empty instead of controls that would fail.
 */
import { useEffect, useState } from "preact/hooks"
import type { WebhookDelivery, WebhookEndpoint } from "../../../core/schema/Webhook.js"
import type { EventTypeInfo } from "../../../core/schema/WebhookEvents.js"
import { api } from "../Api.js"
import { canManageOrg, isService, useCaller } from "../Caller.js"
import { dateTime, messageOf } from "../ui/Format.js"
import { SecretOnce } from "../ui/Secret.js"
import { useAsync } from "../ui/UseAsync.js"

// The published shapes (core/schema), as far as the page reads them; type-only: nothing of core is bundled.
type Endpoint = Pick<
  WebhookEndpoint,
  "endpoint_id" | "url" | "description" | "event_types" | "agent_ids" | "is_active" | "disabled_reason" | "created_at"
>
type Delivery = Pick<
  WebhookDelivery,
  | "delivery_id"
  | "endpoint_id"
  | "event_id"
  | "event_type"
  | "status"
  | "attempts"
  | "last_status"
  | "last_error"
  | "created_at"
  | "delivered_at"
>
type EventType = Pick<typeof EventTypeInfo.Type, "type" | "description" | "status">

type Scope = { readonly kind: "org"; readonly id: string } | { readonly kind: "agent"; readonly id: string }

const rootOf = (scope: Scope) =>
  scope.kind === "org" ? `/v1/orgs/${encodeURIComponent(scope.id)}` : `/v1/agents/${encodeURIComponent(scope.id)}`

const Deliveries = ({ root, endpointId, canWrite }: { root: string; endpointId: string; canWrite: boolean }) => {
  const [status, setStatus] = useState("")
  const [note, setNote] = useState<string | undefined>(undefined)
  const [state, reload] = useAsync(
    (signal) =>
      api<{ deliveries: ReadonlyArray<Delivery>; total: number }>(
        `${root}/webhooks/deliveries?endpoint_id=${encodeURIComponent(endpointId)}&limit=50${status === "" ? "" : `&status=${status}`}`,
        { signal }
      ),
    [root, endpointId, status]
  )
  const redeliver = async (id: string) => {
    try {
      await api(`${root}/webhooks/deliveries/${encodeURIComponent(id)}/redeliver`, { method: "POST" })
      setNote("Redelivery started.")
      reload()
    } catch (error) {
      setNote(messageOf(error))
    }
  }
  return (
    <div class="deliveries">
      <label>
        Deliveries with status{" "}
        <select value={status} onChange={(e) => setStatus(e.currentTarget.value)}>
          <option value="">any</option>
          <option value="pending">pending</option>
          <option value="delivered">delivered</option>
          <option value="failed">failed</option>
        </select>
      </label>
      {note === undefined ? null : <p role="status">{note}</p>}
      {state._tag === "loading" ? <p role="status">Loading deliveries…</p> : null}
      {state._tag === "failed" ? <p role="alert">{state.message}</p> : null}
      {state._tag === "ready" ? (
        state.value.deliveries.length === 0 ? (
          <p class="muted">No deliveries.</p>
        ) : (
          <div class="table-wrap">
            <table class="grid">
              <caption class="visually-hidden">Deliveries, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Event</th>
                  <th scope="col">Status</th>
                  <th scope="col">Attempts</th>
                  <th scope="col">Last answer</th>
                  <th scope="col">Created</th>
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {state.value.deliveries.map((d) => (
                  <tr key={d.delivery_id}>
                    <td>
                      <span class="mono">{d.event_type}</span>
                      <br />
                      <span class="mono muted">{d.event_id}</span>
                    </td>
                    <td>
                      <span class={`badge delivery-${d.status}`}>{d.status}</span>
                    </td>
                    <td>{d.attempts}</td>
                    <td>{d.last_error ?? (d.last_status === null ? "—" : `HTTP ${d.last_status}`)}</td>
                    <td>{dateTime(d.created_at)}</td>
                    <td>
                      {canWrite ? (
                        <button type="button" onClick={() => redeliver(d.delivery_id)}>
                          Redeliver
                        </button>
                      ) : null}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )
      ) : null}
    </div>
  )
}

const CreateEndpoint = ({
  root,
  eventTypes,
  onCreated
}: {
  root: string
  eventTypes: ReadonlyArray<EventType>
  onCreated: (secret: string) => void
}) => {
  const [url, setUrl] = useState("")
  const [description, setDescription] = useState("")
  const [types, setTypes] = useState<ReadonlyArray<string>>([])
  const [error, setError] = useState<string | undefined>(undefined)
  const submit = async (event: Event) => {
    event.preventDefault()
    setError(undefined)
    try {
      const created = await api<{ signing_secret: string }>(`${root}/webhooks`, {
        method: "POST",
        body: { url, event_types: types, ...(description === "" ? {} : { description }) }
      })
      setUrl("")
      setDescription("")
      setTypes([])
      onCreated(created.signing_secret)
    } catch (failure) {
      setError(messageOf(failure))
    }
  }
  return (
    <form class="panel stack" onSubmit={submit} aria-labelledby="new-endpoint">
      <h2 id="new-endpoint">New endpoint</h2>
      <label>
        URL (https, public address)
        <input type="url" required value={url} onInput={(e) => setUrl(e.currentTarget.value)} />
      </label>
      <label>
        Description
        <input value={description} maxLength={500} onInput={(e) => setDescription(e.currentTarget.value)} />
      </label>
      <label>
        Event types (none selected: every type)
        <select
          multiple
          size={6}
          onChange={(e) => setTypes(Array.from(e.currentTarget.selectedOptions, (o) => o.value))}
        >
          {eventTypes.map((t) => (
            <option value={t.type} key={t.type} title={t.description} selected={types.includes(t.type)}>
              {t.type}
              {t.status === "declared" ? " (declared)" : ""}
            </option>
          ))}
        </select>
      </label>
      <div>
        <button type="submit" class="primary">
          Create endpoint
        </button>
      </div>
      {error === undefined ? null : (
        <p role="alert" class="notice bad">
          {error}
        </p>
      )}
    </form>
  )
}

const EndpointList = ({ scope, canWrite }: { scope: Scope; canWrite: boolean }) => {
  const root = rootOf(scope)
  const [state, reload] = useAsync(
    (signal) => api<{ endpoints: ReadonlyArray<Endpoint> }>(`${root}/webhooks`, { signal }),
    [root]
  )
  const [types] = useAsync(
    (signal) => api<{ event_types: ReadonlyArray<EventType> }>("/v1/webhooks/event-types", { signal, anonymous: true }),
    []
  )
  const [secret, setSecret] = useState<{ label: string; value: string } | undefined>(undefined)
  const [note, setNote] = useState<string | undefined>(undefined)
  const [open, setOpen] = useState<string | undefined>(undefined)

  const act = async (label: string, run: () => Promise<void>) => {
    setNote(undefined)
    try {
      await run()
      reload()
    } catch (error) {
      setNote(`${label}: ${messageOf(error)}`)
    }
  }
  const path = (endpoint: Endpoint, tail = "") => `${root}/webhooks/${encodeURIComponent(endpoint.endpoint_id)}${tail}`

  return (
    <div class="stack">
      {secret === undefined ? null : (
        <SecretOnce label={secret.label} value={secret.value} onDone={() => setSecret(undefined)} />
      )}
      {note === undefined ? null : (
        <p role="status" class="notice" data-testid="webhook-note">
          {note}
        </p>
      )}
      {state._tag === "loading" ? <p role="status">Loading endpoints…</p> : null}
      {state._tag === "failed" ? (
        <p role="alert" class="notice bad">
          {state.message}
        </p>
      ) : null}
      {state._tag === "ready" ? (
        state.value.endpoints.length === 0 ? (
          <p class="muted">No endpoints yet.</p>
        ) : (
          <ul class="cards" aria-label="Endpoints">
            {state.value.endpoints.map((endpoint) => (
              <li class="panel" key={endpoint.endpoint_id} data-endpoint={endpoint.endpoint_id}>
                <div class="row">
                  <strong class="mono break">{endpoint.url}</strong>
                  <span class={`badge ${endpoint.is_active ? "status-active" : "status-paused"}`}>
                    {endpoint.is_active ? "active" : "disabled"}
                  </span>
                </div>
                {endpoint.description === null || endpoint.description === "" ? null : <p>{endpoint.description}</p>}
                {endpoint.disabled_reason === null ? null : <p class="bad-text">{endpoint.disabled_reason}</p>}
                <p class="muted">
                  Events: {endpoint.event_types.length === 0 ? "every type" : endpoint.event_types.join(", ")}
                  {endpoint.agent_ids.length === 0 ? "" : ` · agents: ${endpoint.agent_ids.join(", ")}`} · created{" "}
                  {dateTime(endpoint.created_at)}
                </p>
                <div class="actions">
                  <button
                    type="button"
                    aria-expanded={open === endpoint.endpoint_id}
                    onClick={() => setOpen(open === endpoint.endpoint_id ? undefined : endpoint.endpoint_id)}
                  >
                    Deliveries
                  </button>
                  {canWrite ? (
                    <>
                      <button
                        type="button"
                        onClick={() =>
                          act("Test", async () => {
                            const r = await api<{
                              success: boolean
                              status: number | null
                              latency_ms: number
                              error: string | null
                            }>(path(endpoint, "/test"), { method: "POST" })
                            setNote(
                              r.success
                                ? `Test delivered: HTTP ${r.status} in ${r.latency_ms} ms`
                                : `Test failed: ${r.error ?? `HTTP ${r.status}`}`
                            )
                          })
                        }
                      >
                        Send test
                      </button>
                      <button
                        type="button"
                        onClick={() =>
                          act("Rotate", async () => {
                            if (!confirm("Rotate the signing secret? Both secrets sign for 24 hours.")) return
                            const r = await api<{ signing_secret: string }>(path(endpoint, "/rotate-secret"), {
                              method: "POST"
                            })
                            setSecret({ label: "New signing secret", value: r.signing_secret })
                          })
                        }
                      >
                        Rotate secret
                      </button>
                      <button
                        type="button"
                        onClick={() =>
                          act("Update", () =>
                            api(path(endpoint), { method: "PATCH", body: { is_active: !endpoint.is_active } })
                          )
                        }
                      >
                        {endpoint.is_active ? "Disable" : "Enable"}
                      </button>
                      <button
                        type="button"
                        class="danger"
                        onClick={() =>
                          act("Delete", async () => {
                            if (confirm(`Delete the endpoint ${endpoint.url}?`))
                              await api(path(endpoint), { method: "DELETE" })
                          })
                        }
                      >
                        Delete
                      </button>
                    </>
                  ) : null}
                </div>
                {open === endpoint.endpoint_id ? (
                  <Deliveries root={root} endpointId={endpoint.endpoint_id} canWrite={canWrite} />
                ) : null}
              </li>
            ))}
          </ul>
        )
      ) : null}
      {canWrite ? (
        <CreateEndpoint
          root={root}
          eventTypes={types._tag === "ready" ? types.value.event_types : []}
          onCreated={(value) => {
            setSecret({ label: "Signing secret", value })
            reload()
          }}
        />
      ) : null}
    </div>
  )
}

export const WebhooksPage = () => {
  const info = useCaller()
  const [scope, setScope] = useState<Scope | undefined>(undefined)
  const [agentId, setAgentId] = useState("")
  useEffect(() => {
    const first = info.orgs.find((org) => canManageOrg(info, org.org_id)) ?? info.orgs[0]
    if (scope === undefined && first !== undefined) setScope({ kind: "org", id: first.org_id })
  }, [info])

  const manageable =
    scope === undefined
      ? false
      : scope.kind === "org"
        ? canManageOrg(info, scope.id)
        : !info.caller.read_only &&
          (isService(info.caller) || info.caller.kind === "user" || info.caller.role !== "member")

  return (
    <section aria-labelledby="webhooks-title" class="stack">
      <h1 id="webhooks-title">Webhooks</h1>
      <form
        class="filters"
        onSubmit={(e) => (e.preventDefault(), agentId.trim() !== "" && setScope({ kind: "agent", id: agentId.trim() }))}
      >
        <label>
          Organization
          <select
            value={scope?.kind === "org" ? scope.id : ""}
            onChange={(e) => e.currentTarget.value !== "" && setScope({ kind: "org", id: e.currentTarget.value })}
          >
            <option value="">{info.orgs.length === 0 ? "none" : "choose…"}</option>
            {info.orgs.map((org) => (
              <option value={org.org_id} key={org.org_id}>
                {org.name} ({org.role})
              </option>
            ))}
          </select>
        </label>
        <label>
          or an agent's own endpoints
          <input placeholder="agent id" value={agentId} onInput={(e) => setAgentId(e.currentTarget.value)} />
        </label>
        <button type="submit">Show</button>
      </form>
      {scope === undefined ? (
        <p class="muted">Choose an organization, or an agent by its id.</p>
      ) : scope.kind === "org" && !manageable ? (
        <p class="notice">
          Webhooks of this organization are managed by its Owners and Admins; your role there cannot list or change
          them.
        </p>
      ) : (
        <>
          <h2 class="sub">
            {scope.kind === "org" ? "Organization" : "Agent"} <span class="mono">{scope.id}</span>
          </h2>
          {info.caller.read_only ? <p class="notice">This session is read-only.</p> : null}
          <EndpointList key={`${scope.kind}:${scope.id}`} scope={scope} canWrite={manageable} />
        </>
      )}
    </section>
  )
}
