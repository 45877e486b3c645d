/** A secret shown once (a webhook signing secret): selectable, copyable, with the warning that it will not be shown again. */
import { useState } from "preact/hooks"

export const SecretOnce = ({
  label,
  value,
  onDone
}: {
  readonly label: string
  readonly value: string
  readonly onDone: () => void
}) => {
  const [copied, setCopied] = useState(false)
  return (
    <div class="notice secret" role="alert" aria-live="assertive">
      <p>
        <strong>{label}</strong>: copy it now, it will not be shown again.
      </p>
      <p>
        <code class="mono" data-testid="secret-value">
          {value}
        </code>
      </p>
      <button
        type="button"
        onClick={() =>
          navigator.clipboard?.writeText(value).then(
            () => setCopied(true),
            () => setCopied(false)
          )
        }
      >
        {copied ? "Copied" : "Copy"}
      </button>{" "}
      <button type="button" onClick={onDone}>
        I have stored it
      </button>
    </div>
  )
}
