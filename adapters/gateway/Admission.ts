/**
 * Who a gateway request is, and whether it may be sent on at all: the one place `GatewayInspector`
 * asks, on its synchronous and its effectful path alike, before anything else. In order:
 *
 * 1. the Candor headers (`CandorHeaders.ts`): 400 naming a malformed or repeated one;
 * 2. the credential (`Credentials.ts`): 400 for more than one, or one Candor cannot read;
 * 3. the agent and session ids (`AgentIdentity.ts`) and the key's own settings (its containment with
 *    scope `key`, a map lookup in `AgentState`'s local copy);
 * 4. an unknown key, or none, takes a token from its client's bucket (`UnknownKeys.ts`): 429 with
 *    `Retry-After` beyond it. A key is known once the provider has authenticated it (`noteAnswer`),
 *    or when Candor holds settings for its agent or for the key itself.
 *
 * The server asks the synchronous path and then, when that declines, the effectful one with the
 * same request object: the answer is kept per request object (a `WeakMap`), so a request takes one
 * token and hashes its key once.
 */
import type { ContainmentState } from "../../core/schema/Containment.js"
import { type AgentState, defaultKeySettings, defaultSettings } from "../bus/AgentState.js"
import type { IncomingHttpHeaders } from "node:http"
import { clientAddress, clientKey, noTrustedProxies, type TrustedProxies } from "../http/ClientAddress.js"
import type { ProviderAdapter, ProviderName } from "../providers/Provider.js"
import { AgentIds } from "./AgentIdentity.js"
import { readCandorHeaders } from "./CandorHeaders.js"
import { type CredentialRead, readCredential } from "./Credentials.js"
import { type GatewayResponse, type InspectedRequest, jsonResponse } from "./Inspector.js"
import { UnknownKeys, type UnknownKeyLimits } from "./UnknownKeys.js"

export interface Admitted {
  readonly _tag: "admitted"
  readonly adapter: ProviderAdapter
  /** SHA-256 of the credential: never leaves Candor. */
  readonly keyHash: string
  readonly agentId: string
  /** `x-candor-agent`, validated, when sent: the agent's default name (carried on its events). */
  readonly agentName: string | undefined
  readonly sessionId: string
  /** `x-transaction-id`, well formed, when sent. */
  readonly transactionId: string | undefined
  /** The key's containment (scope `key`), from the local copy; undefined: the key is not contained. */
  readonly keyContainment: ContainmentState | undefined
  readonly now: number
}

export type Admission =
  | Admitted
  /** No credential at all: forwarded untouched (the provider answers 401), no agent to attribute it to. */
  | { readonly _tag: "unattributed" }
  | { readonly _tag: "refused"; readonly response: GatewayResponse }

const UNATTRIBUTED: Admission = { _tag: "unattributed" }

const refused = (status: number, error: string, headers?: Readonly<Record<string, string>>): Admission => {
  const response = jsonResponse(status, { error })
  return {
    _tag: "refused",
    response: headers === undefined ? response : { ...response, headers: { ...response.headers, ...headers } }
  }
}

export interface AdmissionOptions {
  readonly adapters: Readonly<Record<ProviderName, ProviderAdapter>>
  readonly state: Pick<AgentState["Type"], "peek" | "peekKey">
  readonly limits: UnknownKeyLimits
  /**
   * The proxies in front of the gateway (`CANDOR_TRUSTED_PROXIES`), whose `X-Forwarded-For` names the
   * client an unknown key counts against. None: the socket's peer, as agents talk to the gateway directly.
   */
  readonly trustedProxies?: TrustedProxies
  readonly now: () => number
}

export const makeAdmission = ({
  adapters,
  limits,
  now,
  state,
  trustedProxies = noTrustedProxies
}: AdmissionOptions) => {
  const agentIds = new AgentIds()
  const unknownKeys = new UnknownKeys(limits)
  const decided = new WeakMap<InspectedRequest, Admission>()

  /** Takes a token for a request with a key Candor does not know (or none); a refusal when the bucket is empty. */
  const limited = (request: InspectedRequest, at: number): Admission | undefined => {
    const forwarded = request.headers["x-forwarded-for"] // Node joins repeated ones with ", "
    const address = clientAddress(
      request.client,
      Array.isArray(forwarded) ? forwarded.join(",") : forwarded,
      trustedProxies
    )
    const wait = unknownKeys.take(address === undefined ? "unknown" : clientKey(address), at)
    return wait === undefined
      ? undefined
      : refused(
          429,
          "too many requests with provider keys this gateway does not know, from this address; retry later",
          {
            "retry-after": String(wait)
          }
        )
  }

  /**
   * Credentials read before the body (`identifyBeforeBody`), by the request's raw header list, so
   * that `decide` hashes the key once: the server hands both the same `req.rawHeaders` array.
   */
  const credentials = new WeakMap<ReadonlyArray<string>, CredentialRead>()
  const credentialOf = (
    provider: ProviderName,
    headers: IncomingHttpHeaders,
    rawHeaders: ReadonlyArray<string> | undefined,
    url: URL
  ): CredentialRead => {
    const known = rawHeaders === undefined ? undefined : credentials.get(rawHeaders)
    if (known !== undefined) return known
    const read = readCredential(adapters[provider].credentials, headers, rawHeaders, url)
    if (rawHeaders !== undefined) credentials.set(rawHeaders, read)
    return read
  }

  const decide = (request: InspectedRequest): Admission => {
    const candor = readCandorHeaders(request.headers, request.rawHeaders)
    if (!candor.ok) return refused(400, candor.error)
    const adapter = adapters[request.provider]
    const credential = credentialOf(request.provider, request.headers, request.rawHeaders, request.url)
    if (credential._tag === "refused") return refused(400, credential.error)
    const at = now()
    if (credential._tag === "none") return limited(request, at) ?? UNATTRIBUTED
    const { keyHash } = credential
    const ids = agentIds.lookup(keyHash, candor.headers.agent, at)
    const key = state.peekKey(keyHash)
    const known =
      unknownKeys.isKnown(keyHash) ||
      key !== defaultKeySettings ||
      (state.peek !== undefined && state.peek(ids.agentId) !== defaultSettings)
    if (!known) {
      const refusal = limited(request, at)
      if (refusal !== undefined) return refusal
    }
    return {
      _tag: "admitted",
      adapter,
      keyHash,
      agentId: ids.agentId,
      agentName: candor.headers.agent,
      sessionId: candor.headers.session ?? ids.sessionId,
      transactionId: candor.headers.transaction,
      keyContainment: key.containment,
      now: at
    }
  }

  return {
    /** The request's admission, decided once per request object. */
    admit: (request: InspectedRequest): Admission => {
      let admission = decided.get(request)
      if (admission === undefined) decided.set(request, (admission = decide(request)))
      return admission
    },
    /**
     * Before the body is read: the credential's hash and the agent it names, for the bytes-in-flight
     * budget and the tool screen; undefined when there is no single readable credential or a Candor
     * header is malformed (`admit` refuses or leaves such a request unattributed once the body is in).
     * Takes no token and refuses nothing.
     */
    identifyBeforeBody: (
      provider: ProviderName,
      url: URL,
      headers: IncomingHttpHeaders,
      rawHeaders: ReadonlyArray<string>
    ): { readonly keyHash: string; readonly agentId: string } | undefined => {
      const candor = readCandorHeaders(headers, rawHeaders)
      if (!candor.ok) return undefined
      const credential = credentialOf(provider, headers, rawHeaders, url)
      if (credential._tag !== "one") return undefined
      return {
        keyHash: credential.keyHash,
        agentId: agentIds.lookup(credential.keyHash, candor.headers.agent, now()).agentId
      }
    },
    /** The provider answered a request with this key (`UnknownKeys.noteAnswer`). */
    noteAnswer: (keyHash: string, status: number): void => unknownKeys.noteAnswer(keyHash, status)
  }
}
