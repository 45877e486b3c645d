/**
 * The exchange the request path hands the server as its opaque `context` (Inspector.ts), and gets
 * back on the response path: who the agent is, its settings at the time, and what the tool policy
 * said of the request.
 */
import type { AgentSettings } from "../bus/AgentState.js"
import type { ProviderAdapter } from "../providers/Provider.js"
import type { ExchangeTrace } from "./ExchangeSpans.js"
import type { RequestPolicy } from "./RequestDecision.js"

/** What the request path learned, handed back on the response path. */
export interface Exchange {
  readonly adapter: ProviderAdapter
  readonly agentId: string
  /** `x-candor-agent`, validated, when sent. */
  readonly agentName: string | undefined
  readonly sessionId: string
  /**
   * The provider credential's SHA-256: the provider's answer to it tells whether the key is known
   * (`Admission.ts`), and it is the fairness key of an agent outside any organization.
   */
  readonly keyHash: string
  readonly settings: AgentSettings
  /** The active policy and what `X-Policy-Verdict` said; undefined without an active policy. */
  readonly policy: RequestPolicy | undefined
  /** What tracing notes of the exchange (ExchangeSpans.ts); undefined when the process exports no traces. */
  readonly trace: ExchangeTrace | undefined
}
