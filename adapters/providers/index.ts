/** The provider adapters' public surface, for the gateway. */
export type * from "./Provider.js"
export { anthropicAdapter } from "./Anthropic.js"
export { openaiAdapter } from "./OpenAi.js"
export { geminiAdapter } from "./Gemini.js"
export { adapterFor, isProviderName, PROVIDER_NAMES, providerAdapters } from "./Registry.js"
export { inferThinking } from "./Fallback.js"
export { keyHashesEqual, sha256Hex } from "./Identity.js"
export { createSseParser, DEFAULT_MAX_EVENT_CHARS, type SseEvent, type SseParser } from "./Sse.js"
