/**
 * The signed-in credential: a bearer token (identity-provider JWT, impersonation or console session
 * token) or an API key (`cnd_…`). Kept in sessionStorage, so it leaves with the tab and is never
 * written to disk by the page; signing out forgets it. Never the service-role key: a credential is
 * stored only after the API has accepted it for the console (GET /v1/console/session), which it
 * refuses for that key (docs/console.md, "Signing in").
 */
const KEY = "candor.credential"

export interface Credential {
  readonly value: string
}

export const currentCredential = (): Credential | undefined => {
  const value = sessionStorage.getItem(KEY)
  return value === null || value === "" ? undefined : { value }
}

export const signIn = (value: string): void => sessionStorage.setItem(KEY, value.trim())

/** A credential not kept yet: checked with the API before `signIn` stores it. */
export const credentialOf = (value: string): Credential => ({ value: value.trim() })

export const signOut = (): void => sessionStorage.removeItem(KEY)

/** The headers that carry a credential: API keys go in `x-api-key`, everything else is a bearer token. */
export const credentialHeaders = (credential: Credential): Record<string, string> =>
  credential.value.startsWith("cnd_")
    ? { "x-api-key": credential.value }
    : { authorization: `Bearer ${credential.value}` }
