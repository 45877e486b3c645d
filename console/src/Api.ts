/**
 * The console's one way to the API: same origin, the signed-in credential, JSON in and out. Every
 * error answer of the API is `{"error": …}`; it becomes an `ApiError` whose message is that text, so
 * pages show what the server said.
 */
import { type Credential, credentialHeaders, currentCredential } from "./Session.js"

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string
  ) {
    super(message)
  }
}

/** Called when the API answers 401: the credential is gone or expired, so the shell shows sign-in. */
let onUnauthorized: () => void = () => {}
export const setUnauthorizedHandler = (handler: () => void): void => {
  onUnauthorized = handler
}

export interface RequestOptions {
  readonly method?: "GET" | "POST" | "PUT" | "PATCH" | "DELETE"
  readonly body?: unknown
  readonly signal?: AbortSignal
  /** Send without the credential (public routes: keys, tree heads). */
  readonly anonymous?: boolean
  /** Send this credential instead of the stored one (a sign-in, checked before it is stored). */
  readonly credential?: Credential
  /** A body that is not JSON (a policy in YAML), sent as it is with its content type. */
  readonly text?: { readonly contentType: string; readonly body: string }
}

const errorText = async (response: Response): Promise<string> => {
  const text = await response.text()
  try {
    const body = JSON.parse(text) as { error?: unknown }
    if (typeof body.error === "string") return body.error
  } catch {
    // not JSON: fall through to the status text
  }
  return text === "" ? `${response.status} ${response.statusText}` : text
}

/** Requests retried after a 429 at most this many times, each after the answer's Retry-After (capped). */
const RETRIES = 3
const MAX_RETRY_WAIT_MS = 5_000

/** The wait a 429 asks for: Retry-After in seconds, 1 s when absent or unreadable, at most the cap. */
const retryWaitMs = (response: Response): number => {
  const seconds = Number(response.headers.get("retry-after"))
  return Math.min(MAX_RETRY_WAIT_MS, Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : 1000)
}

const waitFor = (ms: number, signal: AbortSignal | undefined): Promise<void> =>
  new Promise((resolve) => {
    const timer = setTimeout(resolve, ms)
    signal?.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true })
  })

export const rawRequest = async (path: string, options: RequestOptions = {}): Promise<Response> => {
  const credential = options.anonymous === true ? undefined : (options.credential ?? currentCredential())
  const headers: Record<string, string> = { accept: "application/json" }
  if (credential !== undefined) Object.assign(headers, credentialHeaders(credential))
  let body: string | undefined
  if (options.text !== undefined) {
    headers["content-type"] = options.text.contentType
    body = options.text.body
  } else if (options.body !== undefined) {
    headers["content-type"] = "application/json"
    body = JSON.stringify(options.body)
  }
  const method = options.method ?? "GET"
  const send = () =>
    fetch(path, {
      method,
      headers,
      ...(body === undefined ? {} : { body }),
      ...(options.signal === undefined ? {} : { signal: options.signal })
    })
  let response = await send()
  // A page opens with several reads at once, and the Free plan's burst is ten requests: a request the
  // rate limit refused is sent again once the limit says, so a busy page fills in, and a save right
  // after it goes through, instead of showing "rate limited". Every 429 of the API refuses before
  // anything is done, so sending a write again cannot do it twice. A sign-in being checked is not
  // repeated: its 429 is the failed sign-ins' throttle, and the person decides.
  const repeatable = method === "GET" || (options.credential === undefined && options.anonymous !== true)
  for (let retry = 0; response.status === 429 && repeatable && retry < RETRIES; retry++) {
    await waitFor(retryWaitMs(response), options.signal)
    if (options.signal?.aborted === true) break
    response = await send()
  }
  // A stored credential refused: the tab signs out (a sign-in being checked has nothing to sign out of).
  if (response.status === 401 && credential !== undefined && options.credential === undefined) onUnauthorized()
  if (!response.ok) throw new ApiError(response.status, await errorText(response))
  return response
}

/** A JSON request; 204 answers resolve to undefined. */
export const api = async <T>(path: string, options: RequestOptions = {}): Promise<T> => {
  const response = await rawRequest(path, options)
  if (response.status === 204) return undefined as T
  return (await response.json()) as T
}
