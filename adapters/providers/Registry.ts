/**
 * Provider lookup: by name, and from the gateway path (`/anthropic/*`, `/openai/*`, `/gemini/*`
 * map to the provider's own `/*`). Matching is on whole path segments, so `/openai-x/…` is no match.
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

export interface ProviderRoute {
  readonly provider: ProviderName
  /** The path to request upstream: always starts with `/`. */
  readonly upstreamPath: string
}

export const providerFromPath = (pathname: string): ProviderRoute | undefined => {
  if (!pathname.startsWith("/")) return undefined
  const slash = pathname.indexOf("/", 1)
  const head = slash < 0 ? pathname.slice(1) : pathname.slice(1, slash)
  if (!isProviderName(head)) return undefined
  return { provider: head, upstreamPath: slash < 0 ? "/" : pathname.slice(slash) }
}
