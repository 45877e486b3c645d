/**
 * On-chain anchoring for the API tests: an in-process chain (./InProcessChain.ts) served on
 * loopback, the CandorAnchor contract compiled with solc and deployed on it by a fresh key, and
 * `AnchorChain` configured on it exactly as `candor serve` would be (viem's `http` transport), with
 * fast receipt polling. `TestChain` gives the test the chain (to mine blocks, read what viem asked)
 * and what was deployed.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import * as AnchorChainLayer from "../../adapters/chain/AnchorChain.js"
import type { AnchorChain } from "../../adapters/chain/AnchorChain.js"
import { deployAnchorContract, type Deployment } from "../../adapters/chain/Deploy.js"
import { type InProcessChain, startInProcessChain } from "./InProcessChain.js"

export class TestChain extends Context.Tag("candor/test/support/TestChain")<
  TestChain,
  { readonly chain: InProcessChain; readonly deployment: Deployment; readonly privateKey: Redacted.Redacted }
>() {}

/** The chain, started and closed with the layer, with the contract deployed. */
export const testChainLayer: Layer.Layer<TestChain> = Layer.scoped(
  TestChain,
  Effect.gen(function* () {
    const key = generatePrivateKey()
    const chain = yield* Effect.acquireRelease(
      Effect.promise(() => startInProcessChain([privateKeyToAccount(key).address])),
      (started) => Effect.promise(() => started.close())
    )
    const privateKey = Redacted.make(key)
    const deployment = yield* Effect.orDie(
      deployAnchorContract({ rpcUrl: Redacted.make(chain.url), privateKey, pollingIntervalMs: 20 })
    )
    return { chain, deployment, privateKey }
  })
)

/** `AnchorChain` on the test chain, as CANDOR_CHAIN_* would configure it. */
export const anchorChainLayer: Layer.Layer<AnchorChain | TestChain> = Layer.unwrapEffect(
  Effect.map(TestChain, ({ chain, deployment, privateKey }) =>
    AnchorChainLayer.layer({
      rpcUrl: Option.some(Redacted.make(chain.url)),
      privateKey: Option.some(privateKey),
      contract: Option.some(deployment.address),
      pollingIntervalMs: 20,
      receiptTimeoutMs: 10_000
    })
  )
).pipe(Layer.provideMerge(testChainLayer))
