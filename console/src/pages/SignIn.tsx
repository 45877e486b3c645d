/**
 * Signing in: paste a token (identity-provider JWT, impersonation token) or an API key (`cnd_…`); or
 * open the one-time link `candor serve` prints on the embedded default, whose code is exchanged at
 * once for an operator session (docs/console.md). The link leaves no trace in the tab's history: the
 * route is replaced before anything else is shown.
 *
 * A pasted credential is stored only once the API has accepted it for the console: the service-role
 * key is refused there (403, it must never reach a browser), so it is never kept in this tab.
 */
import { useEffect, useRef, useState } from "preact/hooks"
import type { OperatorSession as PublishedOperatorSession } from "../../../core/schema/Console.js"
import { api, ApiError } from "../Api.js"
import { replaceRoute } from "../Router.js"
import { credentialOf, signIn } from "../Session.js"

/** The published answer (core/schema/Console.ts); type-only. */
type OperatorSession = typeof PublishedOperatorSession.Type

export const SignInPage = ({
  onSignedIn,
  code,
  notice
}: {
  readonly onSignedIn: () => void
  readonly code?: string
  /** Why the tab was signed out, when it was (a stored credential the API now refuses). */
  readonly notice?: string
}) => {
  const [value, setValue] = useState("")
  const [error, setError] = useState<string | undefined>(notice)
  const [busy, setBusy] = useState(code !== undefined)
  const field = useRef<HTMLInputElement>(null)

  useEffect(() => {
    if (code === undefined) {
      field.current?.focus()
      return
    }
    // Off the address bar and out of history first, whatever the exchange answers.
    history.replaceState(null, "", "#/fleet")
    api<OperatorSession>("/v1/console/sessions", { method: "POST", body: { code }, anonymous: true }).then(
      (session) => {
        signIn(session.token)
        replaceRoute({ page: "fleet" })
        onSignedIn()
      },
      (failure: unknown) => {
        setBusy(false)
        setError(
          failure instanceof ApiError && failure.status === 401
            ? "This sign-in link was already used or has expired. Restart `candor serve` for a new one, or sign in with a token."
            : failure instanceof Error
              ? failure.message
              : String(failure)
        )
      }
    )
  }, [code])

  const submit = async (event: Event) => {
    event.preventDefault()
    setError(undefined)
    setBusy(true)
    try {
      // Checked before it is kept: a credential the console refuses (the service-role key) never
      // reaches sessionStorage.
      await api("/v1/console/session", { credential: credentialOf(value) })
      signIn(value)
      onSignedIn()
      if (code !== undefined) replaceRoute({ page: "fleet" })
    } catch (failure) {
      setError(
        failure instanceof ApiError && failure.status === 403
          ? `Not accepted: ${failure.message}`
          : failure instanceof Error
            ? failure.message
            : String(failure)
      )
    } finally {
      setBusy(false)
    }
  }

  return (
    <section class="sign-in" aria-labelledby="sign-in-title">
      <h1 id="sign-in-title">Sign in</h1>
      {code !== undefined && busy ? <p role="status">Signing in with the one-time link…</p> : null}
      <form onSubmit={submit}>
        <label for="credential">Token or API key</label>
        <input
          id="credential"
          ref={field}
          type="password"
          autoComplete="off"
          spellcheck={false}
          value={value}
          onInput={(event) => setValue(event.currentTarget.value)}
          aria-describedby="credential-help"
          required
        />
        <p id="credential-help" class="muted">
          A bearer token (your identity provider's, or one from <code>candor token</code>) or an API key (
          <code>cnd_…</code>). It stays in this tab only and is forgotten when you sign out or close it. On a local{" "}
          <code>candor serve</code>, open the one-time link it printed instead. The service-role key is not accepted: it
          must never reach a browser.
        </p>
        <button type="submit" class="primary" disabled={busy}>
          Sign in
        </button>
      </form>
      {error === undefined ? null : (
        <p role="alert" class="notice bad">
          {error}
        </p>
      )}
    </section>
  )
}
