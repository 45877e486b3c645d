/**
 * The provider adapters by name. The gateway's own router (`adapters/gateway/GatewayServer.ts`) maps
 * `/anthropic/*`, `/openai/*`, `/gemini/*` to the provider's own `/*`.
 */
import { anthropicAdapter } from "./Anthropic.js"
import { geminiAdapter } from "./Gemini.js"
import { openaiAdapter } from "./OpenAi.js"
import type { ProviderAdapter, ProviderName } from "./Provider.js"

/** All adapters by name: the value the gateway's `ProviderAdapters` tag expects. */
export const providerAdapters: Readonly<Record<ProviderName, ProviderAdapter>> = {
  anthropic: anthropicAdapter,
  openai: openaiAdapter,
  gemini: geminiAdapter
}
