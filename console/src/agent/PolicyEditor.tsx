/**
 * The agent's tool policy as YAML (docs/api.md, "Policies"). Saving PUTs the text as
 * `application/yaml`; the API validates it (YAML syntax with line and column, then the schema with
 * each field's path) and stores nothing on a 400, so a PUT is the validation: its error is shown
 * and, when it names a line, that line is marked in the editor.
 */
import { useEffect, useRef, useState } from "preact/hooks"
import { api, ApiError } from "../Api.js"
import type { PolicyEditorHandle } from "./Editor.js"

const EXAMPLE = `# No policy yet. An example (schema version 1.0, docs/formats.md "Tool policy"):
forbidden:
  - pattern: "shell_*"
    reason: no shells
`

interface StoredPolicy {
  readonly version: number
  readonly policy: unknown
  readonly policy_hash: string
  readonly updated_at: string
}

const putYaml = (path: string, text: string): Promise<StoredPolicy> =>
  api<StoredPolicy>(path, { method: "PUT", text: { contentType: "application/yaml", body: text } })

/** The line an API error names (`line 3, column 7: …`), if any. */
export const errorLineOf = (message: string): number | null => {
  const match = /\bline (\d+)/.exec(message)
  return match === null ? null : Number(match[1])
}

export const PolicyEditor = ({ agentId, canWrite }: { readonly agentId: string; readonly canWrite: boolean }) => {
  const box = useRef<HTMLDivElement>(null)
  const editor = useRef<PolicyEditorHandle | undefined>(undefined)
  const [stored, setStored] = useState<StoredPolicy | null | undefined>(undefined)
  const [message, setMessage] = useState<{ readonly ok: boolean; readonly text: string } | undefined>(undefined)
  const [saving, setSaving] = useState(false)
  const path = `/v1/agents/${encodeURIComponent(agentId)}/policy`

  const save = () => {
    const handle = editor.current
    if (handle === undefined || !canWrite) return
    setSaving(true)
    putYaml(path, handle.text()).then(
      (policy) => {
        setSaving(false)
        setStored(policy)
        handle.markLine(null)
        setMessage({ ok: true, text: `Saved as version ${policy.version}.` })
      },
      (error: unknown) => {
        setSaving(false)
        const text = error instanceof Error ? error.message : String(error)
        handle.markLine(errorLineOf(text))
        setMessage({ ok: false, text })
      }
    )
  }
  const saveRef = useRef(save)
  saveRef.current = save

  useEffect(() => {
    let cancelled = false
    Promise.all([
      // No policy yet: 404, the example is shown.
      api<StoredPolicy>(path).catch((error: unknown) =>
        error instanceof ApiError && error.status === 404 ? null : Promise.reject(error)
      ),
      import("./Editor.js")
    ]).then(
      ([policy, { mountEditor, toYaml }]) => {
        if (cancelled || box.current === null) return
        setStored(policy)
        editor.current = mountEditor(box.current, policy === null ? EXAMPLE : toYaml(policy.policy), {
          readOnly: !canWrite,
          label: "Tool policy (YAML)",
          onSave: () => saveRef.current()
        })
        box.current.dataset["ready"] = "true"
      },
      (error: unknown) => setMessage({ ok: false, text: `The policy could not be loaded: ${String(error)}` })
    )
    return () => {
      cancelled = true
      editor.current?.destroy()
      editor.current = undefined
    }
  }, [agentId, canWrite])

  return (
    <section aria-labelledby="policy-title" class="panel">
      <h2 id="policy-title">Tool policy</h2>
      <p class="muted">
        {stored === undefined
          ? "Loading…"
          : stored === null
            ? "No policy in force for this agent (its organization's may apply)."
            : `Version ${stored.version}, updated ${new Date(stored.updated_at).toLocaleString()}, hash ${stored.policy_hash.slice(0, 12)}…`}
      </p>
      <div ref={box} class="editor" data-testid="policy-editor" />
      <div class="row">
        {canWrite ? (
          <button
            type="button"
            class="primary"
            onClick={save}
            disabled={saving || stored === undefined}
            data-testid="policy-save"
          >
            {saving ? "Saving…" : "Validate and save"}
          </button>
        ) : (
          <span class="muted">Read-only: changing the policy needs Admin or Owner.</span>
        )}
      </div>
      <div aria-live="polite">
        {message === undefined ? null : (
          <p role={message.ok ? "status" : "alert"} class={message.ok ? "ok" : "error"} data-testid="policy-message">
            {message.text}
          </p>
        )}
      </div>
    </section>
  )
}
