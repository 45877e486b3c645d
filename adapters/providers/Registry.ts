/**
 * Provider lookup by name. The gateway's routing by path prefix is its own (`adapters/gateway/GatewayServer.ts`).
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

export const PROVIDER_NAMES: ReadonlyArray<ProviderName> = ["anthropic", "openai", "gemini"]

export const adapterFor = (name: ProviderName): ProviderAdapter => providerAdapters[name]

export const isProviderName = (value: string): value is ProviderName => Object.hasOwn(providerAdapters, value)
