/**
 * The provider adapters the Inspector uses, by name. A tag rather than a direct import so that the
 * gateway depends only on the contract in `adapters/providers/Provider.ts`; the registry of real
 * adapters provides it, tests provide fakes.
 */
import * as Context from "effect/Context"
import type { ProviderAdapter, ProviderName } from "../providers/Provider.js"

export class ProviderAdapters extends Context.Tag("candor/adapters/gateway/ProviderAdapters")<
  ProviderAdapters,
  Readonly<Record<ProviderName, ProviderAdapter>>
>() {}
