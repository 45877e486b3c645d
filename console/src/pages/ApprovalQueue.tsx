/**
 * An organization's pending approvals (docs/approvals.md): the tool calls held for a person, oldest
 * deadline visible at a glance, with approve and deny for Owners and Admins. A decision answered
 * 409 (decided elsewhere, expired) is shown as the server words it and the queue reloads.
 */
import { useState } from "preact/hooks"
import type { Approval, ApprovalPage } from "../../../core/schema/Approval.js"
import { api } from "../Api.js"
import { dateTime, messageOf } from "../ui/Format.js"
import { useAsync } from "../ui/UseAsync.js"

export const ApprovalQueue = ({ orgId, canDecide }: { orgId: string; canDecide: boolean }) => {
  const [note, setNote] = useState<string | undefined>(undefined)
  const [queue, reload] = useAsync(
    (signal) =>
      api<ApprovalPage>(`/v1/orgs/${encodeURIComponent(orgId)}/approvals?status=pending&limit=100`, { signal }),
    [orgId]
  )
  const decide = async (approval: Approval, decision: "approve" | "deny") => {
    try {
      await api(`/v1/approvals/${encodeURIComponent(approval.approval_id)}/${decision}`, {
        method: "POST",
        body: {}
      })
      setNote(`${decision === "approve" ? "Approved" : "Denied"}: ${approval.tool}`)
    } catch (error) {
      setNote(`${decision === "approve" ? "Approve" : "Deny"}: ${messageOf(error)}`)
    }
    reload()
  }
  return (
    <section aria-labelledby="approvals-title" class="stack">
      <h2 id="approvals-title" class="sub">
        Pending approvals
      </h2>
      {note === undefined ? null : <p role="status">{note}</p>}
      {queue._tag === "ready" ? (
        queue.value.approvals.length === 0 ? (
          <p class="muted">No tool call is waiting for a decision.</p>
        ) : (
          <div class="table-wrap">
            <table class="grid">
              <caption class="visually-hidden">Tool calls waiting for a decision, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Tool</th>
                  <th scope="col">Agent</th>
                  <th scope="col">Why</th>
                  <th scope="col">Requested</th>
                  <th scope="col">Expires</th>
                  {canDecide ? <th scope="col">Decision</th> : null}
                </tr>
              </thead>
              <tbody>
                {queue.value.approvals.map((approval) => (
                  <tr key={approval.approval_id}>
                    <td class="mono">{approval.tool}</td>
                    <td class="mono small">{approval.agent_id}</td>
                    <td>{approval.reason}</td>
                    <td>{dateTime(approval.requested_at)}</td>
                    <td>{dateTime(approval.expires_at)}</td>
                    {canDecide ? (
                      <td class="row">
                        <button
                          type="button"
                          aria-label={`Approve ${approval.tool}`}
                          onClick={() => decide(approval, "approve")}
                        >
                          Approve
                        </button>
                        <button
                          type="button"
                          class="danger"
                          aria-label={`Deny ${approval.tool}`}
                          onClick={() => decide(approval, "deny")}
                        >
                          Deny
                        </button>
                      </td>
                    ) : null}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )
      ) : queue._tag === "failed" ? (
        <p role="alert">{queue.message}</p>
      ) : (
        <p role="status">Loading the approvals…</p>
      )}
      <button type="button" onClick={reload}>
        Refresh
      </button>
      {canDecide ? null : <p class="notice">Your role here reads the queue; Owners and Admins decide.</p>}
    </section>
  )
}
