/**
 * The chain Candor anchors to (docs/on-chain.md): a client of the CandorAnchor contract at
 * CANDOR_CHAIN_CONTRACT over CANDOR_CHAIN_RPC_URL, sending from CANDOR_CHAIN_PRIVATE_KEY's account
 * (ViemChain.ts). Anchoring is off unless all three are set; `AnchorChain.client` is then
 * `undefined` and `missing` names what to set.
 *
 * The RPC URL and the key are secrets (`Redacted`): an RPC URL often carries a provider's API key,
 * so neither is ever logged or put in an error.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type { Hex } from "viem"
import type { AnchorChainClient } from "./AnchorChainClient.js"

export interface ChainSettings {
  readonly rpcUrl: Option.Option<Redacted.Redacted>
  readonly privateKey: Option.Option<Redacted.Redacted>
  readonly contract: Option.Option<string>
  /** How often viem polls for a receipt (default 2 s; tests poll faster). */
  readonly pollingIntervalMs?: number | undefined
  /** How long a request waits for its receipt before answering `pending` (default 60 s). */
  readonly receiptTimeoutMs?: number | undefined
}

export class AnchorChain extends Context.Tag("candor/adapters/chain/AnchorChain")<
  AnchorChain,
  {
    readonly client: AnchorChainClient | undefined
    /** The variables still to set when `client` is undefined. */
    readonly missing: ReadonlyArray<string>
  }
>() {
  /** Anchoring off: every variable missing. */
  static readonly off: Layer.Layer<AnchorChain> = Layer.succeed(AnchorChain, {
    client: undefined,
    missing: ["CANDOR_CHAIN_RPC_URL", "CANDOR_CHAIN_PRIVATE_KEY", "CANDOR_CHAIN_CONTRACT"]
  })
}

const PRIVATE_KEY = /^0x[0-9a-fA-F]{64}$/
const ADDRESS = /^0x[0-9a-fA-F]{40}$/

/** Whether a key is a 32-byte hex private key (with or without 0x); the config reader checks it. */
export const isPrivateKey = (text: string): boolean => PRIVATE_KEY.test(text.startsWith("0x") ? text : `0x${text}`)
export const isAddress = (text: string): boolean => ADDRESS.test(text)

/** Anchoring as configured: on when the RPC URL, the key and the contract are all set. */
export const layer = (settings: ChainSettings): Layer.Layer<AnchorChain> =>
  Layer.effect(
    AnchorChain,
    Effect.gen(function* () {
      const missing = [
        ...(Option.isNone(settings.rpcUrl) ? ["CANDOR_CHAIN_RPC_URL"] : []),
        ...(Option.isNone(settings.privateKey) ? ["CANDOR_CHAIN_PRIVATE_KEY"] : []),
        ...(Option.isNone(settings.contract) ? ["CANDOR_CHAIN_CONTRACT"] : [])
      ]
      if (Option.isNone(settings.rpcUrl) || Option.isNone(settings.privateKey) || Option.isNone(settings.contract))
        return { client: undefined, missing }
      // viem (some 950 modules) loads only where anchoring is configured: every other start of
      // every role is a second or more faster without it (tsx hooks each module it loads).
      const { makeClient } = yield* Effect.promise(() => import("./ViemChain.js"))
      const client = yield* makeClient({
        rpcUrl: settings.rpcUrl.value,
        privateKey: settings.privateKey.value,
        contract: settings.contract.value as Hex,
        pollingIntervalMs: settings.pollingIntervalMs,
        receiptTimeoutMs: settings.receiptTimeoutMs
      })
      return { client, missing: [] }
    })
  )
