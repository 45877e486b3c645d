/**
 * The console's shell: sign-in gate, navigation, theme switch, and the page the hash route names.
 * Pages live in pages/, one file each; they talk to the API through Api.ts only.
 */
import { useEffect, useState } from "preact/hooks"
import { setUnauthorizedHandler } from "./Api.js"
import { AgentPage } from "./pages/Agent.js"
import { FeedPage } from "./pages/Feed.js"
import { FleetPage } from "./pages/Fleet.js"
import { OrganizationPage } from "./pages/Organization.js"
import { SignInPage } from "./pages/SignIn.js"
import { VerifyPage } from "./pages/Verify.js"
import { WebhooksPage } from "./pages/Webhooks.js"
import { hrefOf, type Route, useRoute } from "./Router.js"
import { currentCredential, signOut } from "./Session.js"
import { applyTheme, initialTheme, type Theme } from "./Theme.js"

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
      return <FleetPage />
    case "feed":
      return <FeedPage />
    case "agent":
      return <AgentPage agentId={route.agentId} />
    case "verify":
      return <VerifyPage {...(route.checkpointId === undefined ? {} : { checkpointId: route.checkpointId })} />
    case "webhooks":
      return <WebhooksPage />
    case "organization":
      return <OrganizationPage />
  }
}

export const App = () => {
  const route = useRoute()
  const [signedIn, setSignedIn] = useState(() => currentCredential() !== undefined)
  const [theme, setTheme] = useState<Theme>(initialTheme)
  useEffect(() => applyTheme(theme), [theme])
  useEffect(() => setUnauthorizedHandler(() => setSignedIn(false)), [])

  // Verifying needs no credential: the page fetches only public keys and tree heads.
  const needsCredential = route.page !== "verify"
  return (
    <div class="shell">
      <a class="skip" href="#main">
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
        {needsCredential && !signedIn ? <SignInPage onSignedIn={() => setSignedIn(true)} /> : <PageOf route={route} />}
      </main>
    </div>
  )
}
