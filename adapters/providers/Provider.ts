/**
 * What the gateway needs from each LLM provider's wire format. One adapter per provider
 * (`Anthropic.ts`, `OpenAi.ts`, `Gemini.ts`), all pure: they read bytes and JSON, they never do I/O.
 *
 * The gateway forwards the caller's bytes unchanged; adapters only read copies, except
 * `injectNudge`, which the gateway applies to the request body when a nudge is pending.
 */

export type ProviderName = "anthropic" | "openai" | "gemini"

/** Where the reasoning came from, with its extraction confidence (after each source below). */
export type ThinkingSource =
  | "thinking_blocks" // Anthropic thinking blocks: 1.0
  | "reasoning_content" // OpenAI Chat Completions reasoning_content: 0.9
  | "reasoning_summary" // OpenAI Responses API reasoning items and summary events: 0.9, partial
  | "thought_parts" // Gemini parts with thought: true: 0.9
  | "fallback" // regex inference from the visible text: 0.3

export interface ExtractedThinking {
  /** The reasoning text: hashed and judged, then dropped; never stored, logged or published. */
  readonly text: string
  readonly source: ThinkingSource
  readonly confidence: number
}

/** A tool call the model made: it becomes the AP-Trace action. */
export interface ExtractedToolCall {
  readonly name: string
  /** The arguments as the provider sent them (parsed JSON where possible); not persisted. */
  readonly arguments: unknown
}

export interface Extraction {
  /** `undefined` when the response exposes no reasoning (a synthetic `clear` follows). */
  readonly thinking: ExtractedThinking | undefined
  /** True when the response carried only encrypted/redacted reasoning (unsupported, tracing only). */
  readonly redactedThinking: boolean
  readonly toolCalls: ReadonlyArray<ExtractedToolCall>
  /** The visible answer text, for the regex fallback and the optional output analysis only; never stored. */
  readonly outputText: string
  /** The model the provider reports, if any. */
  readonly model: string | undefined
  readonly stopReason: string | undefined
  /** The provider's own error object, if the response was one. */
  readonly providerError: string | undefined
  /** The tokens the provider says it read and wrote, when the answer says (traces only: `gen_ai.usage.*`). */
  readonly usage?: TokenUsage | undefined
}

export interface TokenUsage {
  readonly inputTokens: number | undefined
  readonly outputTokens: number | undefined
}

/** What a stream yielded: an `Extraction` plus how the stream ended and what was skipped. */
export interface StreamExtraction extends Extraction {
  /** False when the stream ended before its terminal event (truncated, disconnected). */
  readonly complete: boolean
  /**
   * Events whose JSON did not parse: skipped, never thrown. Optional so that extractors written
   * against the first version of this contract (tests' fakes) still type-check; ours always set it.
   */
  readonly malformedEvents?: number
  /** Events dropped for exceeding the parser's size limit (memory stays bounded); optional likewise. */
  readonly oversizedEvents?: number
}

/** Incremental extraction over a response stream: chunks arrive split at any byte. */
export interface StreamExtractor {
  readonly push: (chunk: Uint8Array) => void
  /** Everything seen so far; `complete` is false when the stream ended before its terminal event. */
  readonly finish: () => StreamExtraction
}

/** One tool result a request hands the model (read by `ToolResults.ts`). */
export interface ToolResult {
  /** The result's text: judged (its first 64 KiB), hashed, then dropped; never stored or logged. */
  readonly text: string
  /** The tool it answers, when the request names it; else `undefined`. */
  readonly toolName: string | undefined
}

/** A tool the request offers the model, by the name the model would call it. */
export interface DeclaredTool {
  readonly name: string
}

export interface RequestInfo {
  readonly model: string | undefined
  readonly stream: boolean
}

/**
 * What the adapters read of the request's headers: a fetch `Headers` satisfies it, and so does the
 * gateway's view over Node's parsed headers, which costs no copy per request.
 */
export type HeaderLookup = Pick<Headers, "get">

/**
 * Where a provider reads the caller's credential: a header (lowercase name), its value the key or,
 * with `bearer`, `Bearer <token>`; or a query parameter. A request must carry at most one, once
 * (adapters/gateway/Credentials.ts): a provider given two picks one by rules of its own, and the
 * gateway would name the agent after the other.
 */
export type CredentialCarrier = { readonly header: string; readonly bearer?: true } | { readonly query: string }

export interface ProviderAdapter {
  readonly name: ProviderName
  /** Every place this provider takes a credential from, in the order it prefers them. */
  readonly credentials: ReadonlyArray<CredentialCarrier>
  /**
   * SHA-256 (hex) of the provider key the caller sent, from the first of `credentials` present, or
   * `undefined` when there is none. The key itself is never kept. The gateway reads the credential
   * more strictly (exactly one, readable: adapters/gateway/Credentials.ts) over the same carriers.
   */
  readonly keyHash: (headers: HeaderLookup, url: URL) => string | undefined
  /** What the request asks for: the model and whether the answer streams (body, URL, or both). */
  readonly requestInfo: (body: unknown, url: URL) => RequestInfo
  /**
   * The tools the request body offers the model, in this provider's own format, in order; `[]`
   * when it offers none or is not a request this adapter knows. Built-in tools without a name are
   * named by their type (or key), so a policy can still match them.
   */
  readonly declaredTools: (body: unknown) => ReadonlyArray<DeclaredTool>
  readonly extractJson: (body: unknown) => Extraction
  readonly streamExtractor: () => StreamExtractor
  /**
   * The request body with `nudge` added to the system prompt in this provider's own format (a new
   * object; the input is not changed). `undefined` when the body is not a request this adapter knows.
   */
  readonly injectNudge: (body: unknown, nudge: string) => unknown | undefined
  /**
   * The tool results the request body hands the model (`ToolResults.ts`), in order; `[]` when none.
   * Optional so that adapters written against the first version of this contract (tests' fakes)
   * still type-check: one without it has its requests' tool results read by nobody. Ours all set it.
   */
  readonly toolResults?: (body: unknown) => ReadonlyArray<ToolResult>
  /** The cheap check on a plain body: false when it certainly carries no tool result (no parse then). */
  readonly mayCarryToolResults?: (bytes: Uint8Array) => boolean
}
