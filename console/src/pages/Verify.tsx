/**
 * Verify in the browser (`#/verify`, `#/verify/<checkpoint_id>`): a certificate dropped, pasted, chosen
 * as a file, or fetched by checkpoint id (`GET /v1/checkpoints/{id}/certificate`), checked here with
 * core/'s own verifiers (../verify/Verifier.ts, loaded on demand). The page asks the server only for
 * public data: the certificate when opened by id, the published keys and the signed tree head; the
 * certificate is never sent. No credential is needed (the requests are anonymous).
 */
import { useEffect, useState } from "preact/hooks"
import { PROTOCOL_DISCLAIMER } from "../../../core/schema/Disclaimer.js"
import { api, ApiError } from "../Api.js"
import { hrefOf } from "../Router.js"
import type { BrowserVerification, PublishedKey } from "../verify/Verifier.js"

type State =
  | { readonly kind: "idle" }
  | { readonly kind: "checking" }
  | { readonly kind: "done"; readonly result: BrowserVerification }
  | { readonly kind: "error"; readonly message: string }

const reasonOf = (error: unknown): string =>
  error instanceof ApiError
    ? `${error.status}: ${error.message}`
    : error instanceof Error
      ? error.message
      : String(error)

const sources = {
  keys: async () => (await api<{ keys: ReadonlyArray<PublishedKey> }>("/v1/keys", { anonymous: true })).keys,
  treeHead: async (checkpointId: string, treeSize: number) =>
    (
      await api<{ signed_tree_head: string }>(
        `/v1/checkpoints/${encodeURIComponent(checkpointId)}/inclusion-proof?tree_size=${treeSize}`,
        { anonymous: true }
      )
    ).signed_tree_head
}

const check = async (text: string): Promise<State> => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    return {
      kind: "error",
      message: "This is not JSON: paste a certificate as GET /v1/checkpoints/{id}/certificate answers it."
    }
  }
  const { verifyInBrowser } = await import("../verify/Verifier.js")
  return { kind: "done", result: await verifyInBrowser(json, sources) }
}

const STATUS_TEXT = { pass: "passed", fail: "FAILED", absent: "none", skipped: "not checked" } as const

const Report = ({ result }: { readonly result: BrowserVerification }) => {
  const failing = result.layers.filter((layer) => layer.status === "fail")
  return (
    <section aria-labelledby="verify-result" data-testid="verify-result" data-valid={String(result.valid)}>
      <h2 id="verify-result" class={result.valid ? "verdict-ok" : "verdict-bad"} role="status">
        {result.valid
          ? "Valid: every layer verifies"
          : `Invalid: ${failing.map((layer) => layer.label.toLowerCase()).join(", ") || "see below"}`}
      </h2>
      {result.summary.checkpointId === undefined ? null : (
        <p>
          Checkpoint <code>{result.summary.checkpointId}</code>
          {result.summary.agentId === undefined ? null : (
            <>
              {" "}
              of agent <a href={hrefOf({ page: "agent", agentId: result.summary.agentId })}>{result.summary.agentId}</a>
            </>
          )}
          {result.summary.verdict === undefined ? null : <>, verdict {result.summary.verdict}</>}
        </p>
      )}
      <ol class="layers">
        {result.layers.map((layer) => (
          <li data-testid={`layer-${layer.key}`} data-status={layer.status} class={`layer layer-${layer.status}`}>
            <span class="layer-mark" aria-hidden="true">
              {layer.status === "pass" ? "✓" : layer.status === "fail" ? "✗" : "–"}
            </span>
            <strong>{layer.label}</strong>: {STATUS_TEXT[layer.status]}
            <div class="layer-detail">{layer.detail}</div>
          </li>
        ))}
      </ol>
    </section>
  )
}

export const VerifyPage = ({ checkpointId }: { readonly checkpointId?: string }) => {
  const [text, setText] = useState("")
  const [state, setState] = useState<State>({ kind: "idle" })
  const [dragging, setDragging] = useState(false)

  const run = (source: string) => {
    setText(source)
    setState({ kind: "checking" })
    check(source).then(setState, (error: unknown) => setState({ kind: "error", message: reasonOf(error) }))
  }

  useEffect(() => {
    if (checkpointId === undefined) return
    setState({ kind: "checking" })
    api<unknown>(`/v1/checkpoints/${encodeURIComponent(checkpointId)}/certificate`, { anonymous: true }).then(
      (certificate) => run(JSON.stringify(certificate, null, 2)),
      (error: unknown) =>
        setState({ kind: "error", message: `The certificate could not be fetched: ${reasonOf(error)}` })
    )
  }, [checkpointId])

  const readFile = (file: File | undefined) => {
    if (file !== undefined)
      file.text().then(run, (error: unknown) => setState({ kind: "error", message: reasonOf(error) }))
  }

  return (
    <div class="verify-page">
      <h1>Verify a certificate</h1>
      <p class="muted">
        Checked in this browser with Candor's own verifiers: the signature against the published keys, the chain link,
        the Merkle inclusion against the signed tree head, the verdict rule and the verdict proof. Only the public keys
        and the tree head are fetched; the certificate is not sent anywhere.
      </p>
      <p class="disclaimer" data-testid="disclaimer">
        {PROTOCOL_DISCLAIMER}
      </p>
      <form
        onSubmit={(event) => {
          event.preventDefault()
          run(text)
        }}
      >
        <div
          class={dragging ? "dropzone dropzone-active" : "dropzone"}
          onDragOver={(event) => {
            event.preventDefault()
            setDragging(true)
          }}
          onDragLeave={() => setDragging(false)}
          onDrop={(event) => {
            event.preventDefault()
            setDragging(false)
            readFile(event.dataTransfer?.files[0])
          }}
        >
          <label for="certificate-json">Certificate JSON (paste, or drop a file here)</label>
          <textarea
            id="certificate-json"
            data-testid="certificate-input"
            rows={14}
            spellcheck={false}
            value={text}
            onInput={(event) => setText(event.currentTarget.value)}
          />
        </div>
        <div class="row">
          <button type="submit" data-testid="verify-button" disabled={state.kind === "checking" || text.trim() === ""}>
            {state.kind === "checking" ? "Checking…" : "Verify"}
          </button>
          <label class="file">
            Open a file
            <input
              type="file"
              accept="application/json,.json"
              onChange={(event) => readFile(event.currentTarget.files?.[0])}
            />
          </label>
        </div>
      </form>
      <div aria-live="polite">
        {state.kind === "error" ? (
          <p role="alert" class="error" data-testid="verify-error">
            {state.message}
          </p>
        ) : state.kind === "done" ? (
          <Report result={state.result} />
        ) : null}
      </div>
    </div>
  )
}
