/**
 * The console's shell: sign-in gate, who is signed in, navigation, theme switch, and the page the
 * hash route names. Pages live in pages/, one file each, loaded on first visit (Lazy.tsx); they talk
 * to the API through Api.ts only and read the caller from Caller.ts.
 */
import { useEffect, useState } from "preact/hooks"
import { ApiError, setUnauthorizedHandler } from "./Api.js"
import { type CallerInfo, CallerContext, loadCallerInfo } from "./Caller.js"
import { lazyPage } from "./Lazy.js"
import { SignInPage } from "./pages/SignIn.js"
import { hrefOf, type Route, useRoute } from "./Router.js"
import { currentCredential, signOut } from "./Session.js"
import { applyTheme, initialTheme, type Theme } from "./Theme.js"

const FleetPage = lazyPage(() => import("./pages/Fleet.js").then((m) => m.FleetPage))
const FeedPage = lazyPage(() => import("./pages/Feed.js").then((m) => m.FeedPage))
const AgentPage = lazyPage(() => import("./pages/Agent.js").then((m) => m.AgentPage))
const VerifyPage = lazyPage(() => import("./pages/Verify.js").then((m) => m.VerifyPage))
const WebhooksPage = lazyPage(() => import("./pages/Webhooks.js").then((m) => m.WebhooksPage))
const OrganizationPage = lazyPage(() => import("./pages/Organization.js").then((m) => m.OrganizationPage))

const NAV: ReadonlyArray<{ readonly route: Route; readonly label: string }> = [
  { route: { page: "fleet" }, label: "Fleet" },
  { route: { page: "feed" }, label: "Live feed" },
  { route: { page: "verify" }, label: "Verify" },
  { route: { page: "webhooks" }, label: "Webhooks" },
  { route: { page: "organization" }, label: "Organization" }
]

const PageOf = ({ route }: { readonly route: Route }) => {
  switch (route.page) {
    case "fleet":
    case "signIn":
      return <FleetPage />
    case "feed":
      return <FeedPage />
    case "agent":
      return <AgentPage agentId={route.agentId} />
    case "verify":
      // Keyed by the checkpoint: opening another one (or the empty form) mounts a fresh page, which
      // never shows the last certificate's result under the new address while it fetches its own.
      return (
        <VerifyPage
          key={route.checkpointId ?? ""}
          {...(route.checkpointId === undefined ? {} : { checkpointId: route.checkpointId })}
        />
      )
    case "webhooks":
      return <WebhooksPage />
    case "organization":
      return <OrganizationPage />
  }
}

const callerLabel = ({ caller }: CallerInfo): string => {
  switch (caller.kind) {
    case "operator":
      return "Local operator"
    case "api_key":
      return caller.role === null ? "API key" : `API key (${caller.role})`
    case "user":
      return `${caller.email ?? caller.user_id ?? "User"}${caller.read_only ? " (impersonation, read-only)" : ""}`
  }
}

type CallerState =
  | { readonly _tag: "loading" }
  | { readonly _tag: "ready"; readonly info: CallerInfo }
  | { readonly _tag: "failed"; readonly message: string }

export const App = () => {
  const route = useRoute()
  const [signedIn, setSignedIn] = useState(() => currentCredential() !== undefined)
  const [caller, setCaller] = useState<CallerState>({ _tag: "loading" })
  const [attempt, setAttempt] = useState(0)
  /** Why a stored credential was dropped (the API refuses it for the console), shown on the sign-in page. */
  const [refused, setRefused] = useState<string | undefined>(undefined)
  const [theme, setTheme] = useState<Theme>(initialTheme)
  useEffect(() => applyTheme(theme), [theme])
  useEffect(() => setUnauthorizedHandler(() => setSignedIn(false)), [])
  useEffect(() => {
    if (!signedIn) return
    let live = true
    setCaller({ _tag: "loading" })
    loadCallerInfo().then(
      (info) => live && setCaller({ _tag: "ready", info }),
      (error: unknown) => {
        if (!live || (error instanceof ApiError && error.status === 401)) return
        // A credential kept by an older console that the API now refuses here (the service-role
        // key): forgotten at once, and the sign-in page says why.
        if (error instanceof ApiError && error.status === 403) {
          signOut()
          setRefused(`Signed out: ${error.message}`)
          setSignedIn(false)
          return
        }
        setCaller({ _tag: "failed", message: error instanceof Error ? error.message : String(error) })
      }
    )
    return () => {
      live = false
    }
  }, [signedIn, attempt])

  const onSignedIn = () => {
    setRefused(undefined)
    setSignedIn(true)
    setAttempt((n) => n + 1)
  }
  // Verifying needs no credential: the page fetches only public keys and tree heads.
  const needsCredential = route.page !== "verify"
  const body = (() => {
    if (route.page === "signIn") return <SignInPage code={route.code} onSignedIn={onSignedIn} />
    if (!needsCredential) return <PageOf route={route} />
    if (!signedIn) return <SignInPage onSignedIn={onSignedIn} {...(refused === undefined ? {} : { notice: refused })} />
    if (caller._tag === "loading") return <p role="status">Loading…</p>
    if (caller._tag === "failed")
      return (
        <div role="alert" class="notice bad">
          <p>Could not reach the API: {caller.message}</p>
          <button type="button" onClick={() => setAttempt(attempt + 1)}>
            Try again
          </button>
        </div>
      )
    return (
      <CallerContext.Provider value={caller.info}>
        <PageOf route={route} />
      </CallerContext.Provider>
    )
  })()

  return (
    <div class="shell">
      <a
        class="skip"
        href="#main"
        onClick={(event) => (event.preventDefault(), document.getElementById("main")?.focus())}
      >
        Skip to content
      </a>
      <header class="top">
        <span class="brand">Candor</span>
        <nav aria-label="Main">
          {NAV.map(({ route: target, label }) => (
            <a
              href={hrefOf(target)}
              aria-current={
                target.page === route.page || (route.page === "agent" && target.page === "fleet") ? "page" : undefined
              }
            >
              {label}
            </a>
          ))}
        </nav>
        <span class="spacer" />
        {signedIn && caller._tag === "ready" ? (
          <span class="who" data-testid="caller">
            {callerLabel(caller.info)}
          </span>
        ) : null}
        <button
          type="button"
          onClick={() => setTheme(theme === "dark" ? "light" : "dark")}
          aria-label={theme === "dark" ? "Switch to the light theme" : "Switch to the dark theme"}
        >
          {theme === "dark" ? "Light" : "Dark"}
        </button>
        {signedIn ? (
          <button
            type="button"
            onClick={() => {
              signOut()
              setSignedIn(false)
            }}
          >
            Sign out
          </button>
        ) : null}
      </header>
      <main id="main" tabIndex={-1}>
        {body}
      </main>
    </div>
  )
}
