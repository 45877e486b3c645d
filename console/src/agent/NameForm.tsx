/**
 * The agent's name (PATCH /v1/agents/{id}, docs/api.md): a text field and Save for those who may
 * write (Owner or Admin); an empty field removes the name, so the gateway's `x-candor-agent` label
 * shows again. The API checks the name (1 to 100 characters, no control characters); its 400 is
 * shown as it says. The answer is the agent's row, handed to the page.
 */
import { useState } from "preact/hooks"
import { api } from "../Api.js"
import type { NamedAgent } from "../fleet/Names.js"

export const NameForm = ({
  agent,
  canWrite,
  onRenamed
}: {
  readonly agent: NamedAgent
  readonly canWrite: boolean
  readonly onRenamed: (agent: NamedAgent) => void
}) => {
  const [text, setText] = useState(agent.display_name ?? "")
  const [saving, setSaving] = useState(false)
  const [message, setMessage] = useState<{ readonly ok: boolean; readonly text: string } | undefined>(undefined)

  const save = () => {
    setSaving(true)
    const trimmed = text.trim()
    api<NamedAgent>(`/v1/agents/${encodeURIComponent(agent.agent_id)}`, {
      method: "PATCH",
      body: { display_name: trimmed === "" ? null : trimmed }
    }).then(
      (answer) => {
        setSaving(false)
        setText(answer.display_name ?? "")
        setMessage({ ok: true, text: trimmed === "" ? "Name removed." : "Name saved." })
        onRenamed(answer)
      },
      (e: unknown) => {
        setSaving(false)
        setMessage({ ok: false, text: e instanceof Error ? e.message : String(e) })
      }
    )
  }

  return (
    <form
      class="row"
      aria-label="Agent name"
      onSubmit={(e) => {
        e.preventDefault()
        if (canWrite && !saving) save()
      }}
    >
      <label>
        Name{canWrite ? "" : " (Admin or Owner to change)"}{" "}
        <input
          type="text"
          maxLength={100}
          value={text}
          disabled={!canWrite}
          placeholder="the gateway's label, or none"
          data-testid="agent-name-input"
          onInput={(e) => setText(e.currentTarget.value)}
        />
      </label>
      <button type="submit" disabled={!canWrite || saving} data-testid="agent-name-save">
        Save name
      </button>
      {message === undefined ? null : (
        <span role={message.ok ? "status" : "alert"} class={message.ok ? "ok" : "error"}>
          {message.text}
        </span>
      )}
    </form>
  )
}
