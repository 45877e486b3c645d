/**
 * The signed-in credential: a bearer token (identity-provider JWT, impersonation or console session
 * token, the service-role key) or an API key (`cnd_…`). Kept in sessionStorage, so it leaves with the
 * tab and is never written to disk by the page; signing out forgets it.
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

export const signOut = (): void => sessionStorage.removeItem(KEY)

/** The headers that carry a credential: API keys go in `x-api-key`, everything else is a bearer token. */
export const credentialHeaders = (credential: Credential): Record<string, string> =>
  credential.value.startsWith("cnd_")
    ? { "x-api-key": credential.value }
    : { authorization: `Bearer ${credential.value}` }
